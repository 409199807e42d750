"""CUDA arrays, 2D and 3D copies and IPC handles of ``pycuda.driver``: ``ArrayDescriptor``,
``ArrayDescriptor3D``, ``Array``, ``Memcpy2D``, ``Memcpy3D``, the ``*_to_array`` helpers,
``mem_get_ipc_handle`` and ``IPCMemoryHandle``. The arrays, copies and handles are
``rucuda._native``'s; this module keeps PyCUDA's attribute-style interface over them."""
from __future__ import annotations

import enum

import numpy as np

from rucuda import _native


class array3d_flags(enum.IntFlag):  # noqa: N801 (PyCUDA's name)
    ARRAY3D_LAYERED = 1
    LAYERED = 1
    SURFACE_LDST = 2
    CUBEMAP = 4
    TEXTURE_GATHER = 8


class ipc_mem_flags(enum.IntEnum):  # noqa: N801
    LAZY_ENABLE_PEER_ACCESS = 1


class ArrayDescriptor:
    """Shape and element type of a 1D or 2D CUDA array (``height`` 0: 1D)."""

    def __init__(self):
        self.width = 0
        self.height = 0
        self.format = 0
        self.num_channels = 1


class ArrayDescriptor3D(ArrayDescriptor):
    """Shape, element type and flags of a CUDA array of up to three dimensions."""

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.flags = 0


class Array:
    """A CUDA array made from an ``ArrayDescriptor`` or ``ArrayDescriptor3D``."""

    def __init__(self, descriptor):
        d = descriptor
        self._native = _native.Array(int(d.width), int(d.height),
                                     int(getattr(d, "depth", 0)), int(d.format),
                                     int(d.num_channels), int(getattr(d, "flags", 0)))

    def get_descriptor(self):
        w, h, _d, fmt, ch, _f = self._native.descriptor_3d()
        d = ArrayDescriptor()
        d.width, d.height, d.format, d.num_channels = w, h, _format(fmt), ch
        return d

    def get_descriptor_3d(self):
        w, h, depth, fmt, ch, flags = self._native.descriptor_3d()
        d = ArrayDescriptor3D()
        d.width, d.height, d.depth, d.format, d.num_channels, d.flags = (
            w, h, depth, _format(fmt), ch, array3d_flags(flags))
        return d

    @property
    def handle(self):
        return self._native.handle

    def free(self):
        self._native.free()


def _format(raw):
    from pycuda.driver import array_format
    try:
        return array_format(raw)
    except ValueError:
        return raw


_HOST, _DEVICE, _ARRAY, _UNIFIED = 1, 2, 3, 4


