"""The sort family's Python side (`pycuda.gpuarray.sort`, `argsort`, `topk`, `unique`,
`searchsorted`, `histogram`, `bincount`) with no GPU: what it hands the native functions,
how it wraps their results, and the arguments it refuses. The native functions are
replaced by recorders; their GPU results are checked by the face's GPU tests."""
from __future__ import annotations

import unittest

import numpy as np

from nodriver import import_without_driver

(gpuarray,) = import_without_driver("pycuda.gpuarray")
from pycuda import _sorting  # noqa: E402

BASE = 1 << 20


def fake(shape, dtype, **kwargs):
    return gpuarray.GPUArray(shape, dtype, gpudata=BASE, **kwargs)


def result(shape, char):
    """A native result: (holder, shape, byte strides, dtype char)."""
    itemsize = np.dtype(char).itemsize
    strides = tuple(int(s) for s in np.empty(shape, np.dtype(char)).strides)
    assert all(s % itemsize == 0 for s in strides)
    return (BASE + 4096, list(shape), list(strides), char)


class Recorder:
    """rucuda._native's sort family, recording each call and answering shapes."""

    def __init__(self):
        self.calls = []

    def array_sort(self, a, axis, descending, positions):
        self.calls.append(("sort", a, axis, descending, positions))
        return result(a[1], "l" if positions else a[3])

    def array_topk(self, a, k, axis, largest):
        self.calls.append(("topk", a, k, axis, largest))
        shape = list(a[1])
        shape[axis] = k
        return result(shape, a[3]), result(shape, "l")

    def array_unique(self, a, all_):
        self.calls.append(("unique", a, all_))
        n = int(np.prod(a[1]))
        if not all_:
            return [result((3,), a[3])]
        return [result((3,), a[3]), result((3,), "l"), result((n,), "l"), result((3,), "l")]

    def array_searchsorted(self, a, v, right):
        self.calls.append(("searchsorted", a, v, right))
        return result(v[1], "l")

    def array_histogram(self, a, bins, rng=None, edges=None):
        self.calls.append(("histogram", a, bins, rng, edges))
        if edges is None:
            lo, hi = rng if rng is not None else (0.0, 1.0)
            edges = list(np.linspace(lo, hi, bins + 1))
        return result((len(edges) - 1,), "l"), edges

    def array_bincount(self, a, minlength):
        self.calls.append(("bincount", a, minlength))
        return result((max(minlength, 5),), "l")


class SortFamily(unittest.TestCase):
    def setUp(self):
        self.saved = _sorting._native
        self.native = _sorting._native = Recorder()

    def tearDown(self):
        _sorting._native = self.saved

    def test_the_functions_are_in_gpuarray_under_numpys_names(self):
        for name in ["sort", "argsort", "topk", "unique", "searchsorted", "histogram",
                     "bincount"]:
            self.assertIs(getattr(gpuarray, name), getattr(_sorting, name))

    def test_sort_hands_the_layout_and_wraps_the_result(self):
        a = fake((3, 4), np.float32, order="F")
        s = gpuarray.sort(a, axis=0, descending=True)
        (_, arg, axis, descending, positions), = self.native.calls
        self.assertEqual(arg[:4], (BASE, (3, 4), (4, 12), "f"))
        self.assertIs(arg[4], a)
        self.assertEqual((axis, descending, positions), (0, True, False))
        self.assertEqual((s.shape, s.dtype, s.strides), ((3, 4), np.float32, (16, 4)))
        self.assertEqual(s.ptr, BASE + 4096)

    def test_argsort_gives_int64_and_axis_none_flattens(self):
        a = fake((2, 5), np.int16)
        p = gpuarray.argsort(a, axis=None)
        (_, arg, axis, _, positions), = self.native.calls
        self.assertEqual((arg[1], axis, positions), ((10,), -1, True))
        self.assertEqual((p.shape, p.dtype), ((10,), np.int64))

    def test_topk_returns_values_and_positions(self):
        v, i = gpuarray.topk(fake((4, 100), np.float64), 7)
        self.assertEqual((v.shape, v.dtype, i.shape, i.dtype),
                         ((4, 7), np.float64, (4, 7), np.int64))
        with self.assertRaises(ValueError):
            gpuarray.topk(fake((4,), np.float64), -1)

    def test_unique_returns_numpys_tuple(self):
        a = fake((2, 3), np.int32)
        self.assertEqual(gpuarray.unique(a).shape, (3,))
        self.assertEqual(self.native.calls[-1][2], False)
        values, inverse, counts = gpuarray.unique(a, return_inverse=True, return_counts=True)
        self.assertEqual(self.native.calls[-1][2], True)
        self.assertEqual((values.shape, inverse.shape, counts.shape), ((3,), (2, 3), (3,)))
        values, first = gpuarray.unique(a, return_index=True)
        self.assertEqual(first.dtype, np.int64)
        with self.assertRaises(NotImplementedError):
            gpuarray.unique(a, axis=0)

    def test_searchsorted_sides_and_dtypes(self):
        a = fake((10,), np.float32)
        q = fake((2, 3), np.float32)
        r = gpuarray.searchsorted(a, q, side="right")
        (_, _, v, right), = self.native.calls
        self.assertEqual((v[1], right, r.shape, r.dtype), ((2, 3), True, (2, 3), np.int64))
        with self.assertRaises(ValueError):
            gpuarray.searchsorted(a, q, side="middle")
        with self.assertRaises(NotImplementedError):
            gpuarray.searchsorted(a, q, sorter=q)

    def test_histogram_even_bins_and_edges(self):
        a = fake((1000,), np.uint8)
        counts, edges = gpuarray.histogram(a, bins=4, range=(0, 8))
        self.assertEqual(self.native.calls[-1][2:], (4, (0.0, 8.0), None))
        self.assertEqual(counts.dtype, np.int64)
        np.testing.assert_array_equal(edges, [0, 2, 4, 6, 8])
        counts, edges = gpuarray.histogram(a, bins=[0, 1, 10, 100])
        self.assertEqual(self.native.calls[-1][2:], (3, None, [0.0, 1.0, 10.0, 100.0]))
        self.assertEqual(counts.shape, (3,))
        with self.assertRaises(ValueError):
            gpuarray.histogram(a, bins=0)
        with self.assertRaises(NotImplementedError):
            gpuarray.histogram(a, weights=a)

    def test_bincount_checks_its_arguments(self):
        b = gpuarray.bincount(fake((9,), np.int64), minlength=8)
        self.assertEqual((b.shape, b.dtype), ((8,), np.int64))
        with self.assertRaises(ValueError):
            gpuarray.bincount(fake((9,), np.int64), minlength=-1)
        with self.assertRaises(NotImplementedError):
            gpuarray.bincount(fake((9,), np.int64), weights=fake((9,), np.float32))

    def test_host_arrays_are_refused_by_name(self):
        for f in (gpuarray.sort, gpuarray.argsort, gpuarray.unique, gpuarray.bincount):
            with self.assertRaisesRegex(TypeError, "expected a GPUArray, got ndarray"):
                f(np.arange(4))
        self.assertEqual(self.native.calls, [])


if __name__ == "__main__":
    unittest.main()
