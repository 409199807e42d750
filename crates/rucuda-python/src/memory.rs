//! Device allocations, page-locked host memory and copies (PyCUDA's memory functions).
//!
//! Python hands device memory around as integers (`int(allocation)`, offsets added by
//! hand), as PyCUDA does: these functions take addresses, and the caller vouches for
//! them, exactly as with PyCUDA. This module is the trust boundary of the Python face.

use numpy::ndarray::ArrayView1;
use numpy::PyArray1;
use pyo3::prelude::*;
use rucuda_driver::sys::CUdeviceptr;

use crate::block_cache;
use crate::context::current;
use crate::errors::{cu, raise, OrRaise};

/// Runs `f` in `ctx` (pushed, then popped), as a rucuda result.
fn in_context<R>(
    ctx: &rucuda_driver::Context,
    f: impl FnOnce() -> rucuda_driver::Result<R>,
) -> rucuda_driver::Result<R> {
    crate::context::with_pushed(ctx, f)
}

/// Device memory from `mem_alloc` (PyCUDA's `DeviceAllocation`): `int()` gives its address.
#[pyclass(module = "rucuda._native", subclass, weakref)]
pub struct DeviceAllocation {
    ptr: CUdeviceptr,
    size: usize,
    ctx: Option<rucuda_driver::Context>,
    /// Allocated with `cuMemAllocAsync` on the legacy default stream, and freed there.
    stream_ordered: bool,
    /// The block's size class when it is a small stream-ordered block, which goes back
    /// to the [`block_cache`] instead of the driver.
    class: Option<usize>,
}

impl DeviceAllocation {
    /// The device address.
    pub(crate) fn address(&self) -> CUdeviceptr {
        self.ptr
    }

    /// The ordinal of the device it was allocated on (None once freed).
    pub(crate) fn device_ordinal(&self) -> Option<usize> {
        self.ctx.as_ref().map(|c| c.device().ordinal())
    }

    fn release(&mut self) -> rucuda_driver::Result<()> {
        if let Some(ctx) = self.ctx.take() {
            let ptr = self.ptr;
            if self.stream_ordered {
                if let Some(class) = self.class {
                    if block_cache::give(&ctx, class, ptr) {
                        return Ok(());
                    }
                }
                // SAFETY: `ptr` came from cuMemAllocAsync in `ctx` and is freed once (ctx
                // taken), ordered on the legacy default stream after the work queued
                // there and on every blocking stream.
                return in_context(&ctx, || unsafe {
                    cu!(cuMemFreeAsync(ptr, std::ptr::null_mut()))
                });
            }
            // SAFETY: `ptr` came from cuMemAlloc in `ctx` and is freed once (ctx taken).
            return in_context(&ctx, || unsafe { cu!(cuMemFree_v2(ptr)) });
        }
        Ok(())
    }
}

impl Drop for DeviceAllocation {
    fn drop(&mut self) {
        // At interpreter exit the driver may already be shutting down: nothing to report to.
        let _ = self.release();
    }
}

#[pymethods]
impl DeviceAllocation {
    /// Frees the memory now (later uses of the address are the caller's error).
    fn free(&mut self) -> PyResult<()> {
        if self.ctx.is_none() {
            return Err(raise(
                "LogicError",
                "the allocation was already freed".into(),
            ));
        }
        self.release().or_raise()
    }

    /// Frees the memory once the work queued so far on the stream `stream` (a raw handle;
    /// 0: the legacy default stream) has run: for a temporary used on a caller's stream,
    /// which may be non-blocking and so unordered with the legacy stream that a
    /// stream-ordered free goes to. The host does not wait for a stream-ordered
    /// allocation (the legacy stream waits for an event recorded on `stream`); a plain one
    /// waits for `stream` first.
    fn free_after(&mut self, py: Python<'_>, stream: usize) -> PyResult<()> {
        let Some(ctx) = self.ctx.clone() else {
            return Err(raise(
                "LogicError",
                "the allocation was already freed".into(),
            ));
        };
        if stream != 0 {
            // SAFETY: PyCUDA's contract: `stream` is a live stream of the allocation's
            // context (the caller's `Stream`); the wrapper does not destroy it.
            let s = unsafe { rucuda_driver::Stream::from_raw(&ctx, stream as _) };
            let stream_ordered = self.stream_ordered;
            in_context(&ctx, || {
                if stream_ordered {
                    let done =
                        rucuda_driver::Event::new(&ctx, rucuda_driver::EventFlags::DISABLE_TIMING)?;
                    done.record(&s)?;
                    rucuda_driver::Stream::null(&ctx).wait_event(&done)
                } else {
                    py.allow_threads(|| s.synchronize())
                }
            })
            .or_raise()?;
        }
        self.release().or_raise()
    }