class _Copy:
    """What ``Memcpy2D`` and ``Memcpy3D`` share: the two sides, set by ``set_src_*`` and
    ``set_dst_*``, with their offsets and pitches as attributes."""

    _SIDE_FIELDS = ("x_in_bytes", "y", "z", "pitch", "height")

    def __init__(self):
        for side in ("src", "dst"):
            for f in self._SIDE_FIELDS:
                setattr(self, f"{side}_{f}", 0)
        self.width_in_bytes = 0
        self.height = 0
        self._src = self._dst = None
        # Host arrays stay referenced while the copy object lives (an asynchronous copy
        # reads or writes them after the call returns).
        self._keep = {}

    def _set(self, side, kind, what, keep=None):
        setattr(self, "_" + side, (kind, what))
        self._keep[side] = keep

    def _host(self, side, ary, writable):
        from pycuda.driver import _host_address
        addr, _n, ary = _host_address(ary, writable=writable)
        self._set(side, _HOST, addr, ary)

    def set_src_host(self, ary):
        self._host("src", ary, False)

    def set_dst_host(self, ary):
        self._host("dst", ary, True)

    def set_src_device(self, ptr):
        from pycuda.driver import _dev_address
        self._set("src", _DEVICE, _dev_address(ptr))

    def set_dst_device(self, ptr):
        from pycuda.driver import _dev_address
        self._set("dst", _DEVICE, _dev_address(ptr))

    def set_src_unified(self, ptr):
        from pycuda.driver import _dev_address
        self._set("src", _UNIFIED, _dev_address(ptr))

    def set_dst_unified(self, ptr):
        from pycuda.driver import _dev_address
        self._set("dst", _UNIFIED, _dev_address(ptr))

    def set_src_array(self, ary):
        self._set("src", _ARRAY, ary._native, ary)

    def set_dst_array(self, ary):
        self._set("dst", _ARRAY, ary._native, ary)

    def _side(self, side):
        where = getattr(self, "_" + side)
        if where is None:
            from pycuda.driver import LogicError
            raise LogicError(f"no {'source' if side == 'src' else 'destination'} set: "
                             f"call set_{side}_host, _device, _array or _unified first")
        kind, what = where
        return (kind, what, int(getattr(self, f"{side}_x_in_bytes")),
                int(getattr(self, f"{side}_y")), int(getattr(self, f"{side}_z")),
                int(getattr(self, f"{side}_pitch")), int(getattr(self, f"{side}_height")))

    @staticmethod
    def _stream_or_aligned(arg):
        """``copy(stream)`` or ``copy(aligned=...)``: (stream handle or None, aligned)."""
        if hasattr(arg, "handle") and not isinstance(arg, bool):
            return int(arg.handle), True
        return None, bool(arg)


class Memcpy2D(_Copy):
    """A 2D copy of ``height`` rows of ``width_in_bytes`` bytes; ``copy()`` or
    ``copy(aligned=False)`` waits for it, ``copy(stream)`` queues it."""

    def __call__(self, stream_or_aligned=True, aligned=None):
        stream, al = self._stream_or_aligned(stream_or_aligned)
        if aligned is not None:
            al = bool(aligned)
        _native.memcpy_2d(self._side("src"), self._side("dst"), int(self.width_in_bytes),
                          int(self.height), al, stream)


class Memcpy3D(_Copy):
    """A 3D copy of ``depth`` slices of ``height`` rows of ``width_in_bytes`` bytes
    (``src_height``, ``dst_height``: rows per slice of linear memory)."""

    def __init__(self):
        super().__init__()
        self.depth = 0

    def __call__(self, stream=None):
        handle = None if stream is None else int(stream.handle)
        _native.memcpy_3d(self._side("src"), self._side("dst"), int(self.width_in_bytes),
                          int(self.height), int(self.depth), handle)


# {{{ arrays from host and device data

def dtype_to_array_format(dtype):
    """The ``array_format`` of single channels of ``dtype``."""
    from pycuda.driver import array_format
    formats = {np.uint8: array_format.UNSIGNED_INT8, np.uint16: array_format.UNSIGNED_INT16,
               np.uint32: array_format.UNSIGNED_INT32, np.int8: array_format.SIGNED_INT8,
               np.int16: array_format.SIGNED_INT16, np.int32: array_format.SIGNED_INT32,
               np.float16: array_format.HALF, np.float32: array_format.FLOAT}
    for t, f in formats.items():
        if np.dtype(dtype) == np.dtype(t):
            return f
    raise TypeError(f"cannot convert dtype '{dtype}' to array format")


def _channels(dtype):
    """(format, channels) of an element: doubles and complex values travel as 2 or 4
    32-bit integers (read back with ``__hiloint2double`` and friends), as in PyCUDA."""
    from pycuda.driver import array_format
    wide = {np.dtype(np.float64): 2, np.dtype(np.complex64): 2, np.dtype(np.complex128): 4}
    n = wide.get(np.dtype(dtype))
    if n is not None:
        return array_format.SIGNED_INT32, n
    return dtype_to_array_format(dtype), 1


