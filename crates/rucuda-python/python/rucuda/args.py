"""Kernel arguments as PyCUDA packs them: struct format strings and argument buffers.

Pure Python (no driver needed): ``pycuda.driver`` uses it for ``Function.__call__`` and
``prepare``/``prepared_call``.
"""
from __future__ import annotations

import re
import struct

import numpy as np

_ITEM = re.compile(r"\s*(\d*)([xcbB?hHiIlLqQnNefdspP])")


def format_sizes(fmt):
    """The bytes of each argument a struct format describes (``"iPf"`` -> [4, 8, 4];
    ``"12s"`` is one argument of 12 bytes; ``"3i"`` three of 4). Raises ValueError on a
    character struct does not know."""
    body = fmt.lstrip("@=<>!")
    sizes = []
    pos = 0
    while pos < len(body):
        if body[pos].isspace():
            pos += 1
            continue
        m = _ITEM.match(body, pos)
        if m is None:
            raise ValueError(
                f"bad struct format {fmt!r}: unknown code at {body[pos:]!r}")
        count = int(m.group(1)) if m.group(1) else 1
        code = m.group(2)
        if code in "sp":
            sizes.append(count)
        elif code != "x":
            sizes.extend([struct.calcsize("=" + code if code not in "nNP" else code)] * count)
        pos = m.end()
    return sizes


def type_format(arg_type):
    """The struct code of one of ``prepare``'s argument types: a struct character
    string, a NumPy scalar type, a dtype (structured ones as ``"Ns"``), or anything
    else as a pointer."""
    if isinstance(arg_type, str):
        return arg_type
    if isinstance(arg_type, type) and issubclass(arg_type, np.generic):
        arg_type = np.dtype(arg_type)
    if isinstance(arg_type, np.dtype):
        if arg_type.char == "V":
            return f"{arg_type.itemsize}s"
        return arg_type.char
    return np.dtype(np.uintp).char


def prepare_format(arg_types):
    """``prepare``'s format string: a string is taken as it is, a sequence of types is
    turned into one code each."""
    if isinstance(arg_types, str):
        fmt = arg_types
    else:
        fmt = "".join(type_format(t) for t in arg_types)
    format_sizes(fmt)  # raises on a bad string
    return fmt


def pointer_of(arg):
    """The device address of a memory argument (an allocation, a GPUArray, an object
    with ``__cuda_array_interface__`` or ``gpudata``), or None."""
    if hasattr(arg, "__cuda_array_interface__"):
        return int(arg.__cuda_array_interface__["data"][0])
    gpudata = getattr(arg, "gpudata", None)
    if gpudata is not None:
        return int(gpudata)
    if hasattr(arg, "get_pointer") and not isinstance(arg, np.ndarray):
        return int(arg.get_pointer())
    return None


def prepared_value(code, arg):
    """One ``prepared_call`` argument turned into what ``struct.pack`` takes for code."""
    if code in "sp":
        if isinstance(arg, (bytes, bytearray)):
            return bytes(arg)
        return np.asarray(arg).tobytes()
    if isinstance(arg, (np.ndarray, np.void)) and code not in "sp":
        arg = arg.item() if getattr(arg, "shape", ()) == () else arg
    if code == "P" and not isinstance(arg, (int, np.integer)):
        p = pointer_of(arg)
        if p is not None:
            return p
        return int(arg)
    return arg


def pack_prepared(fmt, args):
    """The argument buffer of a ``prepared_call``."""
    codes = []
    body = fmt.lstrip("@=<>!")
    for m in _ITEM.finditer(body):
        count = int(m.group(1)) if m.group(1) else 1
        code = m.group(2)
        if code in "sp":
            codes.append(code)
        elif code != "x":
            codes.extend([code] * count)
    if len(codes) != len(args):
        raise TypeError(
            f"prepared_call: the format {fmt!r} takes {len(codes)} arguments, "
            f"{len(args)} were given")
    values = [prepared_value(c, a) for c, a in zip(codes, args)]
    try:
        return struct.pack(fmt, *values)
    except struct.error as e:
        raise TypeError(f"prepared_call: arguments do not match {fmt!r}: {e}") from None


class ArgumentHandler:
    """Host array passed to a kernel by copy (``In``, ``Out``, ``InOut``)."""

    copy_in = False
    copy_out = False

    def __init__(self, array):
        self.array = array
        self.dev_alloc = None

    def get_device_alloc(self, mem_alloc, htod):
        if self.dev_alloc is None:
            arr = self.array
            nbytes = arr.nbytes
            self.dev_alloc = mem_alloc(nbytes)
            if self.copy_in:
                htod(self.dev_alloc, arr)
        return self.dev_alloc

    def post_call(self, dtoh):
        if self.copy_out:
            dtoh(self.array, self.dev_alloc)


class In(ArgumentHandler):
    """Copied to the device before the launch."""
    copy_in = True


class Out(ArgumentHandler):
    """Copied back to the host after the launch."""
    copy_out = True


class InOut(ArgumentHandler):
    """Copied to the device before and back after the launch."""
    copy_in = True
    copy_out = True


def build_arg_buf(args, mem_alloc=None, htod=None):
    """``(buffer, sizes, handlers)`` for ``Function.__call__``: PyCUDA's rules —
    NumPy scalars by value (their dtype's code), NumPy arrays and structured scalars by
    value as their bytes, memory objects by address, ``In``/``Out``/``InOut`` through a
    device copy. Plain Python numbers are refused (their C type is unknown), as in
    PyCUDA."""
    fmt = ""
    data = []
    sizes = []
    handlers = []
    for i, arg in enumerate(args):
        if isinstance(arg, ArgumentHandler):
            fmt += "P"
            data.append(int(arg.get_device_alloc(mem_alloc, htod)))
            sizes.append(struct.calcsize("P"))
            handlers.append(arg)
        elif isinstance(arg, np.number) or isinstance(arg, np.bool_):
            fmt += arg.dtype.char
            data.append(arg)
            sizes.append(arg.dtype.itemsize)
        elif isinstance(arg, (np.void, np.ndarray)):
            # By value, as its bytes (a struct, a vector type, a small fixed array).
            b = np.ascontiguousarray(arg).tobytes()
            fmt += f"{len(b)}s"
            data.append(b)
            sizes.append(len(b))
        elif isinstance(arg, (bool, int, float, complex)):
            raise TypeError(
                f"invalid type on parameter #{i} (0-based): a Python {type(arg).__name__} "
                "has no C type; pass a NumPy scalar such as numpy.int32(x) or numpy.float32(x)")
        else:
            p = pointer_of(arg)
            if p is None:
                try:
                    p = int(arg)
                except (TypeError, ValueError):
                    raise TypeError(
                        f"invalid type on parameter #{i} (0-based): {type(arg).__name__}")
            fmt += "P"
            data.append(p)
            sizes.append(struct.calcsize("P"))
    return struct.pack(fmt, *data), sizes, handlers