    fn __int__(&self) -> u64 {
        self.ptr
    }

    fn __index__(&self) -> u64 {
        self.ptr
    }

    #[getter]
    fn size(&self) -> usize {
        self.size
    }

    /// The address as an integer (PyCUDA's `as_buffer`-free way to get it).
    fn get_pointer(&self) -> u64 {
        self.ptr
    }

    fn __repr__(&self) -> String {
        format!("<DeviceAllocation {:#x}, {} bytes>", self.ptr, self.size)
    }
}

/// `mem_alloc(bytes)`: device memory in the current context.
#[pyfunction]
pub fn mem_alloc(bytes: usize) -> PyResult<DeviceAllocation> {
    let ctx = current()?;
    // A zero-byte allocation is refused by the driver; PyCUDA hands out one byte.
    let ptr = retrying(&ctx, true, |ptr| {
        // SAFETY: writes one address.
        unsafe { cu!(cuMemAlloc_v2(ptr, bytes.max(1))) }
    })?;
    Ok(DeviceAllocation {
        ptr,
        size: bytes,
        ctx: Some(ctx),
        stream_ordered: false,
        class: None,
    })
}

/// Runs `alloc`; when it runs out of memory and the [`block_cache`] held blocks of `ctx`,
/// frees them (and, for `cuMemAlloc`, which does not draw on the stream-ordered pool, waits
/// for the legacy stream so that the pool gives them back to the device) and tries once
/// more.
fn retrying(
    ctx: &rucuda_driver::Context,
    plain: bool,
    alloc: impl Fn(&mut CUdeviceptr) -> rucuda_driver::Result<()>,
) -> PyResult<CUdeviceptr> {
    let mut ptr: CUdeviceptr = 0;
    block_cache::retry_after_flush(
        || alloc(&mut ptr),
        || {
            let freed = block_cache::flush(ctx);
            if freed && plain {
                ctx.synchronize()?;
            }
            Ok(freed)
        },
    )
    .or_raise()?;
    Ok(ptr)
}

/// `mem_alloc_async(bytes)`: device memory from the context's stream-ordered pool
/// (`cuMemAllocAsync` on the legacy default stream; freed there with `cuMemFreeAsync`),
/// what GPUArrays use by default. Use from blocking streams (the default kind) is ordered
/// by the legacy stream's implicit synchronisation; work on non-blocking streams must not
/// outlive the allocation's owner. Plain `cuMemAlloc` where the device has no pools.
#[pyfunction]
pub fn mem_alloc_async(bytes: usize) -> PyResult<DeviceAllocation> {
    mem_alloc_async_in(current()?, bytes)
}

/// [`mem_alloc_async`] in `ctx`, which must be the current context (the array operators'
/// fast path knows it already).
pub(crate) fn mem_alloc_async_in(
    ctx: rucuda_driver::Context,
    bytes: usize,
) -> PyResult<DeviceAllocation> {
    if !ctx.supports_memory_pools() {
        return mem_alloc(bytes);
    }
    let class = block_cache::class_of(bytes);
    let cached = class.and_then(|c| block_cache::take(&ctx, c));
    let ptr = match cached {
        Some(ptr) => ptr,
        None => retrying(&ctx, false, |ptr| {
            // SAFETY: writes one address; freed with cuMemFreeAsync in release (or kept
            // by the block cache, which frees it so later).
            unsafe {
                cu!(cuMemAllocAsync(
                    ptr,
                    class.unwrap_or(bytes.max(1)),
                    std::ptr::null_mut()
                ))
            }
        })?,
    };
    Ok(DeviceAllocation {
        ptr,
        size: bytes,
        ctx: Some(ctx),
        stream_ordered: true,
        class,
    })
}

/// `(free, total)` bytes of the current context's device.
#[pyfunction]
pub fn mem_get_info() -> PyResult<(usize, usize)> {
    current()?.mem_get_info().or_raise()
}

fn stream_of(stream: usize) -> rucuda_driver::sys::CUstream {
    stream as rucuda_driver::sys::CUstream
}

