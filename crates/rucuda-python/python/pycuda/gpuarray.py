"""``pycuda.gpuarray``: ``GPUArray``, NumPy-like arrays in device memory.

Operations run generated kernels (``pycuda.elementwise``), compiled by NVRTC through
rucuda-jit and memoized per context and signature.
"""
from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

import pycuda.driver as drv
from pycuda import _ops
from rucuda import _native, kernels
from rucuda.dtypes import dtype_to_ctype, get_or_register_dtype, register_dtype

# The operators' native fast path (pycuda._ops.FAST_TABLE): None where it does not know the
# operands yet, and then pycuda._ops.fast_binary runs (and teaches it).
_fast_binary = _ops.FAST_TABLE.binary


# {{{ vector types

class vec:  # noqa: N801
    """CUDA's vector types as NumPy structured dtypes (``vec.float3``, ``make_float3``)."""


def _create_vector_types():
    field_names = ["x", "y", "z", "w"]
    counts = [1, 2, 3, 4]
    for base_name, base_type in [
            ("char", np.int8), ("uchar", np.uint8), ("short", np.int16),
            ("ushort", np.uint16), ("int", np.int32), ("uint", np.uint32),
            ("long", np.int64), ("ulong", np.uint64), ("longlong", np.int64),
            ("ulonglong", np.uint64), ("float", np.float32), ("double", np.float64)]:
        for count in counts:
            name = f"{base_name}{count}"
            dtype = np.dtype([(field_names[i], base_type) for i in range(count)])
            register_dtype(dtype, name)
            setattr(vec, name, dtype)

            def maker(*args, _dtype=dtype, _count=count):
                if len(args) != _count:
                    raise TypeError(f"{_count} components expected")
                # A 0-d array, as PyCUDA's makers return.
                return np.array(tuple(args), dtype=_dtype)

            setattr(vec, "make_" + name, staticmethod(maker))


_create_vector_types()

# }}}


def _shape_of(shape):
    if isinstance(shape, (numbers.Integral, np.integer)):
        return (int(shape),)
    if isinstance(shape, np.ndarray) and shape.ndim == 0:
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _c_strides(shape, itemsize):
    strides = []
    s = itemsize
    for d in reversed(shape):
        strides.append(s)
        s *= builtins.max(d, 1)
    return tuple(reversed(strides))


def _f_strides(shape, itemsize):
    strides = []
    s = itemsize
    for d in shape:
        strides.append(s)
        s *= builtins.max(d, 1)
    return tuple(strides)


class _Flags:
    def __init__(self, ary):
        shape, strides, itemsize = ary.shape, ary.strides, ary.dtype.itemsize
        nontrivial = [(d, s) for d, s in zip(shape, strides) if d != 1]
        size = ary.size
        self.c_contiguous = size == 0 or (
            _strip(nontrivial) == _strip(list(zip(shape, _c_strides(shape, itemsize)))))
        self.f_contiguous = size == 0 or (
            _strip(nontrivial) == _strip(list(zip(shape, _f_strides(shape, itemsize)))))
        self.forc = self.c_contiguous or self.f_contiguous


def _strip(pairs):
    return [(d, s) for d, s in pairs if d != 1]


def _scalar_kernel_value(dtype, x):
    return np.asarray(x).astype(dtype)[()]


