"""pycuda.driver's CUDA arrays and 2D/3D copies without a GPU: how the ``*_to_array``
helpers shape the array and the copy (recording stand-ins for ``Array`` and the copies),
and how a copy's sides are assembled for the native call."""
from __future__ import annotations

import unittest

import numpy as np

from nodriver import import_without_driver

drv, arrays = import_without_driver("pycuda.driver", "pycuda._arrays")


class RecordedArray:
    made = []

    def __init__(self, descriptor):
        self.descriptor = descriptor
        self._native = "native-array"
        RecordedArray.made.append(self)


class RecordedCopy:
    done = []

    def __init__(self):
        self.fields = {}

    def __setattr__(self, name, value):
        if name == "fields":
            object.__setattr__(self, name, value)
        else:
            self.fields[name] = value

    def set_src_host(self, a):
        self.fields["src"] = ("host", a)

    def set_src_device(self, p):
        self.fields["src"] = ("device", p)

    def set_dst_array(self, a):
        self.fields["dst"] = ("array", a)

    def __call__(self, *args):
        RecordedCopy.done.append(self)


class Recorded3D(RecordedCopy):
    kind = "3d"


class Recorded2D(RecordedCopy):
    kind = "2d"


class ToArray(unittest.TestCase):
    def setUp(self):
        self.saved = (arrays.Array, arrays.Memcpy2D, arrays.Memcpy3D)
        arrays.Array, arrays.Memcpy2D, arrays.Memcpy3D = RecordedArray, Recorded2D, Recorded3D
        RecordedArray.made.clear()
        RecordedCopy.done.clear()

    def tearDown(self):
        arrays.Array, arrays.Memcpy2D, arrays.Memcpy3D = self.saved

    def last(self):
        a, c = RecordedArray.made[-1], RecordedCopy.done[-1]
        d = a.descriptor
        return d, c

    def test_c_order_2d(self):
        arrays.np_to_array(np.zeros((3, 5), np.float32), "C")
        d, c = self.last()
        self.assertEqual((d.width, d.height, d.format, d.num_channels),
                         (5, 3, drv.array_format.FLOAT, 1))
        self.assertEqual(c.kind, "2d")
        self.assertEqual((c.fields["width_in_bytes"], c.fields["src_pitch"],
                          c.fields["height"]), (20, 20, 3))
        self.assertEqual(c.fields["src"][0], "host")

    def test_f_order_rows_are_the_first_dimension(self):
        arrays.np_to_array(np.zeros((3, 5), np.int16, order="F"), "F")
        d, c = self.last()
        self.assertEqual((d.width, d.height), (3, 5))
        self.assertEqual(c.fields["width_in_bytes"], 6)

    def test_3d_and_surfaces(self):
        arrays.np_to_array(np.zeros((2, 3, 4), np.uint8), "C")
        d, c = self.last()
        self.assertEqual((d.width, d.height, d.depth, c.kind), (4, 3, 2, "3d"))
        self.assertEqual(c.fields["depth"], 2)
        arrays.np_to_array(np.zeros((3, 4), np.uint8), "C", allowSurfaceBind=True)
        d, c = self.last()
        self.assertEqual((d.depth, c.kind), (1, "3d"))
        self.assertEqual(d.flags, drv.array3d_flags.LAYERED | drv.array3d_flags.SURFACE_LDST)

    def test_wide_elements_as_int32_channels(self):
        for dt, n in [(np.float64, 2), (np.complex64, 2), (np.complex128, 4)]:
            arrays.np_to_array(np.zeros((2, 2), dt), "C")
            d, c = self.last()
            self.assertEqual((d.format, d.num_channels), (drv.array_format.SIGNED_INT32, n))
            self.assertEqual(c.fields["width_in_bytes"], 2 * np.dtype(dt).itemsize)
        with self.assertRaises(TypeError):
            arrays.matrix_to_array(np.zeros((2, 2)), "C")
        arrays.matrix_to_array(np.zeros((2, 2)), "C", allow_double_hack=True)

    def test_multichannel(self):
        arrays.make_multichannel_2d_array(np.zeros((3, 5, 4), np.float32), "C")
        d, c = self.last()
        self.assertEqual((d.width, d.height, d.num_channels), (5, 3, 4))
        self.assertEqual(c.fields["width_in_bytes"], 5 * 4 * 4)

    def test_device_sources_and_bad_input(self):
        class G:
            shape = (4, 8)
            ptr = 0x1000
            dtype = np.dtype(np.uint32)

            class flags:
                c_contiguous = True
                f_contiguous = False

        arrays.gpuarray_to_array(G(), "C")
        d, c = self.last()
        self.assertEqual((d.width, d.height, c.fields["src"]), (8, 4, ("device", 0x1000)))
        with self.assertRaises(drv.LogicError):
            arrays.gpuarray_to_array(G(), "F")
        with self.assertRaises(drv.LogicError):
            arrays.np_to_array(np.zeros(3, np.float32), "C")
        with self.assertRaises(drv.LogicError):
            arrays.np_to_array(np.zeros((2, 2), np.float32), "X")
        with self.assertRaises(TypeError):
            arrays.np_to_array(np.zeros((2, 2), np.int64), "C")


class CopySides(unittest.TestCase):
    def test_sides_for_the_native_call(self):
        c = drv.Memcpy2D()
        host = np.arange(12, dtype=np.float32)
        c.set_src_host(host)
        c.set_dst_device(0x2000)
        c.src_x_in_bytes, c.src_y, c.src_pitch = 8, 1, 16
        kind, addr, x, y, z, pitch, h = c._side("src")
        self.assertEqual((kind, addr, x, y, z, pitch, h),
                         (1, host.__array_interface__["data"][0], 8, 1, 0, 16, 0))
        self.assertEqual(c._side("dst")[:2], (2, 0x2000))
        self.assertIs(c._keep["src"], host)

    def test_missing_side_and_read_only_destination(self):
        c = drv.Memcpy3D()
        with self.assertRaises(drv.LogicError):
            c._side("src")
        ro = np.zeros(4, np.float32)
        ro.flags.writeable = False
        with self.assertRaises(drv.LogicError):
            c.set_dst_host(ro)

    def test_stream_or_aligned(self):
        class S:
            handle = 0xBEEF

        self.assertEqual(drv.Memcpy2D._stream_or_aligned(S()), (0xBEEF, True))
        self.assertEqual(drv.Memcpy2D._stream_or_aligned(False), (None, False))
        self.assertEqual(drv.Memcpy2D._stream_or_aligned(True), (None, True))


class Descriptors(unittest.TestCase):
    def test_defaults_and_names(self):
        d = drv.ArrayDescriptor3D()
        self.assertEqual((d.width, d.height, d.depth, d.num_channels, d.flags), (0, 0, 0, 1, 0))
        self.assertEqual(int(drv.ipc_mem_flags.LAZY_ENABLE_PEER_ACCESS), 1)
        self.assertIs(drv.IPCMemoryHandle, __import__("rucuda._native",
                                                        fromlist=["x"]).IpcMemoryHandle)
        self.assertEqual(drv.dtype_to_array_format(np.float16), drv.array_format.HALF)


if __name__ == "__main__":
    unittest.main()
