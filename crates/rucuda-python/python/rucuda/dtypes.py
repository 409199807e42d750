"""NumPy dtypes and their C names (PyCUDA's ``dtype_to_ctype`` registry). Pure Python."""
from __future__ import annotations

import numpy as np

_NAME_TO_DTYPE = {}
_DTYPE_TO_NAME = {}


def register_dtype(dtype, c_names, alias_ok=False):
    """Registers ``dtype`` under one or more C names; the first is the one
    ``dtype_to_ctype`` gives."""
    dtype = np.dtype(dtype)
    if isinstance(c_names, str):
        c_names = [c_names]
    for name in c_names:
        if name in _NAME_TO_DTYPE and _NAME_TO_DTYPE[name] != dtype:
            raise RuntimeError(f"name '{name}' already registered")
        _NAME_TO_DTYPE[name] = dtype
    if dtype in _DTYPE_TO_NAME and not alias_ok:
        return
    _DTYPE_TO_NAME.setdefault(dtype, c_names[0])


def get_or_register_dtype(c_names, dtype=None):
    """The dtype of a C name; with ``dtype``, registers it first."""
    if dtype is not None:
        register_dtype(dtype, c_names, alias_ok=True)
        return np.dtype(dtype)
    if isinstance(c_names, str):
        c_names = [c_names]
    for name in c_names:
        if name in _NAME_TO_DTYPE:
            return _NAME_TO_DTYPE[name]
    raise TypeError(f"unknown C type name(s) {c_names!r}")


def dtype_to_ctype(dtype):
    """The C type name of a NumPy dtype (``float32`` -> ``float``)."""
    if dtype is None:
        raise ValueError("dtype may not be None")
    dtype = np.dtype(dtype)
    try:
        return _DTYPE_TO_NAME[dtype]
    except KeyError:
        raise ValueError(f"unable to map dtype '{dtype}'") from None


def _fill():
    reg = register_dtype
    reg(np.bool_, ["bool"])
    reg(np.int8, ["signed char", "char"])
    reg(np.uint8, ["unsigned char"])
    reg(np.int16, ["short", "signed short", "signed short int", "short signed int"])
    reg(np.uint16, ["unsigned short", "unsigned short int", "short unsigned int"])
    reg(np.int32, ["int", "signed int"])
    reg(np.uint32, ["unsigned", "unsigned int"])
    # long is 64-bit on Linux (LP64), as NumPy's int64 is.
    reg(np.int64, ["long", "long int", "signed long", "long long"])
    reg(np.uint64, ["unsigned long", "unsigned long int", "unsigned long long"])
    reg(np.intp, ["ptrdiff_t"], alias_ok=False)
    reg(np.uintp, ["size_t"], alias_ok=False)
    reg(np.float16, ["__half", "half"])
    reg(np.float32, ["float"])
    reg(np.float64, ["double"])
    reg(np.complex64, ["pycuda::complex<float>"])
    reg(np.complex128, ["pycuda::complex<double>"])


_fill()


def parse_c_arg(c_arg):
    """``"float *x"`` -> ``VectorArg(float32, "x")``; ``"int n"`` -> ``ScalarArg``."""
    c_arg = c_arg.replace("const", "").replace("volatile", "").replace("__restrict__", "")
    c_arg = c_arg.strip()
    import re
    m = re.match(r"^(.*?)([a-zA-Z0-9_]+)\s*(\[\s*\])?$", c_arg)
    if m is None:
        raise ValueError(f"could not parse C argument {c_arg!r}")
    tp, name = m.group(1).strip(), m.group(2)
    if m.group(3) or tp.endswith("*"):
        tp = tp.rstrip("*").strip()
        return VectorArg(get_or_register_dtype(tp), name)
    return ScalarArg(get_or_register_dtype(" ".join(tp.split())), name)


class Argument:
    def __init__(self, dtype, name):
        self.dtype = np.dtype(dtype)
        self.name = name

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r}, {self.dtype})"


class VectorArg(Argument):
    def declarator(self):
        return f"{dtype_to_ctype(self.dtype)} *{self.name}"

    struct_char = "P"


class ScalarArg(Argument):
    def declarator(self):
        return f"{dtype_to_ctype(self.dtype)} {self.name}"

    @property
    def struct_char(self):
        result = self.dtype.char
        if result == "V":
            result = f"{self.dtype.itemsize}s"
        return result


def parse_arguments(arguments):
    """A comma-separated C argument list, or a list of Argument objects."""
    if isinstance(arguments, str):
        arguments = [a for a in arguments.split(",") if a.strip()]
    return [parse_c_arg(a) if isinstance(a, str) else a for a in arguments]


def bitlog2(n):
    """The index of the highest set bit (PyCUDA's ``bitlog2``)."""
    n = int(n)
    return n.bit_length() - 1 if n > 0 else 0


_LEADING_BITS = 4


def _shift(x, by):
    return x << by if by >= 0 else x >> -by


def bin_number(size):
    """The memory pool bin of a request of ``size`` bytes (PyCUDA's numbering)."""
    size = int(size)
    log = bitlog2(size)
    shifted = _shift(size, _LEADING_BITS - log)
    return (log << _LEADING_BITS) | (shifted & ((1 << _LEADING_BITS) - 1))


def alloc_size(bin_nr):
    """The block size of a bin: ``bin_number(alloc_size(b)) == b``."""
    exponent = bin_nr >> _LEADING_BITS
    mantissa = bin_nr & ((1 << _LEADING_BITS) - 1)
    by = exponent - _LEADING_BITS
    ones = max(_shift(1, by) - 1, 0)
    head = _shift((1 << _LEADING_BITS) | mantissa, by)
    return head | ones
