"""``pycuda.driver``: devices, contexts, memory, streams, events, modules, launches.

The objects come from ``rucuda._native`` (rucuda-driver); this file adds PyCUDA's
Python-level conveniences (``In``/``Out``/``InOut``, ``Function.__call__``,
``prepare``/``prepared_call``, NumPy-facing copies) with PyCUDA's names.
"""
from __future__ import annotations

import enum
import sys

import numpy as np

import rucuda
from rucuda import _native
from rucuda._errors import (  # noqa: F401
    CompileError,
    Error,
    LaunchError,
    LogicError,
    MemoryError,
    RuntimeError,
)
from rucuda.args import (  # noqa: F401
    ArgumentHandler,
    In,
    InOut,
    Out,
    build_arg_buf,
    pack_prepared,
    prepare_format,
)

_problem = rucuda.driver_problem()
if _problem is not None:
    raise ImportError(
        "pycuda.driver (rucuda): the CUDA driver could not be loaded: " + _problem)
del _problem

init = _native.init
get_version = _native.get_version
get_driver_version = _native.get_driver_version
Device = _native.Device
Context = _native.Context
Stream = _native.Stream
Event = _native.Event
Module = _native.Module
Function = _native.Function
DeviceAllocation = _native.DeviceAllocation
HostAllocation = _native.HostAllocation
mem_alloc = _native.mem_alloc
mem_alloc_async = _native.mem_alloc_async
mem_get_info = _native.mem_get_info
module_from_buffer = _native.module_from_buffer
module_from_file = _native.module_from_file
Linker = _native.Linker


# {{{ constant classes

device_attribute = enum.IntEnum(
    "device_attribute", dict(_native.device_attribute_members()))


class ctx_flags(enum.IntEnum):
    SCHED_AUTO = 0
    SCHED_SPIN = 1
    SCHED_YIELD = 2
    SCHED_BLOCKING_SYNC = 4
    BLOCKING_SYNC = 4
    SCHED_MASK = 7
    MAP_HOST = 8
    LMEM_RESIZE_TO_MAX = 16
    FLAGS_MASK = 31


class event_flags(enum.IntEnum):
    DEFAULT = 0
    BLOCKING_SYNC = 1
    DISABLE_TIMING = 2
    INTERPROCESS = 4


class host_alloc_flags(enum.IntEnum):
    PORTABLE = 1
    DEVICEMAP = 2
    WRITECOMBINED = 4


class mem_host_register_flags(enum.IntEnum):
    PORTABLE = 1
    DEVICEMAP = 2
    IOMEMORY = 4
    READ_ONLY = 8


class compute_mode(enum.IntEnum):
    DEFAULT = 0
    PROHIBITED = 2
    EXCLUSIVE_PROCESS = 3


class function_attribute(enum.IntEnum):
    MAX_THREADS_PER_BLOCK = 0
    SHARED_SIZE_BYTES = 1
    CONST_SIZE_BYTES = 2
    LOCAL_SIZE_BYTES = 3
    NUM_REGS = 4
    PTX_VERSION = 5
    BINARY_VERSION = 6
    CACHE_MODE_CA = 7
    MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
    PREFERRED_SHARED_MEMORY_CARVEOUT = 9


class func_cache(enum.IntEnum):
    PREFER_NONE = 0
    PREFER_SHARED = 1
    PREFER_L1 = 2
    PREFER_EQUAL = 3


class limit(enum.IntEnum):
    STACK_SIZE = 0
    PRINTF_FIFO_SIZE = 1
    MALLOC_HEAP_SIZE = 2
    DEV_RUNTIME_SYNC_DEPTH = 3
    DEV_RUNTIME_PENDING_LAUNCH_COUNT = 4
    MAX_L2_FETCH_GRANULARITY = 5
    PERSISTING_L2_CACHE_SIZE = 6


class memory_type(enum.IntEnum):
    HOST = 1
    DEVICE = 2
    ARRAY = 3
    UNIFIED = 4


class jit_input_type(enum.IntEnum):
    CUBIN = 0
    PTX = 1
    FATBINARY = 2
    OBJECT = 3
    LIBRARY = 4
    NVVM = 5


class array_format(enum.IntEnum):
    UNSIGNED_INT8 = 0x01
    UNSIGNED_INT16 = 0x02
    UNSIGNED_INT32 = 0x03
    SIGNED_INT8 = 0x08
    SIGNED_INT16 = 0x09
    SIGNED_INT32 = 0x0a
    HALF = 0x10
    FLOAT = 0x20


# }}}


# {{{ Device and Context extras

def _device_get_attributes(dev):
    return {device_attribute[name]: value
            for name, value in dev.get_attributes_by_name()
            if name in device_attribute.__members__}


def _device_getattr(dev, name):
    try:
        attr = device_attribute[name.upper()]
    except KeyError:
        raise AttributeError(name) from None
    return dev.get_attribute(int(attr))


Device.get_attributes = _device_get_attributes
Device.__getattr__ = _device_getattr


# }}}


# {{{ host memory as NumPy arrays

