"""``pycuda.cumath``: CUDA's math functions over every element of a GPUArray."""
from __future__ import annotations

import numpy as np

from pycuda.elementwise import ElementwiseKernel
from rucuda.dtypes import dtype_to_ctype

_KERNELS = {}


def _split(args, kwargs):
    """PyCUDA's ``f(array, [out or stream], out=None, stream=None)``."""
    from rucuda._native import Stream
    out = kwargs.pop("out", None)
    stream = kwargs.pop("stream", None)
    if kwargs:
        raise TypeError("invalid keyword arguments: " + ", ".join(sorted(kwargs)))
    for a in args:
        if isinstance(a, Stream):
            stream = a
        elif a is not None:
            out = a
    return out, stream


def _unary(name, c_name=None):
    c_name = c_name or name

    def f(array, *args, **kwargs):
        out, stream = _split(args, kwargs)
        if array.dtype.kind not in "fc":
            raise NotImplementedError(
                f"cumath.{name}: only float and complex arrays are supported")
        t = dtype_to_ctype(array.dtype)
        key = (name, array.dtype)
        k = _KERNELS.get(key)
        if k is None:
            k = _KERNELS[key] = ElementwiseKernel(
                f"{t} *z, const {t} *y", f"z[i] = {c_name}(y[i])", f"{name}_kernel")
        if out is None:
            out = array._new_like_me()
        k(out, array, stream=stream)
        return out

    f.__name__ = name
    f.__doc__ = f"Elementwise {name} of a float32 or float64 GPUArray."
    return f


fabs = _unary("fabs")
ceil = _unary("ceil")
floor = _unary("floor")
exp = _unary("exp")
log = _unary("log")
log10 = _unary("log10")
sqrt = _unary("sqrt")
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
asin = _unary("asin")
acos = _unary("acos")
atan = _unary("atan")
sinh = _unary("sinh")
cosh = _unary("cosh")
tanh = _unary("tanh")


def _kernel(key, args, op, name):
    k = _KERNELS.get(key)
    if k is None:
        k = _KERNELS[key] = ElementwiseKernel(args, op, name)
    return k


def fmod(arg, mod, stream=None):
    t = dtype_to_ctype(arg.dtype)
    k = _kernel(("fmod", arg.dtype), f"{t} *z, const {t} *arg, const {t} *mod",
                "z[i] = fmod(arg[i], mod[i])", "fmod_kernel")
    out = arg._new_like_me()
    k(out, arg, mod, stream=stream)
    return out


def ldexp(significand, exponent, stream=None):
    t = dtype_to_ctype(significand.dtype)
    te = dtype_to_ctype(exponent.dtype)
    k = _kernel(("ldexp", significand.dtype, exponent.dtype),
                f"{t} *z, const {t} *sig, const {te} *ex",
                "z[i] = ldexp(sig[i], (int) ex[i])", "ldexp_kernel")
    out = significand._new_like_me()
    k(out, significand, exponent, stream=stream)
    return out


def modf(arg, stream=None):
    t = dtype_to_ctype(arg.dtype)
    k = _kernel(("modf", arg.dtype), f"{t} *frac, {t} *ipart, const {t} *x",
                "frac[i] = modf(x[i], &ipart[i])", "modf_kernel")
    frac = arg._new_like_me()
    ipart = arg._new_like_me()
    k(frac, ipart, arg, stream=stream)
    return frac, ipart


def frexp(arg, stream=None):
    t = dtype_to_ctype(arg.dtype)
    k = _kernel(("frexp", arg.dtype), f"{t} *sig, {t} *ex, const {t} *x",
                "int e; sig[i] = frexp(x[i], &e); ex[i] = e", "frexp_kernel")
    sig = arg._new_like_me()
    ex = arg._new_like_me()
    k(sig, ex, arg, stream=stream)
    return sig, ex
