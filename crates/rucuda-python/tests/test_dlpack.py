"""DLPack export and import of GPUArrays (`__dlpack__`, `__dlpack_device__`,
`pycuda.gpuarray.from_dlpack`) over fake device addresses, with no GPU: capsules,
shapes, strides, types, lifetimes and refusals."""
from __future__ import annotations

import gc
import unittest
import weakref

import numpy as np

from nodriver import import_without_driver

(gpuarray,) = import_without_driver("pycuda.gpuarray")


class FakeNative:
    """rucuda._native with the device ordinal answered without a driver."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    @staticmethod
    def dlpack_device_id(gpudata):
        return 3


class DLPack(unittest.TestCase):
    def setUp(self):
        self.saved = gpuarray._native
        gpuarray._native = FakeNative(self.saved)

    def tearDown(self):
        gpuarray._native = self.saved

    def array(self, shape, dtype, ptr=0x10000, **kwargs):
        return gpuarray.GPUArray(shape, dtype, gpudata=ptr, **kwargs)

    def test_round_trip_keeps_address_shape_strides_and_dtype(self):
        for dtype in (np.bool_, np.int8, np.uint16, np.int32, np.uint64, np.float16,
                      np.float32, np.float64, np.complex64, np.complex128):
            for order in ("C", "F"):
                a = self.array((3, 4, 5), dtype, order=order)
                self.assertEqual(a.__dlpack_device__(), (2, 3))
                for source in (a, a.__dlpack__()):
                    b = gpuarray.from_dlpack(source)
                    self.assertEqual((int(b.gpudata), b.shape, b.strides, b.dtype),
                                     (0x10000, a.shape, a.strides, a.dtype), (dtype, order))

    def test_a_capsule_is_consumed_once(self):
        cap = self.array((8,), np.float32).__dlpack__()
        gpuarray.from_dlpack(cap)
        with self.assertRaises(TypeError):
            gpuarray.from_dlpack(cap)

    def test_the_consumer_keeps_the_array_alive(self):
        a = self.array((8,), np.float32)
        alive = weakref.ref(a)
        b = gpuarray.from_dlpack(a)
        del a
        gc.collect()
        self.assertIsNotNone(alive())
        del b
        gc.collect()
        self.assertIsNone(alive())

    def test_an_unconsumed_capsule_releases_the_array(self):
        a = self.array((8,), np.float32)
        alive = weakref.ref(a)
        cap = a.__dlpack__()
        del a
        gc.collect()
        self.assertIsNotNone(alive())
        del cap
        gc.collect()
        self.assertIsNone(alive())

    def test_refusals_name_what_is_wrong(self):
        with self.assertRaisesRegex(BufferError, "no type"):
            self.array((4,), np.dtype(">f4")).__dlpack__()
        with self.assertRaisesRegex(BufferError, "copy=True"):
            self.array((4,), np.float32).__dlpack__(copy=True)
        with self.assertRaisesRegex(BufferError, "not on"):
            self.array((4,), np.float32).__dlpack__(dl_device=(2, 0))
        with self.assertRaisesRegex(ValueError, "stream 0"):
            self.array((4,), np.float32).__dlpack__(stream=0)
        strided = self.array((4,), np.float32, strides=(6,))
        with self.assertRaisesRegex(BufferError, "whole"):
            strided.__dlpack__()

        class OnTheHost:
            def __dlpack_device__(self):
                return (1, 0)

            def __dlpack__(self, **kwargs):
                raise AssertionError("not asked")

        with self.assertRaisesRegex(BufferError, "device type 1"):
            gpuarray.from_dlpack(OnTheHost())
        with self.assertRaises(TypeError):
            gpuarray.from_dlpack(object())

    def test_consumers_streams_need_no_driver_when_no_ordering_is_asked(self):
        a = self.array((4,), np.float32)
        for stream in (None, 1, -1):
            gpuarray.from_dlpack(a.__dlpack__(stream=stream))

    def test_type_codes(self):
        self.assertEqual(gpuarray._dl_type(np.float32), (2, 32))
        self.assertEqual(gpuarray._dl_type(np.bool_), (6, 8))
        self.assertEqual(gpuarray._np_dtype(5, 128, 1), np.complex128)
        with self.assertRaises(BufferError):
            gpuarray._np_dtype(2, 32, 4)
        with self.assertRaises(BufferError):
            gpuarray._np_dtype(4, 16, 1)  # bfloat16


if __name__ == "__main__":
    unittest.main()
