"""Sorting and its family for GPUArrays, with NumPy's names and signatures: ``sort``,
``argsort``, ``unique``, ``searchsorted``, ``histogram``, ``bincount``, and ``topk``
(PyTorch's). PyCUDA has none of these; rucuda-array's kernels do the work (a radix sort
with decoupled look-back, block-local sorts of short rows, a selection for top-k), on
the legacy default stream after whatever was queued there. Each call waits for the
kernels that read its input. The functions are re-exported by :mod:`pycuda.gpuarray`.

Booleans, integers and float16/32/64 sort; NaNs sort last, ``-0.0`` before ``+0.0``,
and equal keys keep their order (stable), as NumPy's ``kind="stable"``.
"""
from __future__ import annotations

import numpy as np

from rucuda import _native


def _arg(a):
    """What the native functions take of a GPUArray."""
    return (int(a.ptr) if a.size else 0, tuple(a.shape), tuple(a.strides), a.dtype.char, a)


def _wrap(out):
    from pycuda.gpuarray import GPUArray
    holder, shape, strides, char = out
    return GPUArray(tuple(shape), np.dtype(char), gpudata=holder, strides=tuple(strides))


def _check(a, name):
    from pycuda.gpuarray import GPUArray
    if not isinstance(a, GPUArray):
        raise TypeError(f"{name}: expected a GPUArray, got {type(a).__name__}")


def _flat(a):
    return a if a.ndim == 1 else a.reshape(a.size)


def _no(name, **unsupported):
    for key, value in unsupported.items():
        if value is not None:
            raise NotImplementedError(f"{name}: {key}= is not supported")


def sort(a, axis=-1, kind=None, order=None, *, descending=False):
    """``numpy.sort``: a sorted copy along ``axis`` (None: of the flattened array),
    stable; ``descending=True`` sorts from the largest (NaNs still last). ``kind`` is
    accepted and ignored (the sort is always stable)."""
    _check(a, "sort")
    _no("sort", order=order)
    if axis is None:
        a, axis = _flat(a), -1
    return _wrap(_native.array_sort(_arg(a), axis, descending, False))


def argsort(a, axis=-1, kind=None, order=None, *, descending=False):
    """``numpy.argsort(kind="stable")``: the ``int64`` positions along ``axis`` (None: of
    the flattened array) that sort the array."""
    _check(a, "argsort")
    _no("argsort", order=order)
    if axis is None:
        a, axis = _flat(a), -1
    return _wrap(_native.array_sort(_arg(a), axis, descending, True))


def topk(a, k, axis=-1, largest=True):
    """``(values, indices)``: the ``k`` largest (or, with ``largest=False``, smallest)
    elements along ``axis``, sorted from the largest (smallest), and their ``int64``
    positions along the axis (PyTorch's ``topk``). Equal elements come in position
    order; NaNs are chosen last."""
    _check(a, "topk")
    if k < 0:
        raise ValueError(f"topk: k must not be negative, got {k}")
    values, indices = _native.array_topk(_arg(a), int(k), axis, bool(largest))
    return _wrap(values), _wrap(indices)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True):
    """``numpy.unique`` of the flattened array: the sorted distinct values, and with
    ``return_index``, ``return_inverse`` and ``return_counts`` the ``int64`` first
    positions, the inverse and the counts, in NumPy's order. NaNs collapse into one."""
    _check(ar, "unique")
    if axis is not None:
        raise NotImplementedError("unique: axis= is not supported (the array is flattened)")
    if not equal_nan:
        raise NotImplementedError("unique: equal_nan=False is not supported")
    want = (return_index, return_inverse, return_counts)
    outs = [_wrap(o) for o in _native.array_unique(_arg(ar), any(want))]
    if not any(want):
        return outs[0]
    values, first, inverse, counts = outs
    if return_inverse and ar.ndim != 1:
        inverse = inverse.reshape(ar.shape)
    extra = [x for x, w in zip((first, inverse, counts), want) if w]
    return (values, *extra)


def searchsorted(a, v, side="left", sorter=None):
    """``numpy.searchsorted``: where each value of ``v`` (a GPUArray, a NumPy array or a
    scalar, converted to ``a``'s dtype) goes in the sorted 1-D ``a``; ``int64``, of
    ``v``'s shape."""
    from pycuda.gpuarray import GPUArray, to_gpu
    _check(a, "searchsorted")
    _no("searchsorted", sorter=sorter)
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', not {side!r}")
    if isinstance(v, GPUArray):
        q = v if v.dtype == a.dtype else v.astype(a.dtype)
    else:
        q = to_gpu(np.asarray(v, dtype=a.dtype))
    return _wrap(_native.array_searchsorted(_arg(a), _arg(q), side == "right"))


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """``numpy.histogram`` of the flattened array: ``(counts, bin_edges)``, the counts an
    ``int64`` GPUArray, the edges a float64 NumPy array (as ``numpy.histogram`` gives
    them for integer data). ``bins`` is a number of even bins over ``range`` (None: the
    data's minimum and maximum) or the increasing edges."""
    _check(a, "histogram")
    _no("histogram", weights=weights, density=density)
    if np.ndim(bins) == 0:
        n = int(bins)
        if n < 1:
            raise ValueError(f"histogram: bins must be positive, got {bins}")
        rng = None if range is None else (float(range[0]), float(range[1]))
        counts, edges = _native.array_histogram(_arg(a), n, rng)
    else:
        edges = [float(e) for e in np.asarray(bins, dtype=np.float64).ravel()]
        counts, edges = _native.array_histogram(_arg(a), max(len(edges) - 1, 0), None,
                                                edges)
    return _wrap(counts), np.asarray(edges, dtype=np.float64)


def bincount(x, weights=None, minlength=0):
    """``numpy.bincount``: how many times each value ``0..max(x)`` occurs in the
    flattened integer array (``int64``, at least ``minlength`` bins). Negative values are
    an error."""
    _check(x, "bincount")
    _no("bincount", weights=weights)
    if minlength < 0:
        raise ValueError(f"bincount: minlength must not be negative, got {minlength}")
    return _wrap(_native.array_bincount(_arg(x), int(minlength)))


__all__ = ["sort", "argsort", "topk", "unique", "searchsorted", "histogram", "bincount"]