class GPUArray:
    """An array in device memory (PyCUDA's ``GPUArray``)."""

    __array_priority__ = 100
    # NumPy defers every binary operation with a GPUArray to the GPUArray's operators
    # (np.float32(2) * a_gpu is a GPUArray), as it does for PyCUDA's.
    __array_ufunc__ = None
    # The operators' fast-path signature (pycuda._ops.fast_sig), computed on first use.
    _fast = None

    def __init__(self, shape, dtype, allocator=None, base=None, gpudata=None,
                 strides=None, order="C"):
        dtype = np.dtype(dtype)
        shape = _shape_of(shape)
        self.shape = shape
        self.dtype = dtype
        self.size = math.prod(shape)
        self.nbytes = self.size * dtype.itemsize
        if strides is None:
            strides = (_f_strides if order == "F" else _c_strides)(shape, dtype.itemsize)
        self.strides = tuple(int(s) for s in strides)
        # Stream-ordered allocations by default (rucuda's own arrays do the same): no
        # device synchronisation when an array is freed. Pass allocator=drv.mem_alloc
        # for arrays used on non-blocking streams.
        self.allocator = allocator or drv.mem_alloc_async
        if gpudata is None:
            gpudata = self.allocator(self.nbytes) if self.size else None
        self.gpudata = gpudata
        self.base = base
        self.mem_size = self.size

    # {{{ metadata

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def flags(self):
        # Shape and strides never change: computed once.
        f = self.__dict__.get("_flags")
        if f is None:
            f = self.__dict__["_flags"] = _Flags(self)
        return f

    @property
    def ptr(self):
        if self.gpudata is None:
            return 0
        return int(self.gpudata)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "strides": self.strides,
            "data": (self.ptr, False),
            "typestr": self.dtype.str,
            "stream": None,
            "version": 3,
        }

    def __dlpack_device__(self):
        """``(kDLCUDA, the device's ordinal)``."""
        return (_DL_CUDA, _native.dlpack_device_id(self.gpudata))

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack ``"dltensor"`` capsule over this array's memory, no copy: the consumer
        keeps the array alive until it deletes the tensor. ``stream`` is the consumer's:
        None or 1 (the legacy default stream, where GPUArrays work) needs no ordering;
        another stream waits, by an event, for the work queued so far."""
        if copy:
            raise BufferError("GPUArray.__dlpack__: copy=True is not supported (the array "
                              "is exported without a copy)")
        device = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != device:
            raise BufferError(f"GPUArray.__dlpack__: the array is on {device}, not on "
                              f"{tuple(dl_device)}")
        itemsize = self.dtype.itemsize
        if builtins.any(st % itemsize for st in self.strides):
            raise BufferError(f"GPUArray.__dlpack__: strides {self.strides} are not whole "
                              f"elements of {itemsize} bytes")
        _native.dlpack_order(stream)
        return _native.dlpack_capsule(self, self.ptr, list(self.shape),
                                      [st // itemsize for st in self.strides],
                                      _dl_type(self.dtype), device[1])

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __bool__(self):
        if self.size == 1:
            return bool(self.get())
        raise ValueError("The truth value of an array with more than one element is "
                         "ambiguous. Use a.any() or a.all()")

    def __repr__(self):
        return repr(self.get())

    def __str__(self):
        return str(self.get())

    def __hash__(self):
        raise TypeError("GPUArrays are not hashable.")

    # }}}

    # {{{ transfers

    def _span(self):
        """(first byte offset, byte length) of the memory the array touches."""
        if self.size == 0:
            return 0, 0
        # This module defines sum, min and max as GPU reductions (PyCUDA's names).
        lo = builtins.sum(builtins.min(0, (d - 1) * s) for d, s in zip(self.shape, self.strides))
        hi = builtins.sum(builtins.max(0, (d - 1) * s) for d, s in zip(self.shape, self.strides))
        return lo, hi - lo + self.itemsize

    def set(self, ary, async_=False, stream=None, **kwargs):
        async_ = kwargs.pop("async", async_)
        ary = np.asarray(ary)
        if ary.size != self.size:
            raise ValueError("ary and self must be the same size")
        if ary.shape != self.shape:
            from warnings import warn
            warn("Setting array from one with different shape.", stacklevel=2)
            ary = ary.reshape(self.shape)
        if ary.dtype != self.dtype:
            raise ValueError("ary and self must have the same dtype")
        if self.size == 0:
            return
        if not self.flags.forc:
            raise RuntimeError("set() into a non-contiguous GPUArray is not supported")
        order = "F" if self.flags.f_contiguous and not self.flags.c_contiguous else "C"
        host = np.asarray(ary, order=order)
        if async_ and stream is not None:
            drv.memcpy_htod_async(self.ptr, host, stream)
        else:
            drv.memcpy_htod(self.ptr, host)

    def set_async(self, ary, stream=None):
        return self.set(ary, async_=True, stream=stream)

    def get(self, ary=None, pagelocked=False, async_=False, stream=None, **kwargs):
        """The array's values in host memory (a NumPy array in the array's own order;
        into ``ary`` when given)."""
        async_ = kwargs.pop("async", async_)
        if ary is not None and (ary.size != self.size or ary.dtype != self.dtype):
            raise TypeError("'ary' has non-matching size or type")
        order = "F" if self.flags.f_contiguous and not self.flags.c_contiguous else "C"
        if self.size == 0:
            return ary if ary is not None else np.empty(self.shape, self.dtype, order=order)
        lo, length = self._span()
        if self.flags.forc and length == self.nbytes:
            if pagelocked and ary is None:
                host = drv.pagelocked_empty(self.shape, self.dtype, order=order)
            elif ary is not None and ary.shape == self.shape and (
                    ary.flags.c_contiguous if order == "C" else ary.flags.f_contiguous):
                host = ary
            else:
                host = np.empty(self.shape, self.dtype, order=order)
            if async_ and stream is not None:
                drv.memcpy_dtoh_async(host, self.ptr, stream)
                stream.synchronize()
            else:
                drv.memcpy_dtoh(host, self.ptr)
        else:
            # A strided view: the bytes it spans, then its elements picked on the host.
            raw = np.empty(length, np.uint8)
            drv.memcpy_dtoh(raw, self.ptr + lo)
            host = np.ndarray(self.shape, self.dtype, buffer=raw, offset=-lo,
                              strides=self.strides).copy()
        if ary is None or host is ary:
            return host
        ary[...] = host.reshape(ary.shape) if ary.shape != host.shape else host
        return ary

    def get_async(self, stream=None, ary=None):
        return self.get(ary=ary, async_=True, stream=stream)

    def copy(self):
        new = self._new_like_me(order="C" if not self.flags.f_contiguous or
                                self.flags.c_contiguous else "F")
        if self.size:
            if self.flags.forc:
                drv.memcpy_dtod(new.ptr, self.ptr, self.nbytes)
            else:
                new.set(self.get())
        return new

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    # }}}

    # {{{ construction helpers

    def _new_like_me(self, dtype=None, order="C"):
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        if self.flags.f_contiguous and not self.flags.c_contiguous:
            order = "F"
        return GPUArray(self.shape, dtype, allocator=self.allocator, order=order)

    # }}}

    # {{{ elementwise arithmetic

    def _elwise(self, other, op, reverse=False, out=None):
        from pycuda import _ops
        return _ops.binary(self, other, op, reverse, out)

    def __add__(self, other):
        if type(other) is GPUArray and type(self) is GPUArray:
            r = _fast_binary(self, other, "+")
            if r is None:
                r = _ops.fast_binary(self, other, "+")
            if r is not None:
                return r
        return self._elwise(other, "+")

    def __radd__(self, other):
        return self._elwise(other, "+", True)

    def __sub__(self, other):
        if type(other) is GPUArray and type(self) is GPUArray:
            r = _fast_binary(self, other, "-")
            if r is None:
                r = _ops.fast_binary(self, other, "-")
            if r is not None:
                return r
        return self._elwise(other, "-")

    def __rsub__(self, other):
        return self._elwise(other, "-", True)

    def __mul__(self, other):
        if type(other) is GPUArray and type(self) is GPUArray:
            r = _fast_binary(self, other, "*")
            if r is None:
                r = _ops.fast_binary(self, other, "*")
            if r is not None:
                return r
        return self._elwise(other, "*")

    def __rmul__(self, other):
        return self._elwise(other, "*", True)

    def __truediv__(self, other):
        if type(other) is GPUArray and type(self) is GPUArray:
            r = _fast_binary(self, other, "/")
            if r is None:
                r = _ops.fast_binary(self, other, "/")
            if r is not None:
                return r
        return self._elwise(other, "/")

    def __rtruediv__(self, other):
        return self._elwise(other, "/", True)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __pow__(self, other):
        return self._elwise(other, "pow")

    def __rpow__(self, other):
        return self._elwise(other, "pow", True)

    def __iadd__(self, other):
        return self._elwise(other, "+", out=self)

    def __isub__(self, other):
        return self._elwise(other, "-", out=self)

    def __imul__(self, other):
        return self._elwise(other, "*", out=self)

    def __itruediv__(self, other):
        return self._elwise(other, "/", out=self)

    def __neg__(self):
        from pycuda import _ops
        return _ops.unary(self, "-")

    def __pos__(self):
        return self

    def __abs__(self):
        from pycuda import _ops
        return _ops.unary(self, "abs")

    def __eq__(self, other):
        return self._elwise(other, "==")

    def __ne__(self, other):
        return self._elwise(other, "!=")

    def __lt__(self, other):
        return self._elwise(other, "<")

    def __le__(self, other):
        return self._elwise(other, "<=")

    def __gt__(self, other):
        return self._elwise(other, ">")

    def __ge__(self, other):
        return self._elwise(other, ">=")

    def mul_add(self, selffac, other, otherfac, add_timer=None, stream=None, out=None):
        from pycuda import _ops
        return _ops.mul_add(self, selffac, other, otherfac, out=out, stream=stream)

    def reverse(self, stream=None):
        from pycuda import _ops
        return _ops.reverse(self, stream)

    def fill(self, value, stream=None):
        from pycuda import _ops
        _ops.fill(self, value, stream)
        return self

    def astype(self, dtype, stream=None):
        from pycuda import _ops
        if np.dtype(dtype) == self.dtype:
            return self.copy()
        return _ops.astype(self, dtype, stream)

    def conj(self, out=None):
        from pycuda import _ops
        if self.dtype.kind == "c":
            return _ops.unary(self, "conj", out)
        if out is not None:
            out[...] = self
            return out
        return self

    conjugate = conj

    @property
    def real(self):
        from pycuda import _ops
        return _ops.part(self, "real") if self.dtype.kind == "c" else self

    @property
    def imag(self):
        from pycuda import _ops
        if self.dtype.kind == "c":
            return _ops.part(self, "imag")
        return zeros_like(self)

    # }}}

    # {{{ views

    def reshape(self, *shape, **kwargs):
        """A view with another shape over the same (contiguous) memory, laid out in
        ``order`` (PyCUDA relabels the memory; it never copies)."""
        order = kwargs.pop("order", "C")
        if kwargs:
            raise TypeError("unknown keyword arguments: " + ", ".join(sorted(kwargs)))
        if len(shape) == 1 and not isinstance(shape[0], (numbers.Integral, np.integer)):
            shape = shape[0]
        shape = list(_shape_of(shape))
        if shape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if -1 in shape:
            known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape array of size {self.size} into "
                                 f"shape {tuple(shape)}")
            shape[shape.index(-1)] = self.size // known
        shape = tuple(shape)
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise ValueError("total size of new array must be unchanged")
        if not self.flags.forc:
            raise RuntimeError("only contiguous arrays may be reshaped")
        strides = (_f_strides if order == "F" else _c_strides)(shape, self.itemsize)
        return GPUArray(shape, self.dtype, self.allocator, base=self,
                        gpudata=self.gpudata, strides=strides)

    def ravel(self, order="C"):
        return self.reshape(self.size, order=order)

    def view(self, dtype=None):
        if dtype is None:
            dtype = self.dtype
        dtype = np.dtype(dtype)
        old = self.itemsize
        new = dtype.itemsize
        if self.ndim and self.strides[-1] != old and self.shape[-1] != 1:
            raise ValueError("view of a non-contiguous last axis")
        if self.ndim == 0:
            shape = ()
            strides = ()
        else:
            last = self.shape[-1] * old
            if last % new:
                raise ValueError("new type not compatible with array")
            shape = self.shape[:-1] + (last // new,)
            strides = self.strides[:-1] + (new,)
        return GPUArray(shape, dtype, self.allocator, base=self, gpudata=self.gpudata,
                        strides=strides)

    def squeeze(self):
        keep = [(d, s) for d, s in zip(self.shape, self.strides) if d != 1]
        return GPUArray(tuple(d for d, _ in keep), self.dtype, self.allocator, base=self,
                        gpudata=self.gpudata, strides=tuple(s for _, s in keep))

    def transpose(self, axes=None):
        if axes is None:
            axes = tuple(reversed(range(self.ndim)))
        shape = tuple(self.shape[a] for a in axes)
        strides = tuple(self.strides[a] for a in axes)
        return GPUArray(shape, self.dtype, self.allocator, base=self,
                        gpudata=self.gpudata, strides=strides)

    @property
    def T(self):  # noqa: N802
        return self.transpose()

    def __getitem__(self, index):
        if not isinstance(index, tuple):
            index = (index,)
        new_shape, new_strides = [], []
        offset = 0
        axis = 0
        seen_ellipsis = False
        for i, idx in enumerate(index):
            if idx is Ellipsis:
                if seen_ellipsis:
                    raise IndexError("more than one ellipsis not allowed in index")
                seen_ellipsis = True
                rest = len([x for x in index[i + 1:] if x is not np.newaxis])
                while axis < self.ndim - rest:
                    new_shape.append(self.shape[axis])
                    new_strides.append(self.strides[axis])
                    axis += 1
            elif idx is np.newaxis:
                new_shape.append(1)
                new_strides.append(0)
            elif isinstance(idx, slice):
                if axis >= self.ndim:
                    raise IndexError("too many indices for array")
                start, stop, step = idx.indices(self.shape[axis])
                n = len(range(start, stop, step))
                offset += start * self.strides[axis]
                new_shape.append(n)
                new_strides.append(step * self.strides[axis])
                axis += 1
            elif isinstance(idx, (numbers.Integral, np.integer)):
                if axis >= self.ndim:
                    raise IndexError("too many indices for array")
                idx = int(idx)
                if idx < 0:
                    idx += self.shape[axis]
                if not 0 <= idx < self.shape[axis]:
                    raise IndexError("subindex in axis %d out of range" % axis)
                offset += idx * self.strides[axis]
                axis += 1
            else:
                raise IndexError("invalid subindex in axis %d" % axis)
        while axis < self.ndim:
            new_shape.append(self.shape[axis])
            new_strides.append(self.strides[axis])
            axis += 1
        return GPUArray(tuple(new_shape), self.dtype, self.allocator, base=self,
                        gpudata=self.ptr + offset, strides=tuple(new_strides))

    def __setitem__(self, index, value):
        target = self[index]
        if isinstance(value, GPUArray):
            if value.shape != target.shape:
                raise ValueError("shape mismatch in assignment")
            if target.flags.forc and value.flags.forc and value.strides == target.strides:
                drv.memcpy_dtod(target.ptr, value.ptr, target.nbytes)
            else:
                target._set_from_host(value.get())
        elif isinstance(value, np.ndarray):
            target._set_from_host(value)
        else:
            target.fill(value)

    def _set_from_host(self, ary):
        ary = np.broadcast_to(np.asarray(ary, self.dtype), self.shape)
        if self.flags.forc:
            self.set(np.ascontiguousarray(ary) if self.flags.c_contiguous
                     else np.asfortranarray(ary))
        else:
            raise RuntimeError("assignment into a non-contiguous GPUArray is not supported")

    # }}}

    # {{{ reductions

    def any(self, stream=None, allocator=None):
        from pycuda import _ops
        return _ops.reduce(self, "any", stream, allocator)

    def all(self, stream=None, allocator=None):
        from pycuda import _ops
        return _ops.reduce(self, "all", stream, allocator)

    def get_real_dtype(self):
        return np.empty(0, self.dtype).real.dtype

    # }}}


# {{{ creation

# {{{ DLPack

_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
# NumPy's dtype kinds and DLPack's type codes (kDLInt, kDLUInt, kDLFloat, kDLComplex,
# kDLBool).
_DL_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_DL_KINDS = {code: kind for kind, code in _DL_CODES.items()}


def _dl_type(dtype):
    """DLPack's ``(code, bits)`` of a NumPy dtype."""
    dtype = np.dtype(dtype)
    code = _DL_CODES.get(dtype.kind)
    if code is None or dtype.fields is not None or not dtype.isnative:
        raise BufferError(f"DLPack has no type for the dtype {dtype}")
    return (code, 8 * dtype.itemsize)