/// Copies `nbytes` from host address `src` to device address `dst`; synchronous when
/// `stream` is None (GIL released while it runs).
///
/// # Safety (for the Python caller)
/// Both ranges must be valid; PyCUDA makes the same demand.
#[pyfunction]
#[pyo3(signature = (dst, src, nbytes, stream = None))]
pub fn copy_htod(
    py: Python<'_>,
    dst: u64,
    src: usize,
    nbytes: usize,
    stream: Option<usize>,
) -> PyResult<()> {
    let ctx = current()?;
    py.allow_threads(|| match stream {
        // Synchronous: rucuda's copy, staged through page-locked buffers when the host
        // memory is pageable and large (several times the driver's own pageable path).
        None => {
            if nbytes == 0 {
                return Ok(());
            }
            // SAFETY: the caller vouches for both ranges (PyCUDA's contract): `src` holds
            // `nbytes` readable bytes not written during the call, `dst` as many device
            // bytes that nothing else uses meanwhile.
            let (host, mut dev) = unsafe {
                (
                    std::slice::from_raw_parts(src as *const u8, nbytes),
                    rucuda_driver::ExternalDevicePtr::new(dst, nbytes),
                )
            };
            rucuda_driver::memcpy_htod(&ctx, &mut dev, host)
        }
        // SAFETY: as above; the host memory must stay until the stream reaches the copy.
        Some(s) => unsafe {
            cu!(cuMemcpyHtoDAsync_v2(
                dst,
                src as *const _,
                nbytes,
                stream_of(s)
            ))
        },
    })
    .or_raise()
}

/// Copies `nbytes` from device address `src` to host address `dst`.
#[pyfunction]
#[pyo3(signature = (dst, src, nbytes, stream = None))]
pub fn copy_dtoh(
    py: Python<'_>,
    dst: usize,
    src: u64,
    nbytes: usize,
    stream: Option<usize>,
) -> PyResult<()> {
    let ctx = current()?;
    py.allow_threads(|| match stream {
        // Synchronous: staged like `copy_htod`.
        None => {
            if nbytes == 0 {
                return Ok(());
            }
            // SAFETY: the caller vouches for both ranges (PyCUDA's contract): `dst` holds
            // `nbytes` writable bytes nothing else touches during the call, `src` as many
            // device bytes.
            let (host, dev) = unsafe {
                (
                    std::slice::from_raw_parts_mut(dst as *mut u8, nbytes),
                    rucuda_driver::ExternalDevicePtr::new(src, nbytes),
                )
            };
            rucuda_driver::memcpy_dtoh(&ctx, host, &dev)
        }
        // SAFETY: as above.
        Some(s) => unsafe {
            cu!(cuMemcpyDtoHAsync_v2(
                dst as *mut _,
                src,
                nbytes,
                stream_of(s)
            ))
        },
    })
    .or_raise()
}

/// Copies `nbytes` between device addresses.
#[pyfunction]
#[pyo3(signature = (dst, src, nbytes, stream = None))]
pub fn copy_dtod(
    py: Python<'_>,
    dst: u64,
    src: u64,
    nbytes: usize,
    stream: Option<usize>,
) -> PyResult<()> {
    current()?;
    py.allow_threads(|| match stream {
        // SAFETY: the caller vouches for both ranges (PyCUDA's contract).
        None => unsafe { cu!(cuMemcpyDtoD_v2(dst, src, nbytes)) },
        // SAFETY: as above.
        Some(s) => unsafe { cu!(cuMemcpyDtoDAsync_v2(dst, src, nbytes, stream_of(s))) },
    })
    .or_raise()
}

/// `memset_d8/d16/d32`: `count` elements of `width` bytes set to `value`.
#[pyfunction]
#[pyo3(signature = (dst, value, width, count, stream = None))]
pub fn memset(
    dst: u64,
    value: u32,
    width: u8,
    count: usize,
    stream: Option<usize>,
) -> PyResult<()> {
    current()?;
    let s = stream_of(stream.unwrap_or(0));
    // SAFETY: the caller vouches for the range (PyCUDA's contract).
    let r = unsafe {
        match width {
            1 => cu!(cuMemsetD8Async(dst, value as u8, count, s)),
            2 => cu!(cuMemsetD16Async(dst, value as u16, count, s)),
            4 => cu!(cuMemsetD32Async(dst, value, count, s)),
            _ => {
                return Err(raise(
                    "LogicError",
                    format!("memset: width {width} is not 1, 2 or 4"),
                ))
            }
        }
    };
    r.or_raise()?;
    if stream.is_none() {
        // SAFETY: waits for the null stream.
        unsafe { cu!(cuStreamSynchronize(std::ptr::null_mut())) }.or_raise()?;
    }
    Ok(())
}

