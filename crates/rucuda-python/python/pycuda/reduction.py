"""``pycuda.reduction``: ``ReductionKernel`` (a map and an associative fold over every
index, in two kernel passes)."""
from __future__ import annotations

import struct

import numpy as np

from rucuda import kernels
from rucuda.dtypes import VectorArg, dtype_to_ctype, parse_arguments

_BLOCK = 512


def _module(out_type, arguments_c, neutral, reduce_expr, map_expr, preamble, name,
            options):
    source = kernels.render(
        "reduction.cu", PREAMBLE=preamble, NAME=name, OUT_TYPE=out_type,
        ARGUMENTS=arguments_c, NEUTRAL=neutral, REDUCE_EXPR=reduce_expr,
        MAP_EXPR=map_expr, BLOCK=_BLOCK)
    return kernels.module_for(kernels.with_headers(source), options or (),
                              (kernels.INCLUDE_DIR,))


def _declarator(a):
    if isinstance(a, VectorArg):
        return f"const {dtype_to_ctype(a.dtype)} *{a.name}"
    return f"{dtype_to_ctype(a.dtype)} {a.name}"


class ReductionKernel:
    """``ReductionKernel(dtype_out, neutral, reduce_expr, map_expr, arguments)``;
    calling it returns a 0-d GPUArray."""

    def __init__(self, dtype_out, neutral, reduce_expr, map_expr=None, arguments=None,
                 name="reduce_kernel", keep=False, options=None, preamble="",
                 allocator=None):
        self.dtype_out = np.dtype(dtype_out)
        self.neutral = neutral
        self.reduce_expr = reduce_expr
        self.arguments = parse_arguments(arguments) if arguments is not None else []
        if map_expr is None:
            if len(self.arguments) != 1:
                raise ValueError("map_expr may only be omitted with one argument")
            map_expr = f"{self.arguments[0].name}[i]"
        self.map_expr = map_expr
        self.name = name
        self.options = options
        self.preamble = preamble
        self.allocator = allocator

    def _stage1(self):
        return _module(dtype_to_ctype(self.dtype_out),
                       ", ".join(_declarator(a) for a in self.arguments),
                       self.neutral, self.reduce_expr, self.map_expr, self.preamble,
                       self.name, self.options).get_function(self.name)

    def _stage2(self):
        t = dtype_to_ctype(self.dtype_out)
        return _module(t, f"const {t} *pycuda_partials", self.neutral, self.reduce_expr,
                       "pycuda_partials[i]", self.preamble, self.name + "_stage2",
                       self.options).get_function(self.name + "_stage2")

    def _functions(self):
        """(stage 1, stage 2) for the current context, looked up once per context."""
        key = kernels.context_key()
        cache = self.__dict__.get("_by_context")
        if cache is None:
            cache = self.__dict__["_by_context"] = {}
            kernels.remember_holder(self)
        fns = cache.get(key)
        if fns is None:
            fns = cache[key] = (self._stage1(), self._stage2())
        return fns

    def __call__(self, *args, **kwargs):
        stream = kwargs.pop("stream", None)
        out = kwargs.pop("out", None)
        range_ = kwargs.pop("range", None)
        slice_ = kwargs.pop("slice", None)
        allocator = kwargs.pop("allocator", None) or self.allocator
        if kwargs:
            raise TypeError("invalid keyword arguments: " + ", ".join(sorted(kwargs)))
        if len(args) != len(self.arguments):
            raise TypeError(f"{self.name}: {len(self.arguments)} arguments expected, "
                            f"{len(args)} given")
        fmt = "P"
        values = [0]
        n = None
        array_type = None
        for spec, value in zip(self.arguments, args):
            if isinstance(spec, VectorArg):
                if hasattr(value, "gpudata") and hasattr(value, "shape"):
                    array_type = array_type or type(value)
                    if not value.flags.forc:
                        raise RuntimeError("ReductionKernel cannot deal with "
                                           "non-contiguous arrays")
                    if n is None:
                        n = value.size
                    values.append(value.ptr)
                else:
                    values.append(int(value))
                fmt += "P"
            else:
                fmt += spec.struct_char
                values.append(spec.dtype.type(value).item())
        start, stop = 0, n
        if slice_ is not None:
            if range_ is not None:
                raise TypeError("may not specify both range and slice")
            start, stop, step = slice_.indices(n)
            if step != 1:
                raise ValueError("only slices with step 1 are supported")
        elif range_ is not None:
            start, stop = range_.start or 0, range_.stop
            if (range_.step or 1) != 1:
                raise ValueError("only ranges with step 1 are supported")
        count = max(0, stop - start)
        if array_type is None:
            from pycuda.gpuarray import GPUArray as array_type
        extra = {} if allocator is None else {"allocator": allocator}
        if out is None:
            out = array_type((), self.dtype_out, **extra)
        blocks = max(1, min((count + _BLOCK - 1) // _BLOCK, 256))
        s = 0 if stream is None else stream.handle
        stage1, stage2 = self._functions()
        if blocks == 1:
            # One block folds everything: straight into the result, no partials.
            values[0] = out.ptr
            buf = struct.pack(fmt + "qq", *values, start, stop)
            stage1._launch((1, 1, 1), (_BLOCK, 1, 1), buf, None, s, 0)
            return out
        # The partial results use the default allocator; `allocator` makes the result
        # only (one allocation, as PyCUDA's).
        partials = array_type((blocks,), self.dtype_out)
        values[0] = partials.ptr
        buf = struct.pack(fmt + "qq", *values, start, stop)
        stage1._launch((blocks, 1, 1), (_BLOCK, 1, 1), buf, None, s, 0)
        buf2 = struct.pack("PPqq", out.ptr, partials.ptr, 0, blocks)
        stage2._launch((1, 1, 1), (_BLOCK, 1, 1), buf2, None, s, 0)
        kernels.release_after(partials, stream)
        return out


def get_sum_kernel(dtype_out, dtype_in):
    return ReductionKernel(dtype_out, "0", "a+b",
                           arguments=f"const {dtype_to_ctype(dtype_in)} *in")


__all__ = ["ReductionKernel", "get_sum_kernel"]