def _np_dtype(code, bits, lanes):
    """The NumPy dtype of DLPack's ``(code, bits, lanes)``."""
    kind = _DL_KINDS.get(code)
    if kind is None or lanes != 1 or bits % 8 or (kind == "b" and bits != 8):
        raise BufferError(f"from_dlpack: no NumPy dtype for DLPack type code {code}, "
                          f"{bits} bits, {lanes} lanes")
    return np.dtype("?" if kind == "b" else f"{kind}{bits // 8}")


def from_dlpack(x, /, *, device=None, copy=None):
    """A GPUArray over the memory of ``x`` (an object with ``__dlpack__``, such as a CuPy
    array or a PyTorch CUDA tensor, or a DLPack capsule), no copy: the producer's memory
    stays alive while the GPUArray does. The producer orders its pending work before the
    legacy default stream, where GPUArrays work."""
    if copy:
        raise BufferError("from_dlpack: copy=True is not supported")
    if hasattr(x, "__dlpack__"):
        if hasattr(x, "__dlpack_device__"):
            kind, _ = x.__dlpack_device__()
            if kind not in (_DL_CUDA, _DL_CUDA_MANAGED):
                raise BufferError(f"from_dlpack: the array is on DLPack device type "
                                  f"{kind}, not in CUDA memory")
        try:
            capsule = x.__dlpack__(stream=1, max_version=(1, 1))
        except TypeError:
            capsule = x.__dlpack__(stream=1)
    else:
        capsule = x
    holder, shape, strides, (code, bits, lanes), _device = _native.dlpack_take(capsule)
    dtype = _np_dtype(code, bits, lanes)
    if strides is not None:
        strides = tuple(st * dtype.itemsize for st in strides)
    return GPUArray(tuple(shape), dtype, gpudata=holder, strides=strides)