/// Page-locked host memory (PyCUDA's `HostAllocation`): the base of the NumPy arrays
/// `pagelocked_empty` returns.
#[pyclass(module = "rucuda._native")]
pub struct HostAllocation {
    ptr: usize,
    size: usize,
    registered: bool,
    ctx: Option<rucuda_driver::Context>,
    /// The Python object owning registered memory, kept alive while registered.
    _keep: Option<PyObject>,
}

impl HostAllocation {
    fn release(&mut self) -> rucuda_driver::Result<()> {
        if let Some(ctx) = self.ctx.take() {
            let ptr = self.ptr as *mut std::ffi::c_void;
            let registered = self.registered;
            return in_context(&ctx, || {
                if registered {
                    // SAFETY: registered once by register_host_memory, unregistered once.
                    unsafe { cu!(cuMemHostUnregister(ptr)) }
                } else {
                    // SAFETY: from cuMemHostAlloc, freed once (ctx taken).
                    unsafe { cu!(cuMemFreeHost(ptr)) }
                }
            });
        }
        Ok(())
    }
}

impl Drop for HostAllocation {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

#[pymethods]
impl HostAllocation {
    /// The device address of mapped memory.
    fn get_device_pointer(&self) -> PyResult<u64> {
        let mut d: CUdeviceptr = 0;
        // SAFETY: writes one address for a live host allocation.
        unsafe { cu!(cuMemHostGetDevicePointer_v2(&mut d, self.ptr as *mut _, 0)) }.or_raise()?;
        Ok(d)
    }

    /// Frees (or unregisters) now; arrays over it must not be used afterwards.
    fn free(&mut self) -> PyResult<()> {
        self.release().or_raise()
    }

    #[getter]
    fn size(&self) -> usize {
        self.size
    }
}

/// An owner and a NumPy `uint8` view of its bytes.
fn bytes_array<'py>(owner: Bound<'py, HostAllocation>) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let (ptr, size) = {
        let h = owner.borrow();
        (h.ptr, h.size)
    };
    // SAFETY: `ptr..ptr+size` is the allocation `owner` holds; the array keeps `owner`
    // alive as its base, so the memory lives as long as any view of it.
    unsafe {
        let view = ArrayView1::from_shape_ptr(size, ptr as *const u8);
        let array = PyArray1::borrow_from_array(&view, owner.into_any());
        Ok(array)
    }
}

/// `nbytes` of page-locked memory as a `uint8` array (the Python side shapes it).
#[pyfunction]
#[pyo3(signature = (nbytes, flags = 0))]
pub fn pagelocked_bytes(
    py: Python<'_>,
    nbytes: usize,
    flags: u32,
) -> PyResult<Bound<'_, PyArray1<u8>>> {
    let ctx = current()?;
    let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
    // SAFETY: writes one host address of at least one byte.
    unsafe { cu!(cuMemHostAlloc(&mut p, nbytes.max(1), flags)) }.or_raise()?;
    let owner = Bound::new(
        py,
        HostAllocation {
            ptr: p as usize,
            size: nbytes,
            registered: false,
            ctx: Some(ctx),
            _keep: None,
        },
    )?;
    bytes_array(owner)
}

/// Page-locks `nbytes` at `addr` (host memory the caller keeps alive) and returns a
/// `uint8` array over it whose base unregisters it when it goes.
#[pyfunction]
#[pyo3(signature = (owner, addr, nbytes, flags = 0))]
pub fn register_host_bytes<'py>(
    py: Python<'py>,
    owner: PyObject,
    addr: usize,
    nbytes: usize,
    flags: u32,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let ctx = current()?;
    // SAFETY: the caller vouches for the range and keeps it alive while registered.
    unsafe { cu!(cuMemHostRegister_v2(addr as *mut _, nbytes, flags)) }.or_raise()?;
    let owner = Bound::new(
        py,
        HostAllocation {
            ptr: addr,
            size: nbytes,
            registered: true,
            ctx: Some(ctx),
            _keep: Some(owner),
        },
    )?;
    bytes_array(owner)
}

/// Gives the cached small blocks of every context back to the driver
/// (`pycuda.tools.clear_context_caches` calls it).
#[pyfunction]
pub fn flush_block_cache() {
    block_cache::flush_all();
}