def _host_address(ary, writable=False):
    if not isinstance(ary, np.ndarray):
        try:
            # Any buffer (bytes, bytearray, memoryview): its memory, not a copy.
            ary = np.frombuffer(memoryview(ary).cast("B"), np.uint8)
        except TypeError:
            ary = np.asarray(ary)
    if not (ary.flags.c_contiguous or ary.flags.f_contiguous):
        raise LogicError("host array must be contiguous")
    if writable and not ary.flags.writeable:
        raise LogicError("host array must be writable")
    return ary.__array_interface__["data"][0], ary.nbytes, ary


def _dev_address(dev):
    from rucuda.args import pointer_of
    if isinstance(dev, (int, np.integer)):
        return int(dev)
    p = pointer_of(dev)
    return int(dev) if p is None else p


def _stream_handle(stream):
    if stream is None:
        return None
    return stream.handle


def memcpy_htod(dest, src):
    addr, n, _keep = _host_address(src)
    _native.copy_htod(_dev_address(dest), addr, n)


def memcpy_htod_async(dest, src, stream=None):
    addr, n, _keep = _host_address(src)
    _native.copy_htod(_dev_address(dest), addr, n, _stream_handle(stream) or 0)


def memcpy_dtoh(dest, src):
    addr, n, _keep = _host_address(dest, writable=True)
    _native.copy_dtoh(addr, _dev_address(src), n)


def memcpy_dtoh_async(dest, src, stream=None):
    addr, n, _keep = _host_address(dest, writable=True)
    _native.copy_dtoh(addr, _dev_address(src), n, _stream_handle(stream) or 0)


def memcpy_dtod(dest, src, size):
    _native.copy_dtod(_dev_address(dest), _dev_address(src), int(size))


def memcpy_dtod_async(dest, src, size, stream=None):
    _native.copy_dtod(_dev_address(dest), _dev_address(src), int(size),
                      _stream_handle(stream) or 0)


def memset_d8(dest, data, count):
    _native.memset(_dev_address(dest), int(data), 1, int(count))


def memset_d16(dest, data, count):
    _native.memset(_dev_address(dest), int(data), 2, int(count))


def memset_d32(dest, data, count):
    _native.memset(_dev_address(dest), int(data), 4, int(count))


def memset_d8_async(dest, data, count, stream=None):
    _native.memset(_dev_address(dest), int(data), 1, int(count), _stream_handle(stream) or 0)


def memset_d16_async(dest, data, count, stream=None):
    _native.memset(_dev_address(dest), int(data), 2, int(count), _stream_handle(stream) or 0)


def memset_d32_async(dest, data, count, stream=None):
    _native.memset(_dev_address(dest), int(data), 4, int(count), _stream_handle(stream) or 0)


def mem_alloc_like(ary):
    return mem_alloc(ary.nbytes)


def to_device(bf_obj):
    ary = np.ascontiguousarray(bf_obj)
    result = mem_alloc(ary.nbytes)
    memcpy_htod(result, ary)
    return result


def from_device(devptr, shape, dtype, order="C"):
    result = np.empty(shape, dtype, order=order)
    memcpy_dtoh(result, devptr)
    return result


def from_device_like(devptr, other_ary):
    result = np.empty_like(other_ary)
    memcpy_dtoh(result, devptr)
    return result


def _shaped(raw, shape, dtype, order):
    dtype = np.dtype(dtype)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    return raw[: n * dtype.itemsize].view(dtype).reshape(shape, order=order)


def pagelocked_empty(shape, dtype, order="C", mem_flags=0):
    dtype = np.dtype(dtype)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    return _shaped(_native.pagelocked_bytes(n * dtype.itemsize, int(mem_flags)),
                   shape, dtype, order)


def pagelocked_zeros(shape, dtype, order="C", mem_flags=0):
    result = pagelocked_empty(shape, dtype, order, mem_flags)
    result.fill(0)
    return result


def _order_of(ary):
    return "F" if ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"


def pagelocked_empty_like(array, mem_flags=0):
    return pagelocked_empty(array.shape, array.dtype, _order_of(array), mem_flags)


def pagelocked_zeros_like(array, mem_flags=0):
    return pagelocked_zeros(array.shape, array.dtype, _order_of(array), mem_flags)


def aligned_empty(shape, dtype, order="C", alignment=4096):
    dtype = np.dtype(dtype)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    raw = np.empty(n * dtype.itemsize + alignment, np.uint8)
    offset = (-raw.__array_interface__["data"][0]) % alignment
    return raw[offset:offset + n * dtype.itemsize].view(dtype).reshape(shape, order=order)


def aligned_zeros(shape, dtype, order="C", alignment=4096):
    result = aligned_empty(shape, dtype, order, alignment)
    result.fill(0)
    return result


def aligned_empty_like(ary, alignment=4096):
    return aligned_empty(ary.shape, ary.dtype, _order_of(ary), alignment)


def aligned_zeros_like(ary, alignment=4096):
    return aligned_zeros(ary.shape, ary.dtype, _order_of(ary), alignment)


