"""GPUArray's layout logic (shapes, strides, flags, views) against NumPy's, with no GPU:
arrays are made over a fake address and never touched.

pycuda.driver refuses to import without a CUDA driver; here the check is stubbed, which
is safe because nothing below calls the driver.
"""
from __future__ import annotations

import itertools
import unittest

import numpy as np

from nodriver import import_without_driver

(gpuarray,) = import_without_driver("pycuda.gpuarray")

BASE = 1 << 20


def fake(host):
    """A GPUArray with host's shape, dtype and strides over a fake address."""
    return gpuarray.GPUArray(host.shape, host.dtype, gpudata=BASE, strides=host.strides)


def offset(g):
    return g.ptr - BASE


def np_offset(view, base):
    return view.__array_interface__["data"][0] - base.__array_interface__["data"][0]


class Layout(unittest.TestCase):
    def check(self, g, h, base):
        self.assertEqual(g.shape, h.shape)
        self.assertEqual(g.strides, h.strides)
        if h.size:  # NumPy does not move the address of an empty view
            self.assertEqual(offset(g), np_offset(h, base))
        self.assertEqual(g.flags.c_contiguous, h.flags.c_contiguous, (h.shape, h.strides))
        self.assertEqual(g.flags.f_contiguous, h.flags.f_contiguous, (h.shape, h.strides))
        self.assertEqual(g.size, h.size)

    def test_slices_like_numpy(self):
        h = np.zeros((5, 6, 7), np.float32)
        g = fake(h)
        indices = [slice(None), slice(1, 4), slice(None, None, 2), slice(4, 0, -1),
                   slice(5, 5), 2, -1]
        for a, b in itertools.product(indices, repeat=2):
            self.check(g[a, b], h[a, b], h)
        self.check(g[..., 3], h[..., 3], h)
        self.check(g[:, np.newaxis], h[:, np.newaxis], h)
        self.check(g[1, ..., np.newaxis], h[1, ..., np.newaxis], h)

    def test_fortran_arrays(self):
        h = np.zeros((4, 9), np.float64, order="F")
        g = gpuarray.GPUArray(h.shape, h.dtype, gpudata=BASE, order="F")
        self.check(g, h, h)
        self.check(g[:, 2:5], h[:, 2:5], h)
        self.check(g.T, h.T, h)

    def test_transpose_squeeze_view(self):
        h = np.zeros((3, 1, 4, 1), np.float32)
        g = fake(h)
        self.check(g.transpose((2, 0, 3, 1)), h.transpose((2, 0, 3, 1)), h)
        self.check(g.squeeze(), h.squeeze(), h)
        self.check(g[0:1, :, 1:3].squeeze(), h[0:1, :, 1:3].squeeze(), h)
        h2 = np.zeros((8, 16), np.float32)
        g2 = fake(h2)
        self.check(g2.view(np.complex64), h2.view(np.complex64), h2)
        self.check(g2.view(np.int16), h2.view(np.int16), h2)
        self.check(g2[:3, :5].view(), h2[:3, :5].view(), h2)

    def test_reshape(self):
        h = np.zeros((8, 16), np.float32)
        g = fake(h)
        self.assertEqual(g.reshape(-1, 32).shape, (4, 32))
        self.assertEqual(g.reshape((8, -1, 4)).shape, (8, 4, 4))
        self.assertTrue(g.reshape(4, 32, order="F").flags.f_contiguous)
        self.assertTrue(g.reshape((4, 32)).flags.c_contiguous)
        with self.assertRaises(ValueError):
            g.reshape(-1, -1, 4)
        with self.assertRaises(ValueError):
            g.reshape(3, 5)
        with self.assertRaises(RuntimeError):
            g[:, ::2].reshape(64)

    def test_span_of_views(self):
        h = np.zeros((6, 5), np.float64)
        g = fake(h)
        for view in [g[::2, 1:4], g[::-1], g[:, ::-2], g.T, g[4:5, 3:4]]:
            lo, length = view._span()
            start = offset(view) + lo
            elems = [offset(view) + sum(i * s for i, s in zip(idx, view.strides))
                     for idx in np.ndindex(view.shape)]
            # Every element lies in the span, and the span is as small as can be.
            self.assertEqual(min(elems), start)
            self.assertEqual(max(elems) + view.itemsize, start + length)

    def test_get_of_views_reads_the_right_bytes(self):
        # A stand-in for device memory: `get` copies from it as from the device.
        h = np.arange(6 * 5 * 4, dtype=np.float32).reshape(6, 5, 4)
        memory = h.tobytes()

        def dtoh(dest, src):
            start = int(src) - BASE
            flat = dest if dest.flags.c_contiguous else dest.T  # a view, in memory order
            flat.reshape(-1).view(np.uint8)[:] = np.frombuffer(
                memory[start:start + dest.nbytes], np.uint8)

        saved = gpuarray.drv.memcpy_dtoh
        gpuarray.drv.memcpy_dtoh = dtoh
        try:
            g = fake(h)
            for index in [(slice(None),), (slice(1, 4), 2), (slice(None, None, -2),),
                          (Ellipsis, slice(1, 3)), (3, slice(None), slice(None, None, 3)),
                          (slice(2, 3), slice(4, 5))]:
                np.testing.assert_array_equal(g[index].get(), h[index])
            np.testing.assert_array_equal(g.transpose((2, 0, 1)).get(),
                                          h.transpose((2, 0, 1)))
            f = gpuarray.GPUArray((5, 6), np.float32, gpudata=BASE, order="F")
            hf = np.frombuffer(memory, np.float32)[:30].reshape((5, 6), order="F")
            got = f.get()
            np.testing.assert_array_equal(got, hf)
            self.assertTrue(got.flags.f_contiguous)
            out = np.empty((6, 5, 4), np.float32)
            self.assertIs(g.get(out), out)
            np.testing.assert_array_equal(out, h)
        finally:
            gpuarray.drv.memcpy_dtoh = saved

    def test_cuda_array_interface(self):
        h = np.zeros(10, np.float32)
        cai = fake(h).__cuda_array_interface__
        self.assertEqual((cai["shape"], cai["strides"], cai["typestr"], cai["version"]),
                         (h.shape, h.strides, h.dtype.str, 3))
        self.assertEqual(cai["data"], (BASE, False))

    def test_shapes_given_as_numpy_values(self):
        for shape in [np.int32(17), (np.int32(3), np.int32(4)), np.array(3), np.array([2, 3])]:
            g = gpuarray.GPUArray(shape, np.float32, gpudata=BASE)
            self.assertEqual(g.shape, np.empty(shape, np.float32).shape)

    def test_vector_types(self):
        v = gpuarray.vec.make_float3(1, 2, 3)
        self.assertEqual(v.dtype, gpuarray.vec.float3)
        self.assertEqual(v.dtype.itemsize, 12)
        self.assertEqual(v.shape, ())
        self.assertEqual(tuple(v.tolist()), (1.0, 2.0, 3.0))
        with self.assertRaises(TypeError):
            gpuarray.vec.make_float2(1)

    def test_truth_and_len(self):
        g = fake(np.zeros((4, 2), np.float32))
        self.assertEqual(len(g), 4)
        with self.assertRaises(ValueError):
            bool(g)
        with self.assertRaises(TypeError):
            hash(g)


if __name__ == "__main__":
    unittest.main()