# }}}


def to_gpu(ary, allocator=None):
    ary = np.asarray(ary)
    order = "F" if ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"
    result = GPUArray(ary.shape, ary.dtype, allocator, order=order)
    if not ary.flags.forc:
        ary = np.ascontiguousarray(ary)
        result = GPUArray(ary.shape, ary.dtype, allocator)
    result.set(ary)
    return result


def to_gpu_async(ary, allocator=None, stream=None):
    result = GPUArray(ary.shape, ary.dtype, allocator)
    result.set(np.ascontiguousarray(ary), async_=True, stream=stream)
    return result


empty = GPUArray


def zeros(shape, dtype=np.float64, allocator=None, order="C"):
    result = GPUArray(shape, dtype, allocator, order=order)
    if result.nbytes:
        drv.memset_d8(result.ptr, 0, result.nbytes)
    return result


def ones(shape, dtype=np.float64, allocator=None, order="C"):
    result = GPUArray(shape, dtype, allocator, order=order)
    result.fill(1)
    return result


def _like_order(other_ary, order):
    if order == "K":
        return "F" if other_ary.flags.f_contiguous and not other_ary.flags.c_contiguous else "C"
    if order == "A":
        return "F" if other_ary.flags.f_contiguous and not other_ary.flags.c_contiguous else "C"
    return order


