"""``pycuda.curandom``: random GPUArrays.

``rand`` fills arrays with a counter-based generator (SplitMix64 of a seed and the
index). The generator classes (XORWOW, MRG32k3a, Philox, the Sobol families) are
rucuda-rand's: cuRAND's device-API sequences from our own kernels, no cuRAND library.
Their states are laid out as rucuda-rand lays them (one 16-byte chunk of outputs per
state in turn), so the numbers are not PyCUDA's element for element, but each state's
sequence is cuRAND's.
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


# The cuRAND device API whose sequences rucuda-rand reproduces (CUDA 13.0's cuRAND 10.4):
# what PyCUDA's version checks compare against.
_CURAND_VERSION = (10, 4, 0)


def get_curand_version():
    """The cuRAND version whose device-API generators rucuda-rand reproduces."""
    return _CURAND_VERSION


class direction_vector_set:  # noqa: N801 (PyCUDA's name)
    """Which Sobol direction vectors (cuRAND's enum). The scrambled sets are the plain
    ones here: rucuda-rand scrambles with separate constants."""

    VECTOR_32 = 101
    SCRAMBLED_VECTOR_32 = 102
    VECTOR_64 = 103
    SCRAMBLED_VECTOR_64 = 104


# Dimensions in cuRAND's direction-vector tables: larger counts repeat them, as PyCUDA's
# generate_direction_vectors does.
_TABLE_DIMENSIONS = 20000


def _direction_vectors_host(count, bits):
    from rucuda import _native
    dims = min(int(count), _TABLE_DIMENSIONS)
    dtype = np.uint64 if bits == 64 else np.uint32
    table = np.asarray(_native.sobol_direction_vectors(bits, dims), dtype).reshape(dims, bits)
    reps = -(-int(count) // max(dims, 1))
    return np.tile(table, (reps, 1))[:count]


def generate_direction_vectors(count, direction=None):
    """``count`` Sobol direction vectors (a GPUArray of shape (count, 32), or (count, 64)
    for the 64-bit sets)."""
    import pycuda.gpuarray as gpuarray
    bits = 64 if direction in (direction_vector_set.VECTOR_64,
                               direction_vector_set.SCRAMBLED_VECTOR_64) else 32
    return gpuarray.to_gpu(_direction_vectors_host(count, bits))


def _scramble_constants(count, dtype):
    import pycuda.gpuarray as gpuarray
    info = np.iinfo(dtype)
    rng = np.random.default_rng(int.from_bytes(os.urandom(8), "little"))
    return gpuarray.to_gpu(rng.integers(0, info.max, int(count), dtype=dtype,
                                        endpoint=True))


def generate_scramble_constants32(count):
    """``count`` random 32-bit scramble constants (a GPUArray)."""
    return _scramble_constants(count, np.uint32)


def generate_scramble_constants64(count):
    """``count`` random 64-bit scramble constants (a GPUArray)."""
    return _scramble_constants(count, np.uint64)


def seed_getter_uniform(n):
    """One random seed for all ``n`` states (an int32 GPUArray)."""
    import random

    import pycuda.gpuarray as gpuarray
    return gpuarray.empty([n], np.int32).fill(random.randint(0, 2 ** 31 - 1))


def seed_getter_unique(n):
    """``n`` random seeds (an int32 GPUArray)."""
    import pycuda.gpuarray as gpuarray
    return gpuarray.to_gpu(np.random.randint(0, 2 ** 31 - 1, n).astype(np.int32))


def _host_values(x, what):
    """A GPUArray's or array-like's values as a flat NumPy array."""
    if hasattr(x, "gpudata") and hasattr(x, "get"):
        x = x.get()
    try:
        return np.asarray(x).ravel()
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a GPUArray or an array of integers") from None


def _stream_handle(stream):
    return 0 if stream is None else int(stream.handle)


# The in-place Poisson fill: each element's own value is its mean. Draws come from the
# generator's raw outputs, 32 bits (or 53 of 64 for the 64-bit generators) made a uniform
# in (0, 1): inversion of the CDF below a mean of 64, as cuRAND's device API does there;
# above it the normal approximation with continuity correction (cuRAND also approximates
# there, by another formula).
_POISSON_PREAMBLE = """
__device__ double rucuda_unit32(unsigned int bits) { return ((double)bits + 0.5) * 0x1p-32; }
__device__ double rucuda_unit64(unsigned long long bits)
{
    return ((double)(bits >> 11) + 0.5) * 0x1p-53;
}
__device__ unsigned int rucuda_poisson_from(double u, double lambda)
{
    if (!(lambda > 0.0)) return 0u;
    if (lambda < 64.0) {
        double p = exp(-lambda), f = p;
        unsigned int k = 0;
        while (u > f && k < 100000u) { k++; p *= lambda / k; f += p; }
        return k;
    }
    const double x = floor(lambda + sqrt(lambda) * normcdfinv(u) + 0.5);
    return x <= 0.0 ? 0u : (x >= 4294967295.0 ? 4294967295u : (unsigned int)x);
}
"""

_POISSON_KERNELS = {}


def _poisson_inplace_kernel(dtype, word_bits=32):
    """``data[i]`` replaced by a Poisson count of mean ``data[i]``, from raw words of
    ``word_bits`` bits (one per element)."""
    key = (np.dtype(dtype), word_bits)
    k = _POISSON_KERNELS.get(key)
    if k is None:
        from pycuda.elementwise import ElementwiseKernel
        ct = dtype_to_ctype(np.dtype(dtype))
        word_bits = 64 if word_bits == 64 else 32
        word = "unsigned long long" if word_bits == 64 else "unsigned int"
        k = _POISSON_KERNELS[key] = ElementwiseKernel(
            f"{ct} *data, const {word} *bits",
            f"data[i] = ({ct}) rucuda_poisson_from(rucuda_unit{word_bits}(bits[i]), "
            "(double) data[i])",
            "rucuda_poisson_inplace", preamble=_POISSON_PREAMBLE)
    return k


def _check_output(data):
    if not (hasattr(data, "gpudata") and hasattr(data, "dtype")):
        raise TypeError("the output must be a GPUArray")
    if not data.flags.forc:
        raise ValueError("the output GPUArray must be contiguous")


class _RandomNumberGeneratorBase:
    """What every generator class shares: the fills and ``gen_*`` of PyCUDA's classes,
    done by a :class:`rucuda._native.RandomGeneratorCore`."""

    has_box_muller = True

    def __init__(self, core):
        self._core = core
        self.generator_bits = core.word_bits
        from pycuda.driver import Context, device_attribute
        dev = Context.get_device()
        self.block_count = dev.get_attribute(device_attribute.MULTIPROCESSOR_COUNT)
        self.generators_per_block = 1024

    @property
    def state_count(self):
        return self._core.state_count

    def _fill(self, data, kind, dist, a=0.0, b=1.0, stream=None):
        _check_output(data)
        if data.size:
            self._core.fill(data.ptr, data.size, kind, dist, float(a), float(b),
                            _stream_handle(stream))

    def _raw_words(self, data, stream):
        """Raw outputs into an integer array: 32-bit elements of a 64-bit generator keep
        the low half of each output (as PyCUDA's ``unsigned int`` stores of them)."""
        if data.dtype.itemsize == 8:
            self._fill(data, "u64", "raw", stream=stream)
        elif self.generator_bits == 32:
            self._fill(data, "u32", "raw", stream=stream)
        else:
            import pycuda.gpuarray as gpuarray
            wide = gpuarray.empty(data.shape, np.uint64)
            self._fill(wide, "u64", "raw", stream=stream)
            _truncate(data, wide, stream)
            kernels.release_after(wide, stream)

    def fill_uniform(self, data, stream=None):
        """Floats in (0, 1] (``curand_uniform``), or raw bits for integers."""
        dt = data.dtype
        if dt == np.float32:
            self._fill(data, "f32", "uniform", stream=stream)
        elif dt == np.float64:
            self._fill(data, "f64", "uniform", stream=stream)
        elif dt in (np.int32, np.uint32) or (dt in (np.int64, np.uint64)):
            self._raw_words(data, stream)
        else:
            raise NotImplementedError(f"fill_uniform: dtype {dt} is not supported")

    def fill_normal(self, data, stream=None):
        """Standard normal floats or doubles (``curand_normal``)."""
        kind = _float_kind(data.dtype, "fill_normal")
        self._fill(data, kind, "normal", 0.0, 1.0, stream)

    def gen_uniform(self, shape, dtype, stream=None):
        import pycuda.gpuarray as gpuarray
        result = gpuarray.empty(shape, dtype)
        self.fill_uniform(result, stream)
        return result

    def gen_normal(self, shape, dtype, stream=None):
        import pycuda.gpuarray as gpuarray
        result = gpuarray.empty(shape, dtype)
        self.fill_normal(result, stream)
        return result

    def fill_log_normal(self, data, mean, stddev, stream=None):
        """``exp(mean + stddev * normal)`` (``curand_log_normal``)."""
        kind = _float_kind(data.dtype, "fill_log_normal")
        self._fill(data, kind, "log_normal", mean, stddev, stream)

    def gen_log_normal(self, shape, dtype, mean, stddev, stream=None):
        import pycuda.gpuarray as gpuarray
        result = gpuarray.empty(shape, dtype)
        self.fill_log_normal(result, mean, stddev, stream)
        return result

    def fill_poisson(self, data, lambda_value=None, stream=None):
        """Poisson counts with mean ``lambda_value`` (uint32 outputs), or, without it, each
        element replaced by a count whose mean is its value (float32, float64, uint32)."""
        _check_output(data)
        if lambda_value is not None:
            if data.dtype != np.uint32:
                raise NotImplementedError(
                    f"fill_poisson: counts are uint32, not {data.dtype}")
            self._fill(data, "u32", "poisson", lambda_value, 1.0, stream)
            return
        if data.dtype not in (np.float32, np.float64, np.uint32):
            raise NotImplementedError(
                f"fill_poisson in place: dtype {data.dtype} is not supported")
        if not data.size:
            return
        import pycuda.gpuarray as gpuarray
        # One raw word per element, of the generator's own width.
        wide = self.generator_bits == 64
        bits = gpuarray.empty(data.shape, np.uint64 if wide else np.uint32, order="F" if (
            data.flags.f_contiguous and not data.flags.c_contiguous) else "C")
        self._fill(bits, "u64" if wide else "u32", "raw", stream=stream)
        _poisson_inplace_kernel(data.dtype, self.generator_bits)(data, bits, stream=stream)
        kernels.release_after(bits, stream)

    def gen_poisson(self, shape, dtype, lambda_value, stream=None):
        import pycuda.gpuarray as gpuarray
        result = gpuarray.empty(shape, dtype)
        self.fill_poisson(result, lambda_value, stream)
        return result

    def call_skip_ahead(self, i, stream=None):
        """Skips every state ``i`` outputs ahead."""
        self._core.skip_ahead(int(i), _stream_handle(stream))


def _float_kind(dtype, what):
    if dtype == np.float32:
        return "f32"
    if dtype == np.float64:
        return "f64"
    raise NotImplementedError(f"{what}: dtype {dtype} is not supported")


_TRUNCATE = {}


def _truncate(data, wide, stream):
    """``data[i] = (type) wide[i]``: the low bits of 64-bit words."""
    k = _TRUNCATE.get(data.dtype)
    if k is None:
        from pycuda.elementwise import ElementwiseKernel
        ct = dtype_to_ctype(data.dtype)
        k = _TRUNCATE[data.dtype] = ElementwiseKernel(
            f"{ct} *out, const unsigned long long *wide", f"out[i] = ({ct}) wide[i]",
            "rucuda_truncate_words")
    k(data, wide, stream=stream)


class _PseudoRandomNumberGeneratorBase(_RandomNumberGeneratorBase):
    _kind = None

    def __init__(self, seed_getter=None, offset=0):
        from rucuda import _native
        seeds = None
        if seed_getter is not None:
            count = _default_state_count()
            seed = seed_getter(count)
            if not (hasattr(seed, "gpudata") and seed.dtype == np.int32
                    and seed.size == count):
                raise TypeError("seed must be GPUArray of integers of right length")
            seeds = [int(s) & 0xFFFFFFFF for s in seed.get().ravel()]
        super().__init__(_native.RandomGeneratorCore(self._kind, seeds=seeds,
                                                     offset=int(offset)))

    def call_skip_ahead_sequence(self, i, stream=None):
        """Skips every state ``i`` subsequences ahead."""
        self._core.skip_ahead_sequence(int(i), _stream_handle(stream))


def _default_state_count():
    """PyCUDA's state count, and rucuda-rand's default: 1024 per multiprocessor."""
    from pycuda.driver import Context, device_attribute
    return Context.get_device().get_attribute(device_attribute.MULTIPROCESSOR_COUNT) * 1024


class XORWOWRandomNumberGenerator(_PseudoRandomNumberGeneratorBase):
    """cuRAND's XORWOW (``curandStateXORWOW``)."""

    _kind = "xorwow"


class MRG32k3aRandomNumberGenerator(_PseudoRandomNumberGeneratorBase):
    """cuRAND's MRG32k3a (``curandStateMRG32k3a``)."""

    _kind = "mrg32k3a"


class PhiloxRandomNumberGenerator(_PseudoRandomNumberGeneratorBase):
    """cuRAND's Philox4x32-10 (``curandStatePhilox4_32_10``; rucuda's addition)."""

    _kind = "philox"


class _SobolBase(_RandomNumberGeneratorBase):
    has_box_muller = False
    _kind = None
    _bits = 32
    _scrambled = False

    def __init__(self, dir_vector=None, scramble_vector=None, offset=0):
        from rucuda import _native
        kwargs = {"offset": int(offset)}
        if dir_vector is None:
            kwargs["dimensions"] = _TABLE_DIMENSIONS
        else:
            v = _host_values(dir_vector, "dir_vector")
            if v.size == 0 or v.size % self._bits:
                raise TypeError(f"dir_vector must hold {self._bits} words per dimension")
            kwargs["vectors"] = [int(x) for x in v.astype(np.uint64)]
            if self._scrambled and scramble_vector is not None:
                c = _host_values(scramble_vector, "scramble_vector")
                if c.size != v.size // self._bits:
                    raise TypeError("scramble_vector must hold one constant per dimension")
                kwargs["constants"] = [int(x) for x in c.astype(np.uint64)]
        if self._scrambled and "vectors" in kwargs and "constants" not in kwargs:
            dims = len(kwargs["vectors"]) // self._bits
            gen = (generate_scramble_constants64 if self._bits == 64
                   else generate_scramble_constants32)
            kwargs["constants"] = [int(x) for x in gen(dims).get()]
        super().__init__(_native.RandomGeneratorCore(self._kind, **kwargs))


class Sobol32RandomNumberGenerator(_SobolBase):
    """cuRAND's 32-bit Sobol sequence, one dimension per state."""

    _kind = "sobol32"

    def __init__(self, dir_vector=None, offset=0):
        super().__init__(dir_vector, None, offset)


class ScrambledSobol32RandomNumberGenerator(_SobolBase):
    """cuRAND's scrambled 32-bit Sobol sequence."""

    _kind = "scrambled_sobol32"
    _scrambled = True


class Sobol64RandomNumberGenerator(_SobolBase):
    """cuRAND's 64-bit Sobol sequence."""

    _kind = "sobol64"
    _bits = 64

    def __init__(self, dir_vector=None, offset=0):
        super().__init__(dir_vector, None, offset)


class ScrambledSobol64RandomNumberGenerator(_SobolBase):
    """cuRAND's scrambled 64-bit Sobol sequence."""

    _kind = "scrambled_sobol64"
    _bits = 64
    _scrambled = True
