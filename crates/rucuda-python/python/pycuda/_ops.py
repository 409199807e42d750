"""The operations behind ``GPUArray``'s operators and ``pycuda.gpuarray``'s functions:
each builds (once per dtype signature) an ``ElementwiseKernel`` or ``ReductionKernel``."""
from __future__ import annotations

import numbers

import numpy as np

from pycuda.elementwise import ElementwiseKernel
from pycuda.reduction import ReductionKernel
from rucuda import _native, kernels
from rucuda.dtypes import dtype_to_ctype

_KERNELS = {}


def _kernel(key, make):
    k = _KERNELS.get(key)
    if k is None:
        k = _KERNELS[key] = make()
    return k


def _ct(dtype):
    return dtype_to_ctype(np.dtype(dtype))


def _is_array(x):
    """A GPUArray (or anything shaped like one: gpudata, shape, dtype)."""
    return hasattr(x, "gpudata") and hasattr(x, "shape") and hasattr(x, "dtype")


def _is_scalar(x):
    return isinstance(x, (numbers.Number, np.generic)) or (
        isinstance(x, np.ndarray) and x.shape == ())


def _require_complex_free(*dtypes):
    """Refuses complex operands where NumPy's meaning has no kernel here (orderings)."""
    for dt in dtypes:
        if np.dtype(dt).kind == "c":
            raise NotImplementedError(
                "this operation is not supported for complex GPUArrays")


_ORDERED = {"<", "<=", ">", ">="}


