"""``pycuda.elementwise``: ``ElementwiseKernel`` (a C operation over every index)."""
from __future__ import annotations

import struct

import numpy as np

from rucuda import kernels
from rucuda.dtypes import ScalarArg, VectorArg, dtype_to_ctype, parse_arguments

_COMPLEX_PREAMBLE = ""


def _declarator(arg):
    if isinstance(arg, VectorArg):
        return f"{dtype_to_ctype(arg.dtype)} *{arg.name}"
    return f"{dtype_to_ctype(arg.dtype)} {arg.name}"


def get_elwise_module(arguments, operation, name="kernel", keep=False, options=None,
                      preamble="", loop_prep="", after_loop=""):
    source = kernels.render(
        "elementwise.cu",
        PREAMBLE=preamble,
        NAME=name,
        ARGUMENTS=", ".join(_declarator(a) for a in arguments),
        LOOP_PREP=loop_prep,
        OPERATION=operation,
        AFTER_LOOP=after_loop,
    )
    return kernels.module_for(kernels.with_headers(source), options or (),
                              (kernels.INCLUDE_DIR,))


def _pack(arguments, args):
    fmt = ""
    values = []
    n = None
    stream = None
    for spec, value in zip(arguments, args):
        if isinstance(spec, VectorArg):
            if hasattr(value, "shape") and hasattr(value, "gpudata"):
                if not value.flags.forc:
                    raise RuntimeError(
                        "elementwise kernel cannot deal with non-contiguous arrays")
                if n is None:
                    n = value.size
                ptr = value.ptr
            else:
                from rucuda.args import pointer_of
                p = pointer_of(value)
                ptr = int(value) if p is None else p
            fmt += "P"
            values.append(ptr)
        else:
            fmt += spec.struct_char
            if spec.dtype.char == "V":
                values.append(np.asarray(value, spec.dtype).tobytes())
            elif spec.dtype.kind == "c":
                fmt = fmt[:-1] + f"{spec.dtype.itemsize}s"
                values.append(np.asarray(value, spec.dtype).tobytes())
            else:
                values.append(spec.dtype.type(value).item() if not isinstance(value, np.generic)
                              else spec.dtype.type(value).item())
    return fmt, values, n


class ElementwiseKernel:
    """``ElementwiseKernel(arguments, operation, name, ...)``; calling it runs
    ``operation`` (C, indexed by ``i``) for every element of its first array argument."""

    def __init__(self, arguments, operation, name="kernel", keep=False, options=None,
                 **kwargs):
        self.arguments = parse_arguments(arguments)
        if not any(isinstance(a, VectorArg) for a in self.arguments):
            raise RuntimeError(
                "ElementwiseKernel can only be used with functions that have at least "
                "one vector argument")
        self.operation = operation
        self.name = name
        self.keep = keep
        self.options = options
        self.kwargs = kwargs
        for unknown in set(kwargs) - {"preamble", "loop_prep", "after_loop"}:
            raise TypeError(f"unknown keyword argument '{unknown}'")

    def get_module(self):
        return get_elwise_module(self.arguments, self.operation, self.name, self.keep,
                                 self.options, **self.kwargs)

    def _functions(self):
        """(plain, ranged) kernels for the current context, looked up once per context."""
        key = kernels.context_key()
        cache = self.__dict__.get("_by_context")
        if cache is None:
            cache = self.__dict__["_by_context"] = {}
            kernels.remember_holder(self)
        fns = cache.get(key)
        if fns is None:
            mod = self.get_module()
            plain = mod.get_function(self.name)
            ranged = mod.get_function(self.name + "_range")
            # Both begin with RUCUDA_WAIT_FOR_PREDECESSOR() (rucuda/cuda/elementwise.cu).
            plain._overlaps_predecessor()
            ranged._overlaps_predecessor()
            fns = cache[key] = (plain, ranged, kernels.sm_count(key))
        return fns

    def __call__(self, *args, **kwargs):
        range_ = kwargs.pop("range", None)
        slice_ = kwargs.pop("slice", None)
        stream = kwargs.pop("stream", None)
        if kwargs:
            raise TypeError("invalid keyword arguments: " + ", ".join(sorted(kwargs)))
        if len(args) != len(self.arguments):
            raise TypeError(f"{self.name}: {len(self.arguments)} arguments expected, "
                            f"{len(args)} given")
        fmt, values, n = _pack(self.arguments, args)
        plain, ranged, sms = self._functions()
        if slice_ is not None:
            if range_ is not None:
                raise TypeError("may not specify both range and slice keyword arguments")
            range_ = slice(*slice_.indices(n)) if isinstance(slice_, slice) else slice_
        if range_ is not None:
            start = range_.start or 0
            stop = range_.stop
            step = range_.step or 1
            count = max(0, (abs(stop - start) + abs(step) - 1) // abs(step))
            func = ranged
            fmt += "qqqq"
            values += [n or 0, start, stop, step]
        else:
            count = n
            func = plain
            fmt += "q"
            values.append(n)
        if not count:
            return None
        grid, block = kernels.grid_for(count, sms)
        buf = struct.pack(fmt, *values)
        func._launch(grid, block, buf, None, 0 if stream is None else stream.handle, 0)
        return None


def get_copy_kernel(dtype_dest, dtype_src):
    return ElementwiseKernel(
        f"{dtype_to_ctype(dtype_dest)} *dest, {dtype_to_ctype(dtype_src)} *src",
        f"dest[i] = ({dtype_to_ctype(dtype_dest)}) src[i]", "copy")


__all__ = ["ElementwiseKernel", "ScalarArg", "VectorArg", "get_elwise_module",
           "get_copy_kernel"]
