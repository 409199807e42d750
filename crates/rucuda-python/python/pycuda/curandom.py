"""``pycuda.curandom``: random GPUArrays.

``rand`` fills arrays with a counter-based generator (SplitMix64 of a seed and the
index). cuRAND's generator classes (XORWOW, MRG32k3a, Philox, Sobol) are not available
from Python yet: ``get_curand_version()`` returns None, as PyCUDA's does without cuRAND.
"""
from __future__ import annotations

import os
import struct

import numpy as np

from rucuda import kernels
from rucuda.dtypes import dtype_to_ctype

_CONVERT = {
    # 24 and 53 random bits scaled into [0, 1).
    "f": {4: "(float)(r >> 40) * (1.0f / 16777216.0f)",
          8: "(double)(r >> 11) * (1.0 / 9007199254740992.0)"},
}


def _convert(dtype):
    if dtype.kind == "f":
        return _CONVERT["f"][dtype.itemsize]
    if dtype.kind in "iu":
        return f"({dtype_to_ctype(dtype)}) r"
    raise NotImplementedError(f"rand: dtype {dtype} is not supported")


def rand(shape, dtype=np.float32, stream=None):
    """Uniform random numbers in [0, 1) (integers: uniform over the type's range)."""
    import pycuda.gpuarray as gpuarray
    dtype = np.dtype(dtype)
    result = gpuarray.GPUArray(shape, dtype)
    if result.size == 0:
        return result
    source = kernels.render("uniform.cu", NAME="rucuda_uniform", TYPE=dtype_to_ctype(dtype),
                            CONVERT=_convert(dtype))
    func = kernels.module_for(source).get_function("rucuda_uniform")
    seed = int.from_bytes(os.urandom(8), "little")
    grid, block = kernels.launch_shape(result.size)
    func._launch(grid, block, struct.pack("PQq", result.ptr, seed, result.size), None,
                 0 if stream is None else stream.handle, 0)
    return result


def get_curand_version():
    """None: cuRAND's generators are not wired to Python in rucuda yet."""
    return None


def _unavailable(name):
    class Unavailable:
        def __init__(self, *args, **kwargs):
            raise NotImplementedError(
                f"{name} is not available in rucuda's Python face yet "
                "(rucuda-rand provides it from Rust)")
    Unavailable.__name__ = name
    return Unavailable


XORWOWRandomNumberGenerator = _unavailable("XORWOWRandomNumberGenerator")
MRG32k3aRandomNumberGenerator = _unavailable("MRG32k3aRandomNumberGenerator")
PhiloxRandomNumberGenerator = _unavailable("PhiloxRandomNumberGenerator")
Sobol32RandomNumberGenerator = _unavailable("Sobol32RandomNumberGenerator")
ScrambledSobol32RandomNumberGenerator = _unavailable("ScrambledSobol32RandomNumberGenerator")
Sobol64RandomNumberGenerator = _unavailable("Sobol64RandomNumberGenerator")
ScrambledSobol64RandomNumberGenerator = _unavailable("ScrambledSobol64RandomNumberGenerator")