def empty_like(other_ary, dtype=None, order="K"):
    dtype = other_ary.dtype if dtype is None else dtype
    return GPUArray(other_ary.shape, dtype, other_ary.allocator,
                    order=_like_order(other_ary, order))


def zeros_like(other_ary, dtype=None, order="K"):
    result = empty_like(other_ary, dtype, order)
    if result.nbytes:
        drv.memset_d8(result.ptr, 0, result.nbytes)
    return result


def ones_like(other_ary, dtype=None, order="K"):
    result = empty_like(other_ary, dtype, order)
    result.fill(1)
    return result


def arange(*args, **kwargs):
    dtype = kwargs.pop("dtype", None)
    allocator = kwargs.pop("allocator", None)
    host = np.arange(*args, dtype=dtype) if dtype is not None else np.arange(*args)
    result = GPUArray(host.shape, host.dtype, allocator)
    if host.size:
        from pycuda import _ops
        _ops.arange(result, host[0], (host[1] - host[0]) if host.size > 1 else 0)
    return result


# }}}

# {{{ functions over arrays (in pycuda._ops)

def _ops_function(name):
    def f(*args, **kwargs):
        from pycuda import _ops
        return getattr(_ops, name)(*args, **kwargs)
    f.__name__ = name
    return f


for _name in ["sum", "dot", "vdot", "max", "min", "subset_max", "subset_min",
              "subset_sum", "subset_dot", "maximum", "minimum", "if_positive", "where",
              "take", "multi_take", "put", "concatenate", "stack", "reverse", "logical_and",
              "logical_or", "logical_not", "multi_put", "multi_take_put", "transpose",
              "reshape", "real", "imag", "conj", "any", "all"]:
    globals()[_name] = _ops_function(_name)

# }}}

# {{{ sorting and its family (rucuda's addition; NumPy's names, in pycuda._sorting)

from pycuda._sorting import (  # noqa: E402
    argsort, bincount, histogram, searchsorted, sort, topk, unique)

# }}}

__all__ = ["GPUArray", "vec", "to_gpu", "from_dlpack", "to_gpu_async", "empty", "zeros", "ones",
           "empty_like", "zeros_like", "ones_like", "arange", "get_or_register_dtype",
           "dtype_to_ctype"]
