"""The array operators' fast path (`a + b` between two contiguous GPUArrays of one dtype
and shape: one native call allocating and launching), on a recording stand-in for the
kernel, with no GPU."""
from __future__ import annotations

import unittest

import numpy as np

from nodriver import import_without_driver

drv, gpuarray, _ops = import_without_driver("pycuda.driver", "pycuda.gpuarray",
                                            "pycuda._ops")


class FakeFunction:
    def __init__(self):
        self.calls = []

    def _launch_new(self, nbytes, grid, block, *words):
        self.calls.append(("new", nbytes, grid, block, words))
        return 0xABC000

    def _launch_words(self, grid, block, *words):
        self.calls.append(("words", grid, block, words))


class FakeKernel:
    def __init__(self, fn):
        self.fn = fn

    def _functions(self):
        return self.fn, None, 2  # two multiprocessors: at most 32 blocks


class FakeNative:
    mem_alloc_async = drv.mem_alloc_async

    @staticmethod
    def current_context_handle():
        return 0x77


class FastBinary(unittest.TestCase):
    def setUp(self):
        self.fn = FakeFunction()
        self.kernels = []
        self.saved = (_ops.binary_kernel, _ops._native)

        def binary_kernel(*args):
            self.kernels.append(args)
            return FakeKernel(self.fn)

        _ops.binary_kernel = binary_kernel
        _ops._native = FakeNative
        _ops._FAST.clear()

    def tearDown(self):
        _ops.binary_kernel, _ops._native = self.saved
        _ops._FAST.clear()

    def array(self, shape, dtype, ptr, **kwargs):
        return gpuarray.GPUArray(shape, dtype, gpudata=ptr, **kwargs)

    def test_default_allocator_allocates_and_launches_in_one_call(self):
        a = self.array((100, 100), np.float32, 0x1000)
        b = self.array((100, 100), np.float32, 0x2000)
        z = a + b
        self.assertEqual(self.fn.calls, [("new", 40000, 32, 256, (0x1000, 0x2000, 10000))])
        self.assertEqual((z.shape, z.dtype, z.strides, z.size, z.nbytes),
                         ((100, 100), np.dtype(np.float32), a.strides, 10000, 40000))
        self.assertEqual(z.gpudata, 0xABC000)
        self.assertIsNone(z.base)
        self.assertIs(z.allocator, a.allocator)
        # The kernel is made once per (context, op, dtype).
        a - b
        a - b
        f32 = np.dtype(np.float32)
        self.assertEqual(self.kernels, [("+", f32, f32, f32, f32), ("-", f32, f32, f32, f32)])

    def test_small_arrays_take_one_block_per_256_elements(self):
        a = self.array((1000,), np.float64, 0x1000)
        a * a
        self.assertEqual(self.fn.calls[0][2], 4)

    def test_other_allocators_allocate_then_launch(self):
        alloc = []

        def allocator(n):
            alloc.append(n)
            return 0x9000

        a = self.array((8,), np.int32, 0x1000, allocator=allocator)
        b = self.array((8,), np.int32, 0x2000)
        z = a + b
        self.assertEqual(alloc, [32])
        self.assertEqual(self.fn.calls, [("words", 1, 256, (0x9000, 0x1000, 0x2000, 8))])
        self.assertEqual(z.gpudata, 0x9000)

    def test_what_takes_the_general_path(self):
        a = self.array((8,), np.float32, 0x1000)
        cases = [
            (a, self.array((8,), np.float64, 0x2000), "+"),       # two dtypes
            (a, self.array((4, 2), np.float32, 0x2000), "+"),     # two shapes
            (self.array((8,), np.int32, 0x1000), self.array((8,), np.int32, 0x2000),
             "/"),                                                  # true division of ints
            (self.array((8,), np.complex64, 0x1000),
             self.array((8,), np.complex64, 0x2000), "*"),         # not a fast dtype
            (self.array((4, 2), np.float32, 0x1000, order="F"),
             self.array((4, 2), np.float32, 0x2000, order="F"), "+"),  # not C order
            (self.array((0,), np.float32, None), self.array((0,), np.float32, None), "+"),
        ]
        for x, y, op in cases:
            self.assertIsNone(_ops.fast_binary(x, y, op), (x.shape, x.dtype, op))
        self.assertEqual(self.fn.calls, [])


class NativeTable(unittest.TestCase):
    def test_an_empty_table_answers_none(self):
        from rucuda import _native
        table = _native.FastTable()
        a = gpuarray.GPUArray((8,), np.float32, gpudata=0x1000)
        self.assertIsNone(table.binary(a, a, "+"))
        self.assertEqual(len(table), 0)

    def test_only_native_kernels_are_registered(self):
        from rucuda import _native
        table = _native.FastTable()
        a = gpuarray.GPUArray((8,), np.float32, gpudata=0x1000)
        sig = _ops.fast_sig(a)
        self.assertFalse(table.register(sig, "+", FakeFunction(), 32,
                                        drv.mem_alloc_async))
        self.assertEqual(len(table), 0)
        table.clear()

    def test_operators_fall_back_to_python_when_the_table_does_not_know(self):
        # Integer addresses (not DeviceAllocations): the Python path every time, and
        # nothing registered.
        saved = (_ops.binary_kernel, _ops._native)
        fn = FakeFunction()
        _ops.binary_kernel = lambda *args: FakeKernel(fn)
        _ops._native = FakeNative
        _ops._FAST.clear()
        try:
            a = gpuarray.GPUArray((8,), np.float32, gpudata=0x1000)
            for _ in range(3):
                a + a
            self.assertEqual(len(fn.calls), 3)
            self.assertEqual(len(_ops.FAST_TABLE), 0)
        finally:
            _ops.binary_kernel, _ops._native = saved
            _ops._FAST.clear()


if __name__ == "__main__":
    unittest.main()