def _convert(expr, src, dst):
    """C for ``expr`` (of dtype ``src``) converted to ``dst``: NumPy's casts (a complex
    value to a real type keeps its real part; comparisons are already bool)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src.kind == "c" and dst.kind != "c" and not expr.startswith("(("):
        return f"({_ct(dst)}) real({expr})"
    return f"({_ct(dst)}) ({expr})"


def _check_pair(a, b):
    if a.shape != b.shape:
        raise ValueError(f"shapes {a.shape} and {b.shape} differ")
    if not (a.flags.forc and b.flags.forc):
        raise RuntimeError("only contiguous arrays may be used as arguments to this "
                           "operation")
    same_order = (a.flags.c_contiguous and b.flags.c_contiguous) or (
        a.flags.f_contiguous and b.flags.f_contiguous)
    if a.size > 1 and not same_order:
        raise RuntimeError("arrays of different memory order are not supported here")


_COMPARE = {"==", "!=", "<", "<=", ">", ">="}


def _expr(op, x, y, ct):
    if op == "pow":
        if ct in ("float", "double") or ct.startswith("pycuda::complex"):
            return f"pow(({ct})({x}), ({ct})({y}))"
        return f"({ct}) pow((double)({x}), (double)({y}))"
    return f"(({ct})({x})) {op} (({ct})({y}))"


def binary_kernel(op, a_dtype, b_dtype, compute, result_dtype, reverse=False):
    """The kernel ``z[i] = a[i] op b[i]`` (computed in ``compute``), memoized:
    ``(z, a, b, n)``, every argument one 8-byte word."""
    key = ("bin", op, a_dtype, b_dtype, result_dtype, reverse)
    ct = _ct(compute)
    x, y = ("b[i]", "a[i]") if reverse else ("a[i]", "b[i]")
    return _kernel(key, lambda: ElementwiseKernel(
        f"{_ct(result_dtype)} *z, const {_ct(a_dtype)} *a, const {_ct(b_dtype)} *b",
        f"z[i] = {_convert(f'({_expr(op, x, y, ct)})', compute, result_dtype)}",
        "rucuda_binary_op"))


# The fast path of `a op b` between two C-contiguous GPUArrays of one dtype and shape:
# (context handle, op, dtype char) -> (kernel, most blocks), or False where the op has no
# fast kernel for the dtype. Everything else takes `binary`.
_FAST = {}
kernels.remember_cache(_FAST)
# The same, native, per (context, signature, op): what `GPUArray`'s operators try first
# (fast_binary registers each kernel there once it has launched it).
FAST_TABLE = _native.FastTable()
kernels.remember_cache(FAST_TABLE)
_FAST_DTYPES = {np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64,
                                      np.uint32, np.uint64)}
# Interned fast-path signatures, one per (dtype char, shape): equal ones are one object,
# so two arrays of one dtype and shape match by identity. Bounded: past the limit it
# starts over (older signatures still match by equality).
_SIGS = {}
_SIGS_MAX = 4096
_new_object = object.__new__
_DeviceAllocation = _native.DeviceAllocation


class _Sig:
    """A fast-path signature: the dtype char and shape of a non-empty C-contiguous array
    of a fast dtype, and ``result``, the attributes of a fresh array of that signature
    made by the default allocator, all but ``gpudata`` (copied for each result: a dict
    copy costs half of building the dict anew)."""

    __slots__ = ("key", "result")

    def __init__(self, key, dtype, size):
        from pycuda.gpuarray import _c_strides  # gpuarray imports this module

        self.key = key
        _char, shape = key
        self.result = {"shape": shape, "dtype": dtype, "size": size,
                       "nbytes": size * dtype.itemsize,
                       "strides": _c_strides(shape, dtype.itemsize),
                       "allocator": _native.mem_alloc_async, "gpudata": None,
                       "base": None, "mem_size": size, "_fast": self}

    def __eq__(self, other):
        return isinstance(other, _Sig) and other.key == self.key

    def __hash__(self):
        return hash(self.key)


def fast_sig(a):
    """``a``'s fast-path signature (a :class:`_Sig`), kept on the array (its shape,
    strides and dtype never change), for a non-empty C-contiguous array of a fast dtype;
    else False."""
    dt = a.dtype
    sig = False
    if dt in _FAST_DTYPES and a.size and a.flags.c_contiguous:
        key = (dt.char, a.shape)
        sig = _SIGS.get(key)
        if sig is None:
            if len(_SIGS) >= _SIGS_MAX:
                _SIGS.clear()
            sig = _SIGS[key] = _Sig(key, dt, a.size)
    a.__dict__["_fast"] = sig
    return sig


def _fast_entry(key, op, char):
    dt = np.dtype(char)
    if op == "/" and dt.kind != "f":
        entry = False
    else:
        plain, _ranged, sms = binary_kernel(op, dt, dt, dt, dt)._functions()
        entry = (plain, sms * 16)
    _FAST[key] = entry
    return entry


def fast_binary(a, b, op):
    """``a op b`` for two GPUArrays (exactly that class) of one dtype and shape, both
    C-contiguous, with the result allocated by ``a``'s allocator: one allocation and one
    launch, the argument words packed in Rust. None when the operands need the general
    path."""
    sa = a._fast
    if sa is None:
        sa = fast_sig(a)
    if sa is False:
        return None
    sb = b._fast
    if sb is not sa:
        if sb is None:
            sb = fast_sig(b)
        if sb != sa:
            return None
    key = (_native.current_context_handle(), op, sa.key[0])
    entry = _FAST.get(key)
    if entry is None:
        entry = _fast_entry(key, op, sa.key[0])
    if not entry:
        return None
    func, most = entry
    d = a.__dict__
    result = sa.result
    n = result["size"]
    blocks = (n + 255) >> 8
    if blocks > most:
        blocks = most
    alloc = d["allocator"]
    new = _new_object(type(a))
    if alloc is _native.mem_alloc_async:
        # The default allocator: allocation and launch in one native call, and the
        # result's attributes copied from the signature's.
        x, y = d["gpudata"], b.gpudata
        attrs = result.copy()
        attrs["gpudata"] = func._launch_new(result["nbytes"], blocks, 256, x, y, n)
        if type(x) is _DeviceAllocation and type(y) is _DeviceAllocation:
            # Next time FAST_TABLE does all this natively.
            FAST_TABLE.register(sa, op, func, most, alloc)
    else:
        z = alloc(result["nbytes"])
        func._launch_words(blocks, 256, z, d["gpudata"], b.gpudata, n)
        attrs = {"shape": d["shape"], "dtype": d["dtype"], "size": n,
                 "nbytes": result["nbytes"], "strides": d["strides"], "allocator": alloc,
                 "gpudata": z, "base": None, "mem_size": n, "_fast": sa}
    new.__dict__ = attrs
    return new


def binary(a, b, op, reverse=False, out=None):
    if _is_array(b) and a.shape != b.shape and (b.shape == () or a.shape == ()):
        return _binary_0d(a, b, op, reverse, out)
    if _is_array(b):
        _check_pair(a, b)
        compute = np.result_type(a.dtype, b.dtype)
        if op == "/":
            compute = np.true_divide(np.ones(1, a.dtype), np.ones(1, b.dtype)).dtype
        result_dtype = np.dtype(np.bool_) if op in _COMPARE else compute
        if out is not None:
            result_dtype = out.dtype
        if op in _ORDERED:
            _require_complex_free(a.dtype, b.dtype)
        k = binary_kernel(op, a.dtype, b.dtype, compute, result_dtype, reverse)
        z = out if out is not None else a._new_like_me(result_dtype)
        k(z, a, b)
        return z
    if not _is_scalar(b):
        return NotImplemented
    b_host = np.asarray(b)
    if isinstance(b, (bool, int, float, complex)):
        compute = np.result_type(a.dtype, b)
    else:
        compute = np.result_type(a.dtype, b_host.dtype)
    if op == "/":
        compute = np.result_type(
            np.true_divide(np.ones(1, a.dtype), np.ones(1, compute)).dtype, compute)
    result_dtype = np.dtype(np.bool_) if op in _COMPARE else compute
    if out is not None:
        result_dtype = out.dtype
    if op in _ORDERED:
        _require_complex_free(a.dtype, compute)
    ct = _ct(compute)
    x, y = ("s", "a[i]") if reverse else ("a[i]", "s")
    key = ("scalar", op, a.dtype, compute, result_dtype, reverse)
    k = _kernel(key, lambda: ElementwiseKernel(
        f"{_ct(result_dtype)} *z, const {_ct(a.dtype)} *a, {ct} s",
        f"z[i] = {_convert(f'({_expr(op, x, y, ct)})', compute, result_dtype)}",
        "rucuda_scalar_op"))
    z = out if out is not None else a._new_like_me(result_dtype)
    if not a.flags.forc:
        raise RuntimeError("only contiguous arrays may be used as arguments to this "
                           "operation")
    k(z, a, compute.type(b_host))
    return z


def _binary_0d(a, b, op, reverse, out):
    """An operation between an array and a 0-d array (read as ``[0]`` by every thread)."""
    if a.shape == ():
        # Keep the big array first: the kernel's size is its first array's.
        a, b, reverse = b, a, not reverse
    compute = np.result_type(a.dtype, b.dtype)
    if op == "/":
        compute = np.true_divide(np.ones(1, a.dtype), np.ones(1, b.dtype)).dtype
    result_dtype = np.dtype(np.bool_) if op in _COMPARE else compute
    if out is not None:
        result_dtype = out.dtype
    if op in _ORDERED:
        _require_complex_free(a.dtype, b.dtype)
    if not a.flags.forc:
        raise RuntimeError("only contiguous arrays may be used as arguments to this "
                           "operation")
    ct = _ct(compute)
    x, y = ("b[0]", "a[i]") if reverse else ("a[i]", "b[0]")
    key = ("bin0d", op, a.dtype, b.dtype, result_dtype, reverse)
    k = _kernel(key, lambda: ElementwiseKernel(
        f"{_ct(result_dtype)} *z, const {_ct(a.dtype)} *a, const {_ct(b.dtype)} *b",
        f"z[i] = {_convert(f'({_expr(op, x, y, ct)})', compute, result_dtype)}",
        "rucuda_binary_0d"))
    z = out if out is not None else a._new_like_me(result_dtype)
    k(z, a, b)
    return z


def mul_add(a, afac, b, bfac, out=None, stream=None):
    """``afac * a + bfac * b`` in one kernel."""
    _check_pair(a, b)
    dtype = np.result_type(a.dtype, b.dtype)
    t = _ct(dtype)
    k = _kernel(("mul_add", a.dtype, b.dtype), lambda: ElementwiseKernel(
        f"{t} *z, {t} fa, const {_ct(a.dtype)} *x, {t} fb, const {_ct(b.dtype)} *y",
        f"z[i] = fa * ({t}) x[i] + fb * ({t}) y[i]", "rucuda_mul_add"))
    z = out if out is not None else a._new_like_me(dtype)
    k(z, dtype.type(afac), a, dtype.type(bfac), b, stream=stream)
    return z


def unary(a, op, out=None):
    t = _ct(a.dtype)
    if a.dtype.kind == "c":
        real_dtype = np.empty(0, a.dtype).real.dtype
        if op == "abs":
            k = _kernel(("unary", op, a.dtype), lambda: ElementwiseKernel(
                f"{_ct(real_dtype)} *z, const {t} *a", "z[i] = abs(a[i])", "rucuda_unary_op"))
            z = out if out is not None else a._new_like_me(real_dtype)
        else:
            expr = {"-": "-a[i]", "conj": "conj(a[i])"}[op]
            z_dtype = a.dtype if out is None else out.dtype
            k = _kernel(("unary", op, a.dtype, z_dtype), lambda: ElementwiseKernel(
                f"{_ct(z_dtype)} *z, const {t} *a",
                f"z[i] = {_convert(expr, a.dtype, z_dtype)}", "rucuda_unary_op"))
            z = out if out is not None else a._new_like_me()
        k(z, a)
        return z
    if op == "-":
        expr = f"({t}) (-a[i])"
    elif op == "abs":
        if a.dtype.kind == "u" or a.dtype.kind == "b":
            expr = "a[i]"
        elif a.dtype.kind == "f":
            expr = "fabs(a[i])"
        else:
            expr = f"({t}) (a[i] < 0 ? -a[i] : a[i])"
    else:
        raise ValueError(op)
    k = _kernel(("unary", op, a.dtype), lambda: ElementwiseKernel(
        f"{t} *z, const {t} *a", f"z[i] = {expr}", "rucuda_unary_op"))
    z = out if out is not None else a._new_like_me()
    k(z, a)
    return z


def fill(a, value, stream=None):
    if a.size == 0:
        return
    if not a.flags.forc:
        raise RuntimeError("fill of a non-contiguous GPUArray is not supported")
    if a.dtype.char == "V":
        raw = np.asarray(value, a.dtype).tobytes()
        host = np.frombuffer(raw * a.size, a.dtype).reshape(a.shape)
        a.set(host, async_=stream is not None, stream=stream)
        return
    t = _ct(a.dtype)
    k = _kernel(("fill", a.dtype), lambda: ElementwiseKernel(
        f"{t} *z, {t} v", "z[i] = v", "rucuda_fill"))
    k(a, a.dtype.type(value), stream=stream)


def astype(a, dtype, stream=None):
    dtype = np.dtype(dtype)
    k = _kernel(("astype", a.dtype, dtype), lambda: ElementwiseKernel(
        f"{_ct(dtype)} *z, const {_ct(a.dtype)} *a",
        f"z[i] = {_convert('a[i]', a.dtype, dtype)}", "rucuda_astype"))
    if not a.flags.forc:
        raise RuntimeError("astype of a non-contiguous GPUArray is not supported")
    z = a._new_like_me(dtype)
    k(z, a, stream=stream)
    return z


def arange(z, start, step):
    t = _ct(z.dtype)
    if z.dtype.kind == "f":
        k = _kernel(("arange", z.dtype), lambda: ElementwiseKernel(
            f"{t} *z, double start, double step", f"z[i] = ({t}) (start + i * step)",
            "rucuda_arange"))
        k(z, float(start), float(step))
    else:
        k = _kernel(("arange", z.dtype), lambda: ElementwiseKernel(
            f"{t} *z, long long start, long long step", f"z[i] = ({t}) (start + i * step)",
            "rucuda_arange"))
        k(z, int(start), int(step))


# {{{ reductions

def _extreme(dtype, which):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        sign = "-" if which == "max" else ""
        inf = "__longlong_as_double(0x7ff0000000000000LL)" if dtype.itemsize == 8 \
            else "__int_as_float(0x7f800000)"
        return f"({_ct(dtype)}) ({sign}{inf})"
    info = np.iinfo(dtype)
    v = info.min if which == "max" else info.max
    return f"({_ct(dtype)}) ({v}{'ULL' if dtype.kind == 'u' else 'LL'})" if v >= 0 or \
        dtype.kind == "u" else f"({_ct(dtype)}) ({v + 1}LL - 1)"


def _sum_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.dtype(np.int64)
    return dtype


def sum(a, dtype=None, stream=None, allocator=None):  # noqa: A001
    dtype = _sum_dtype(a.dtype) if dtype is None else np.dtype(dtype)
    k = _kernel(("sum", a.dtype, dtype), lambda: ReductionKernel(
        dtype, "0", "a+b", f"({_ct(dtype)}) in[i]", f"const {_ct(a.dtype)} *in",
        name="rucuda_sum"))
    return k(a, stream=stream, allocator=allocator)


def subset_sum(subset, a, dtype=None, stream=None, allocator=None):
    dtype = _sum_dtype(a.dtype) if dtype is None else np.dtype(dtype)
    k = _kernel(("subset_sum", a.dtype, subset.dtype, dtype), lambda: ReductionKernel(
        dtype, "0", "a+b", f"({_ct(dtype)}) in[lookup[i]]",
        f"const {_ct(subset.dtype)} *lookup, const {_ct(a.dtype)} *in", name="rucuda_subset_sum"))
    return k(subset, a, stream=stream, allocator=allocator)


def dot(a, b, dtype=None, stream=None, allocator=None):
    dtype = np.result_type(a.dtype, b.dtype) if dtype is None else np.dtype(dtype)
    _check_pair(a, b)
    k = _kernel(("dot", a.dtype, b.dtype, dtype), lambda: ReductionKernel(
        dtype, "0", "a+b", f"({_ct(dtype)}) x[i] * ({_ct(dtype)}) y[i]",
        f"const {_ct(a.dtype)} *x, const {_ct(b.dtype)} *y", name="rucuda_dot"))
    return k(a, b, stream=stream, allocator=allocator)


vdot = dot


def subset_dot(subset, a, b, dtype=None, stream=None, allocator=None):
    dtype = np.result_type(a.dtype, b.dtype) if dtype is None else np.dtype(dtype)
    k = _kernel(("subset_dot", a.dtype, b.dtype, subset.dtype, dtype),
                lambda: ReductionKernel(
        dtype, "0", "a+b",
        f"({_ct(dtype)}) x[lookup[i]] * ({_ct(dtype)}) y[lookup[i]]",
        f"const {_ct(subset.dtype)} *lookup, const {_ct(a.dtype)} *x, "
        f"const {_ct(b.dtype)} *y", name="rucuda_subset_dot"))
    return k(subset, a, b, stream=stream, allocator=allocator)


def _minmax(which, a, stream=None):
    _require_complex_free(a.dtype)
    t = _ct(a.dtype)
    pick = "a > b ? a : b" if which == "max" else "a < b ? a : b"
    if a.dtype.kind == "f":
        pick = f"f{which}(a, b)"
    k = _kernel((which, a.dtype), lambda: ReductionKernel(
        a.dtype, _extreme(a.dtype, which), pick, "in[i]", f"const {t} *in", name="rucuda_" + which))
    return k(a, stream=stream)


def max(a, stream=None):  # noqa: A001
    return _minmax("max", a, stream)


def min(a, stream=None):  # noqa: A001
    return _minmax("min", a, stream)


def _subset_minmax(which, subset, a, stream=None):
    _require_complex_free(a.dtype)
    t = _ct(a.dtype)
    pick = "a > b ? a : b" if which == "max" else "a < b ? a : b"
    if a.dtype.kind == "f":
        pick = f"f{which}(a, b)"
    k = _kernel(("subset_" + which, a.dtype, subset.dtype), lambda: ReductionKernel(
        a.dtype, _extreme(a.dtype, which), pick, "in[lookup[i]]",
        f"const {_ct(subset.dtype)} *lookup, const {t} *in", name="rucuda_subset_" + which))
    return k(subset, a, stream=stream)


def subset_max(subset, a, stream=None):
    return _subset_minmax("max", subset, a, stream)


def subset_min(subset, a, stream=None):
    return _subset_minmax("min", subset, a, stream)


def reduce(a, kind, stream=None, allocator=None):
    t = _ct(a.dtype)
    if kind == "any":
        k = _kernel(("any", a.dtype), lambda: ReductionKernel(
            np.bool_, "false", "a || b", "in[i] != 0", f"const {t} *in", name="rucuda_any"))
    else:
        k = _kernel(("all", a.dtype), lambda: ReductionKernel(
            np.bool_, "true", "a && b", "in[i] != 0", f"const {t} *in", name="rucuda_all"))
    return k(a, stream=stream, allocator=allocator)


def any(a, stream=None, allocator=None):  # noqa: A001
    return reduce(a, "any", stream, allocator)


def all(a, stream=None, allocator=None):  # noqa: A001
    return reduce(a, "all", stream, allocator)

# }}}


# {{{ selections and joins

def _elementwise_pick(name, expr, a, b, out=None, stream=None):
    if _is_array(a) and _is_array(b):
        _check_pair(a, b)
        dtype = np.result_type(a.dtype, b.dtype)
        k = _kernel((name, a.dtype, b.dtype), lambda: ElementwiseKernel(
            f"{_ct(dtype)} *z, const {_ct(a.dtype)} *x, const {_ct(b.dtype)} *y",
            f"z[i] = {expr}", "rucuda_" + name))
        z = out if out is not None else a._new_like_me(dtype)
        k(z, a, b, stream=stream)
        return z
    if _is_array(b):
        a, b = b, a
    dtype = np.result_type(a.dtype, b)
    k = _kernel((name + "_s", a.dtype, dtype), lambda: ElementwiseKernel(
        f"{_ct(dtype)} *z, const {_ct(a.dtype)} *x, {_ct(dtype)} ys",
        f"z[i] = {expr.replace('y[i]', 'ys')}", "rucuda_" + name))
    z = out if out is not None else a._new_like_me(dtype)
    k(z, a, dtype.type(b), stream=stream)
    return z


def maximum(a, b, out=None, stream=None):
    return _elementwise_pick("maximum", "(x[i] > y[i] ? x[i] : y[i])", a, b, out, stream)


def minimum(a, b, out=None, stream=None):
    return _elementwise_pick("minimum", "(x[i] < y[i] ? x[i] : y[i])", a, b, out, stream)


def _select(name, cond_expr, crit, then_, else_, out=None, stream=None):
    _check_pair(crit, then_)
    _check_pair(then_, else_)
    dtype = np.result_type(then_.dtype, else_.dtype)
    k = _kernel((name, crit.dtype, then_.dtype, else_.dtype), lambda: ElementwiseKernel(
        f"{_ct(dtype)} *z, const {_ct(crit.dtype)} *c, const {_ct(then_.dtype)} *t, "
        f"const {_ct(else_.dtype)} *e",
        f"z[i] = {cond_expr} ? t[i] : e[i]", "rucuda_" + name))
    z = out if out is not None else then_._new_like_me(dtype)
    k(z, crit, then_, else_, stream=stream)
    return z


def if_positive(criterion, then_, else_, out=None, stream=None):
    return _select("if_positive", "(c[i] > 0)", criterion, then_, else_, out, stream)


def where(criterion, then_, else_, out=None, stream=None):
    return _select("where", "(c[i] != 0)", criterion, then_, else_, out, stream)


def take(a, indices, out=None, stream=None):
    k = _kernel(("take", a.dtype, indices.dtype), lambda: ElementwiseKernel(
        f"{_ct(a.dtype)} *z, const {_ct(a.dtype)} *a, const {_ct(indices.dtype)} *idx",
        "z[i] = a[idx[i]]", "rucuda_take"))
    z = out if out is not None else type(a)(indices.shape, a.dtype)
    k(z, a, indices, stream=stream)
    return z


def reverse(a, stream=None):
    if not a.flags.c_contiguous:
        raise RuntimeError("only contiguous arrays may be used")
    k = _kernel(("reverse", a.dtype), lambda: ElementwiseKernel(
        f"{_ct(a.dtype)} *z, const {_ct(a.dtype)} *a",
        "z[i] = a[n - 1 - i]", "rucuda_reverse"))
    z = a._new_like_me()
    k(z, a, stream=stream)
    return z


def concatenate(arrays, axis=0, allocator=None):
    from pycuda.gpuarray import to_gpu
    return to_gpu(np.concatenate([x.get() for x in arrays], axis=axis))


def stack(arrays, axis=0, allocator=None):
    from pycuda.gpuarray import to_gpu
    return to_gpu(np.stack([x.get() for x in arrays], axis=axis))


def _logical(name, expr, a, b=None):
    if b is None:
        k = _kernel((name, a.dtype), lambda: ElementwiseKernel(
            f"bool *z, const {_ct(a.dtype)} *x", f"z[i] = {expr}", "rucuda_" + name))
        z = a._new_like_me(np.bool_)
        k(z, a)
        return z
    if not _is_array(a):
        a, b = b, a
    if _is_array(b):
        _check_pair(a, b)
        k = _kernel((name, a.dtype, b.dtype), lambda: ElementwiseKernel(
            f"bool *z, const {_ct(a.dtype)} *x, const {_ct(b.dtype)} *y",
            f"z[i] = {expr}", "rucuda_" + name))
        z = a._new_like_me(np.bool_)
        k(z, a, b)
        return z
    bdt = np.asarray(b).dtype
    k = _kernel((name + "_s", a.dtype, bdt), lambda: ElementwiseKernel(
        f"bool *z, const {_ct(a.dtype)} *x, {_ct(bdt)} ys",
        f"z[i] = {expr.replace('y[i]', 'ys')}", "rucuda_" + name))
    z = a._new_like_me(np.bool_)
    k(z, a, bdt.type(b))
    return z


def logical_and(x1, x2, out=None, allocator=None):
    return _logical("logical_and", "(x[i] != 0) && (y[i] != 0)", x1, x2)


def logical_or(x1, x2, out=None, allocator=None):
    return _logical("logical_or", "(x[i] != 0) || (y[i] != 0)", x1, x2)


def logical_not(x, out=None, allocator=None):
    return _logical("logical_not", "(x[i] == 0)", x)


def transpose(a, axes=None):
    return a.transpose(axes)


def reshape(a, shape, order="C"):
    return a.reshape(shape, order=order)


def real(a):
    return a.real


def imag(a):
    return a.imag


def conj(a):
    return a.conj()


def multi_take(arrays, indices, out=None, stream=None):
    if out is None:
        return [take(a, indices, stream=stream) for a in arrays]
    if len(out) != len(arrays):
        raise ValueError("out and arrays must have the same length")
    return [take(a, indices, o, stream=stream) for a, o in zip(arrays, out)]


def _one_dtype(arrays, what):
    dtypes = {np.dtype(a.dtype) for a in arrays}
    if len(dtypes) != 1:
        raise ValueError(f"{what} must all have one dtype, not {sorted(map(str, dtypes))}")
    return dtypes.pop()


def _put_targets(arrays, dest_shape, out):
    """PyCUDA's ``out`` of the multi puts: new arrays of ``dest_shape`` (the first
    array's allocator), or the given ones, checked."""
    dtype = _one_dtype(arrays, "arrays")
    if out is None:
        if dest_shape is None:
            raise ValueError("dest_shape or out is needed")
        first = arrays[0]
        return dtype, [type(first)(dest_shape, dtype, first.allocator) for _ in arrays]
    if dtype != _one_dtype(out, "out"):
        raise TypeError("arrays and out must have the same dtype")
    if len(out) != len(arrays):
        raise ValueError("out and arrays must have the same length")
    return dtype, list(out)