def register_host_memory(ary, flags=0):
    addr, n, ary = _host_address(ary)
    raw = _native.register_host_bytes(ary, addr, n, int(flags))
    return raw.view(ary.dtype).reshape(ary.shape, order=_order_of(ary))


class PointerHolderBase:
    """Subclass and define ``get_pointer()`` to pass foreign device memory."""

    def get_pointer(self):
        raise NotImplementedError

    def __int__(self):
        return int(self.get_pointer())

    def __index__(self):
        return int(self.get_pointer())

    def as_buffer(self, size, offset=0):
        raise LogicError("as_buffer is not available for device memory under rucuda")


# }}}


# {{{ kernel launches

def _grid3(grid):
    grid = tuple(int(g) for g in grid)
    return (grid + (1, 1, 1))[:3] if len(grid) < 3 else grid


def _block3(block):
    block = tuple(int(b) for b in block)
    if len(block) > 3 or len(block) == 0:
        raise ValueError(f"block must have 1 to 3 dimensions, got {block!r}")
    return (block + (1, 1))[:3]


def _function_call(func, *args, grid=(1, 1), stream=None, block=None, shared=0,
                   texrefs=(), time_kernel=False, **kwargs):
    if kwargs:
        raise ValueError("extra keyword arguments: " + ", ".join(sorted(kwargs)))
    if block is None:
        raise ValueError("must specify block size")
    if texrefs:
        raise LogicError("texture references do not exist in CUDA 12 and later: "
                         "use texture objects")
    handle = 0 if stream is None else _stream_handle(stream)
    # NumPy scalars, allocations and arrays are packed and launched in Rust; anything
    # else (In/Out handlers, values by their bytes) takes the Python path below.
    t = func._call_launch(args, grid, block, handle, shared, time_kernel)
    if t is not NotImplemented:
        return t
    buf, sizes, handlers = build_arg_buf(args, mem_alloc, memcpy_htod)
    t = func._launch(_grid3(grid), _block3(block), buf, sizes, handle, int(shared),
                     bool(time_kernel))
    for h in handlers:
        h.post_call(memcpy_dtoh)
    return t


def _function_prepare(func, arg_types, texrefs=()):
    if texrefs:
        raise LogicError("texture references do not exist in CUDA 12 and later")
    func.arg_format = prepare_format(arg_types)
    # Parsed once for the Rust packer (which leaves formats it does not handle to
    # pack_prepared).
    func._set_format(func.arg_format)
    return func


def _fmt_of(func):
    try:
        return func.arg_format
    except AttributeError:
        raise LogicError("call prepare() before prepared_call()") from None


def _prepared_in_python(func, grid, block, args, stream, shared_size, timed=False):
    """The prepared call the Rust packer left: ``struct.pack`` of the converted values."""
    buf = pack_prepared(_fmt_of(func), args)
    return func._launch(_grid3(grid), _block3(block), buf, None, stream, int(shared_size),
                        timed)


def _prepared(func, grid, block, args, stream, shared_size, timed=False):
    t = func._prepared_launch(grid, block, args, stream, shared_size, timed)
    if t is not NotImplemented:
        return t
    return _prepared_in_python(func, grid, block, args, stream, shared_size, timed)


def _function_prepared_call(func, grid, block, *args, shared_size=0):
    # The common case in one native call (prepared_call is PyCUDA's fastest launch).
    if func._prepared_launch(grid, block, args, 0, shared_size) is NotImplemented:
        _prepared_in_python(func, grid, block, args, 0, shared_size)


def _function_prepared_timed_call(func, grid, block, *args, shared_size=0):
    t = _prepared(func, grid, block, args, 0, shared_size, True)
    return lambda: t


def _function_prepared_async_call(func, grid, block, stream, *args, shared_size=0):
    _prepared(func, grid, block, args, _stream_handle(stream) or 0, shared_size)


def _function_getattr(func, name):
    try:
        attr = function_attribute[name.upper()]
    except KeyError:
        raise AttributeError(name) from None
    return func.get_attribute(int(attr))


Function.__call__ = _function_call
Function.prepare = _function_prepare
Function.prepared_call = _function_prepared_call
Function.prepared_timed_call = _function_prepared_timed_call
Function.prepared_async_call = _function_prepared_async_call
Function.__getattr__ = _function_getattr

# }}}


# CUDA arrays, 2D/3D copies and IPC handles (their own module, over rucuda._native).
from pycuda._arrays import (  # noqa: E402
    Array,
    ArrayDescriptor,
    ArrayDescriptor3D,
    IPCMemoryHandle,
    Memcpy2D,
    Memcpy3D,
    array3d_flags,
    dtype_to_array_format,
    gpuarray_to_array,
    ipc_mem_flags,
    make_multichannel_2d_array,
    matrix_to_array,
    mem_get_ipc_handle,
    np_to_array,
)


def get_driver_version_tuple():
    v = get_driver_version()
    return (v // 1000, (v % 1000) // 10)


def _exit_hook():
    # Objects hold their contexts; nothing to tear down in order at exit.
    pass


assert sys.version_info >= (3, 9)
