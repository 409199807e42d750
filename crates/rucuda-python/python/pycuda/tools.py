"""``pycuda.tools``: context helpers, memory pools, dtype registry, test decorators."""
from __future__ import annotations

import os

import numpy as np

import pycuda.driver as cuda
from rucuda.dtypes import (  # noqa: F401
    ScalarArg,
    VectorArg,
    alloc_size,
    bin_number,
    bitlog2,
    dtype_to_ctype,
    get_or_register_dtype,
    parse_arguments,
    parse_c_arg,
    register_dtype,
)

_context_caches = []


def context_dependent_memoize(func):
    """Memoizes ``func`` per current context."""
    cache = {}

    def wrapper(*args):
        ctx = cuda.Context.get_current()
        key = (None if ctx is None else ctx.handle, args)
        try:
            return cache[key]
        except KeyError:
            result = cache[key] = func(*args)
            return result

    _context_caches.append(cache)
    wrapper.__name__ = getattr(func, "__name__", "memoized")
    wrapper.__doc__ = func.__doc__
    return wrapper


def clear_context_caches():
    for cache in _context_caches:
        cache.clear()
    from rucuda import _native, kernels
    kernels.clear()
    # The small freed blocks kept for reuse go back to the driver too.
    _native.flush_block_cache()


def make_default_context(ctx_maker=None):
    """A context on ``CUDA_DEVICE`` (or the first device that takes one)."""
    if ctx_maker is None:
        def ctx_maker(dev):
            return dev.make_context()

    ndevices = cuda.Device.count()
    if ndevices == 0:
        raise RuntimeError("No CUDA enabled device found. Please check your installation.")
    devn = os.environ.get("CUDA_DEVICE")
    if devn is None:
        try:
            with open(os.path.expanduser("~/.cuda_device")) as f:
                devn = f.read().strip()
        except OSError:
            devn = None
    if devn is not None:
        try:
            devn = int(devn)
        except ValueError:
            raise TypeError("CUDA device number (CUDA_DEVICE or ~/.cuda-device) must be "
                            "an integer") from None
        dev = cuda.Device(devn)
        return ctx_maker(dev)
    errors = []
    for devn in range(ndevices):
        dev = cuda.Device(devn)
        try:
            return ctx_maker(dev)
        except cuda.Error as e:
            errors.append((devn, e))
    raise RuntimeError("make_default_context() wasn't able to create a context on any "
                       f"of the {ndevices} detected devices: {errors}")


def mark_cuda_test(inner_f):
    """Runs a test in a fresh default context, popped afterwards."""
    def f(*args, **kwargs):
        cuda.init()
        ctx = make_default_context()
        try:
            assert isinstance(ctx.get_device().name(), str)
            assert isinstance(ctx.get_device().compute_capability(), tuple)
            assert isinstance(ctx.get_device().get_attributes(), dict)
            inner_f(*args, **kwargs)
        finally:
            ctx.pop()
            clear_context_caches()
            from gc import collect
            collect()

    f.__name__ = inner_f.__name__
    f.__doc__ = inner_f.__doc__
    try:
        from pytest import mark
    except ImportError:
        return f
    return mark.cuda(f)


def init_cuda_context_fixture():
    cuda.init()
    ctx = make_default_context()
    assert isinstance(ctx.get_device().name(), str)
    assert isinstance(ctx.get_device().compute_capability(), tuple)
    assert isinstance(ctx.get_device().get_attributes(), dict)
    yield
    ctx.pop()
    clear_context_caches()
    from gc import collect
    collect()


class PooledDeviceAllocation:
    """A block of a ``DeviceMemoryPool``; returned to the pool when freed or dropped."""

    def __init__(self, pool, alloc, bin_nr, size):
        self.pool = pool
        self.alloc = alloc
        self.bin_nr = bin_nr
        self.size = size

    def __int__(self):
        return int(self.alloc)

    __index__ = __int__

    def get_pointer(self):
        return int(self.alloc)

    def free(self):
        if self.alloc is not None:
            self.pool._give_back(self.bin_nr, self.alloc)
            self.alloc = None

    def __del__(self):
        try:
            self.free()
        except Exception:  # noqa: BLE001 - at interpreter exit
            pass


class DeviceMemoryPool:
    """PyCUDA's binned device memory pool."""

    def __init__(self, allocator=None):
        self.allocator = allocator or cuda.mem_alloc
        self.bins = {}
        self.held_blocks = 0
        self.active_blocks = 0
        self._holding = True

    bin_number = staticmethod(bin_number)
    alloc_size = staticmethod(alloc_size)

    def allocate(self, size):
        bin_nr = bin_number(size)
        held = self.bins.get(bin_nr)
        if held:
            alloc = held.pop()
            self.held_blocks -= 1
        else:
            try:
                alloc = self.allocator(alloc_size(bin_nr))
            except cuda.MemoryError:
                self.free_held()
                alloc = self.allocator(alloc_size(bin_nr))
        self.active_blocks += 1
        return PooledDeviceAllocation(self, alloc, bin_nr, size)

    __call__ = allocate

    def _give_back(self, bin_nr, alloc):
        self.active_blocks -= 1
        if self._holding:
            self.bins.setdefault(bin_nr, []).append(alloc)
            self.held_blocks += 1

    def free_held(self):
        for blocks in self.bins.values():
            for b in blocks:
                b.free()
        self.bins.clear()
        self.held_blocks = 0

    def stop_holding(self):
        self._holding = False
        self.free_held()


class PageLockedMemoryPool:
    """Page-locked host arrays (no reuse: each call allocates)."""

    def __init__(self, allocator=None):
        self.held_blocks = 0
        self.active_blocks = 0

    def allocate(self, shape, dtype, order="C"):
        return cuda.pagelocked_empty(shape, dtype, order)

    def free_held(self):
        pass

    def stop_holding(self):
        pass


class PageLockedAllocator:
    def __init__(self, flags=0):
        self.flags = flags

    def __call__(self, size):
        return cuda.pagelocked_empty(size, np.uint8, mem_flags=self.flags)


class DeviceData:
    """Facts about a device used to pick launch shapes."""

    def __init__(self, dev=None):
        if dev is None:
            dev = cuda.Context.get_device()
        self.max_threads = dev.get_attribute(int(cuda.device_attribute.MAX_THREADS_PER_BLOCK))
        self.warp_size = dev.get_attribute(int(cuda.device_attribute.WARP_SIZE))
        self.thread_blocks_per_mp = 32
        self.warps_per_mp = 64
        self.registers = dev.get_attribute(int(cuda.device_attribute.MAX_REGISTERS_PER_BLOCK))
        self.shared_memory = dev.get_attribute(
            int(cuda.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK))
        self.smem_granularity = 16

    def align(self, bytes, word_size=4):
        return self.align_words(bytes, word_size)

    def align_words(self, word_size):
        return self.align_bytes(word_size)

    @staticmethod
    def align_bytes(word_size=4):
        return 128

    def align_dtype(self, elements, dtype_size):
        a = self.align_bytes() // dtype_size
        return (elements + a - 1) // a * a


def dtype_to_ctype_ext(dtype):
    return dtype_to_ctype(dtype)