def multi_put(arrays, dest_indices, dest_shape=None, out=None, stream=None):
    """``out[k][dest_indices[i]] = arrays[k][i]`` for each array k."""
    if not len(arrays):
        return []
    dtype, out = _put_targets(arrays, dest_shape, out)
    if len(dest_indices.shape) != 1:
        raise ValueError("dest_indices must be 1D")
    for a in arrays:
        if a.size < dest_indices.size:
            raise ValueError(f"an array of {a.size} elements for {dest_indices.size} "
                             "destination indices")
    t, it = _ct(dtype), _ct(dest_indices.dtype)
    k = _kernel(("multi_put", dtype, dest_indices.dtype), lambda: ElementwiseKernel(
        f"const {it} *dest_idx, {t} *dest, const {t} *src", "dest[dest_idx[i]] = src[i]",
        "rucuda_multi_put"))
    for o, a in zip(out, arrays):
        k(dest_indices, o, a, stream=stream)
    return out


def multi_take_put(arrays, dest_indices, src_indices, dest_shape=None, out=None,
                   stream=None, src_offsets=None):
    """``out[k][dest_indices[i]] = arrays[k][src_indices[i] + src_offsets[k]]`` for each
    array k (offsets 0 when not given)."""
    if not len(arrays):
        return []
    dtype, out = _put_targets(arrays, dest_shape, out)
    if src_indices.dtype != dest_indices.dtype:
        raise TypeError("src_indices and dest_indices must have the same dtype")
    if len(src_indices.shape) != 1:
        raise ValueError("src_indices must be 1D")
    if src_indices.shape != dest_indices.shape:
        raise ValueError("src_indices and dest_indices must have the same shape")
    if src_offsets is not None and len(src_offsets) != len(arrays):
        raise ValueError("src_indices and src_offsets must have the same length")
    idx = np.dtype(src_indices.dtype)
    t, it = _ct(dtype), _ct(idx)
    k = _kernel(("multi_take_put", dtype, idx), lambda: ElementwiseKernel(
        f"const {it} *dest_idx, const {it} *src_idx, {t} *dest, const {t} *src, "
        f"{it} offset", "dest[dest_idx[i]] = src[src_idx[i] + offset]",
        "rucuda_multi_take_put"))
    for j, (o, a) in enumerate(zip(out, arrays)):
        offset = 0 if src_offsets is None else src_offsets[j]
        k(dest_indices, src_indices, o, a, idx.type(offset), stream=stream)
    return out


def part(a, which, out=None):
    """The real or imaginary part of a complex array, or its conjugate."""
    t = _ct(a.dtype)
    if which == "conj":
        return unary(a, "conj", out)
    real_dtype = np.empty(0, a.dtype).real.dtype
    k = _kernel((which, a.dtype), lambda: ElementwiseKernel(
        f"{_ct(real_dtype)} *z, const {t} *a", f"z[i] = {which}(a[i])", "rucuda_" + which))
    z = out if out is not None else a._new_like_me(real_dtype)
    k(z, a)
    return z

# }}}