def _to_array(kind, source, shape, itemsize, dtype, order, surface, channels=None):
    """A CUDA array holding ``source`` (host array or device address) of ``shape``.
    ``order`` "C" or "F" says how the data lies in memory: the array's rows are the
    fastest-moving dimension (for "F" the first one)."""
    from pycuda.driver import LogicError
    if order not in ("C", "F"):
        raise LogicError("order must be either F or C")
    if len(shape) not in (2, 3):
        raise LogicError("CUDA arrays of 2 or 3 dimensions are supported")
    dims = [int(x) for x in (shape if order == "C" else tuple(reversed(shape)))]
    width, height = dims[-1], dims[-2]
    depth = dims[0] if len(dims) == 3 else 1
    fmt, nch = channels if channels is not None else _channels(dtype)
    three_d = surface or len(dims) == 3
    descr = ArrayDescriptor3D() if three_d else ArrayDescriptor()
    descr.width, descr.height, descr.format, descr.num_channels = width, height, fmt, nch
    if three_d:
        descr.depth = depth
        if surface:
            descr.flags = (array3d_flags.LAYERED if len(dims) == 2 else 0) | \
                array3d_flags.SURFACE_LDST
    ary = Array(descr)
    copy = Memcpy3D() if three_d else Memcpy2D()
    (copy.set_src_host if kind == _HOST else copy.set_src_device)(source)
    copy.set_dst_array(ary)
    copy.width_in_bytes = copy.src_pitch = width * itemsize
    copy.height = copy.src_height = height
    if three_d:
        copy.depth = depth
    copy()
    return ary


def np_to_array(nparray, order, allowSurfaceBind=False):  # noqa: N803 (PyCUDA's name)
    """A CUDA array with the values of a 2D or 3D NumPy array."""
    a = np.asarray(nparray, order=order if order in ("C", "F") else "K")
    return _to_array(_HOST, a, a.shape, a.itemsize, a.dtype, order, allowSurfaceBind)


def gpuarray_to_array(gpuarray, order, allowSurfaceBind=False):  # noqa: N803
    """A CUDA array with the values of a contiguous 2D or 3D GPUArray."""
    from pycuda.driver import LogicError
    f = gpuarray.flags
    if not (f.c_contiguous if order == "C" else f.f_contiguous if order == "F" else True):
        raise LogicError(f"the GPUArray is not {order}-contiguous")
    return _to_array(_DEVICE, gpuarray.ptr, gpuarray.shape, gpuarray.dtype.itemsize,
                     gpuarray.dtype, order, allowSurfaceBind)


def matrix_to_array(matrix, order, allow_double_hack=False):
    """A 2D CUDA array with the values of a NumPy matrix; doubles only with
    ``allow_double_hack`` (as two 32-bit integers per element)."""
    order = order.upper()
    m = np.asarray(matrix, order=order if order in ("C", "F") else "K")
    if m.dtype == np.float64 and not allow_double_hack:
        raise TypeError("cannot convert dtype 'float64' to array format "
                        "(pass allow_double_hack=True)")
    return _to_array(_HOST, m, m.shape, m.itemsize, m.dtype, order, False)


def make_multichannel_2d_array(ndarray, order):
    """A 2D CUDA array of multi-channel elements: shape (height, width, channels) in C
    order, (channels, width, height) in F order."""
    from pycuda.driver import LogicError
    order = order.upper()
    if order not in ("C", "F"):
        raise LogicError("order must be either F or C")
    a = np.asarray(ndarray, order=order)
    channels = a.shape[2] if order == "C" else a.shape[0]
    plane = a.shape[:2] if order == "C" else a.shape[1:]
    return _to_array(_HOST, a, plane, a.itemsize * channels, a.dtype, order, False,
                     (dtype_to_array_format(a.dtype), channels))

# }}}


def mem_get_ipc_handle(devptr):
    """The IPC handle (64 bytes) of the allocation holding ``devptr``, to open in another
    process with ``IPCMemoryHandle``."""
    from pycuda.driver import _dev_address
    return bytes(_native.mem_get_ipc_handle(_dev_address(devptr)))


IPCMemoryHandle = _native.IpcMemoryHandle
