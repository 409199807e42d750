//! CUDA arrays (PyCUDA's `Array`), 2D and 3D copies (`Memcpy2D`, `Memcpy3D`) and IPC
//! memory handles (`mem_get_ipc_handle`, `IPCMemoryHandle`).
//!
//! An `Array` is rucuda-driver's `CudaArray`. The copies take what PyCUDA's take: host
//! memory, device memory and unified memory as addresses, arrays as `Array` objects, and
//! the caller vouches for the addresses and pitches (PyCUDA's contract, as in `memory`).

use pyo3::prelude::*;
use rucuda_driver::sys::{
    CUarray, CUdeviceptr, CUipcMemHandle, CUmemorytype, CUDA_MEMCPY2D, CUDA_MEMCPY3D,
};
use rucuda_driver::{Array3DFlags, ArrayDescriptor3D, ArrayFormat};

use crate::context::{current, with_pushed, InContext};
use crate::errors::{cu, raise, OrRaise};

/// A CUDA array (PyCUDA's `Array`); it holds its context.
#[pyclass(module = "rucuda._native")]
pub struct Array {
    inner: Option<InContext<rucuda_driver::CudaArray>>,
}

impl Array {
    fn get(&self) -> PyResult<&rucuda_driver::CudaArray> {
        self.inner
            .as_deref()
            .ok_or_else(|| raise("LogicError", "the array was freed".into()))
    }
}

#[pymethods]
impl Array {
    /// An array of `width` x `height` x `depth` elements (0 for the dimensions it does not
    /// have) of `num_channels` channels of `format` (a `CUarray_format` value), with
    /// `flags` (`array3d_flags`), in the current context.
    #[new]
    #[pyo3(signature = (width, height, depth, format, num_channels, flags = 0))]
    fn new(
        width: usize,
        height: usize,
        depth: usize,
        format: u32,
        num_channels: u32,
        flags: u32,
    ) -> PyResult<Array> {
        let ctx = current()?;
        let flags = Array3DFlags::from_bits(flags)
            .ok_or_else(|| raise("LogicError", format!("Array: unknown flags {flags:#x}")))?;
        let desc = ArrayDescriptor3D {
            width,
            height,
            depth,
            format: ArrayFormat::from_raw(rucuda_driver::sys::CUarray_format(format)),
            num_channels,
            flags,
        };
        let a = rucuda_driver::CudaArray::new_3d(&ctx, &desc).or_raise()?;
        Ok(Array {
            inner: Some(InContext::new(ctx, a)),
        })
    }

    /// `(width, height, depth, format, num_channels, flags)` as the array was made.
    fn descriptor_3d(&self) -> PyResult<(usize, usize, usize, u32, u32, u32)> {
        let d = self.get()?.desc();
        Ok((
            d.width,
            d.height,
            d.depth,
            d.format.raw().0,
            d.num_channels,
            d.flags.bits(),
        ))
    }

    /// The raw `CUarray` handle.
    #[getter]
    fn handle(&self) -> PyResult<usize> {
        Ok(self.get()?.raw() as usize)
    }

    /// Frees the array now.
    fn free(&mut self) -> PyResult<()> {
        match self.inner.take() {
            Some(a) => {
                drop(a);
                Ok(())
            }
            None => Err(raise("LogicError", "the array was already freed".into())),
        }
    }
}

/// One side of a copy as Python gives it: `(memory type, address or array, x in bytes, y,
/// z, pitch, height)`; the memory type is `CUmemorytype`'s (1 host, 2 device, 3 array,
/// 4 unified), and for an array the second item is the `Array`.
type Side<'py> = (u32, Bound<'py, PyAny>, usize, usize, usize, usize, usize);

/// A side's memory, resolved: its type and the host pointer, device address or array.
struct Place {
    kind: CUmemorytype,
    host: usize,
    device: CUdeviceptr,
    array: CUarray,
}

fn place(kind: u32, what: &Bound<'_, PyAny>) -> PyResult<Place> {
    let mut p = Place {
        kind: CUmemorytype(kind),
        host: 0,
        device: 0,
        array: std::ptr::null_mut(),
    };
    match kind {
        1 => p.host = what.extract()?,
        2 | 4 => p.device = what.extract()?,
        3 => {
            let a = what.downcast::<Array>()?;
            p.array = a.borrow().get()?.raw();
        }
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown memory type {other} (1 host, 2 device, 3 array, 4 unified)"
            )))
        }
    }
    Ok(p)
}

/// A 2D copy (PyCUDA's `Memcpy2D.__call__`): `width_in_bytes` x `height` from `src` to
/// `dst`; on `stream` when given (a raw handle), else waiting for it; `aligned` false uses
/// `cuMemcpy2DUnaligned`.
#[pyfunction]
#[pyo3(signature = (src, dst, width_in_bytes, height, aligned = true, stream = None))]
pub fn memcpy_2d(
    py: Python<'_>,
    src: Side<'_>,
    dst: Side<'_>,
    width_in_bytes: usize,
    height: usize,
    aligned: bool,
    stream: Option<usize>,
) -> PyResult<()> {
    current()?;
    let (s, d) = (place(src.0, &src.1)?, place(dst.0, &dst.1)?);
    let raw = CUDA_MEMCPY2D {
        srcXInBytes: src.2,
        srcY: src.3,
        srcMemoryType: s.kind,
        srcHost: s.host as *const _,
        srcDevice: s.device,
        srcArray: s.array,
        srcPitch: src.5,
        dstXInBytes: dst.2,
        dstY: dst.3,
        dstMemoryType: d.kind,
        dstHost: d.host as *mut _,
        dstDevice: d.device,
        dstArray: d.array,
        dstPitch: dst.5,
        WidthInBytes: width_in_bytes,
        Height: height,
    };
    let handles = RawCopy(raw);
    py.allow_threads(move || {
        // The whole wrapper moves in (a closure would capture only the field).
        let handles = handles;
        let raw = &handles.0;
        match stream {
            // SAFETY: PyCUDA's contract: the caller vouches for both sides' memory (and,
            // asynchronously, keeps it alive until the stream has run the copy).
            Some(h) => unsafe { cu!(cuMemcpy2DAsync_v2(raw, h as _)) },
            // SAFETY: as above.
            None if aligned => unsafe { cu!(cuMemcpy2D_v2(raw)) },
            // SAFETY: as above.
            None => unsafe { cu!(cuMemcpy2DUnaligned_v2(raw)) },
        }
    })
    .or_raise()
}

/// A 3D copy (PyCUDA's `Memcpy3D.__call__`): `width_in_bytes` x `height` x `depth`.
#[pyfunction]
#[pyo3(signature = (src, dst, width_in_bytes, height, depth, stream = None))]
pub fn memcpy_3d(
    py: Python<'_>,
    src: Side<'_>,
    dst: Side<'_>,
    width_in_bytes: usize,
    height: usize,
    depth: usize,
    stream: Option<usize>,
) -> PyResult<()> {
    current()?;
    let (s, d) = (place(src.0, &src.1)?, place(dst.0, &dst.1)?);
    let raw = CUDA_MEMCPY3D {
        srcXInBytes: src.2,
        srcY: src.3,
        srcZ: src.4,
        srcLOD: 0,
        srcMemoryType: s.kind,
        srcHost: s.host as *const _,
        srcDevice: s.device,
        srcArray: s.array,
        reserved0: std::ptr::null_mut(),
        srcPitch: src.5,
        srcHeight: src.6,
        dstXInBytes: dst.2,
        dstY: dst.3,
        dstZ: dst.4,
        dstLOD: 0,
        dstMemoryType: d.kind,
        dstHost: d.host as *mut _,
        dstDevice: d.device,
        dstArray: d.array,
        reserved1: std::ptr::null_mut(),
        dstPitch: dst.5,
        dstHeight: dst.6,
        WidthInBytes: width_in_bytes,
        Height: height,
        Depth: depth,
    };
    let handles = RawCopy(raw);
    py.allow_threads(move || {
        // The whole wrapper moves in (a closure would capture only the field).
        let handles = handles;
        let raw = &handles.0;
        match stream {
            // SAFETY: PyCUDA's contract, as in memcpy_2d.
            Some(h) => unsafe { cu!(cuMemcpy3DAsync_v2(raw, h as _)) },
            // SAFETY: as above.
            None => unsafe { cu!(cuMemcpy3D_v2(raw)) },
        }
    })
    .or_raise()
}

/// A copy's driver struct carried across `allow_threads`: it holds raw pointers, which
/// are plain addresses here (the caller's memory, as with every copy of this module).
struct RawCopy<T>(T);
// SAFETY: the struct is read by the driver call on the thread that made it, while the
// GIL is released; its pointers are addresses, not Rust borrows.
unsafe impl<T> Send for RawCopy<T> {}

/// `mem_get_ipc_handle(address)`: the 64-byte IPC handle of the allocation holding
/// `address` (`cuIpcGetMemHandle`).
#[pyfunction]
pub fn mem_get_ipc_handle(address: u64) -> PyResult<Vec<u8>> {
    current()?;
    let mut h = CUipcMemHandle::default();
    // SAFETY: writes one handle; the driver checks the address.
    if let Err(e) = unsafe { cu!(cuIpcGetMemHandle(&mut h, address)) } {
        let mut pool = 0u64;
        // SAFETY: the attribute is one pointer-sized handle, written into 8 bytes.
        let pooled = unsafe {
            cu!(cuPointerGetAttribute(
                (&mut pool as *mut u64).cast(),
                rucuda_driver::sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                address
            ))
        }
        .is_ok_and(|()| pool != 0);
        if pooled {
            return Err(raise(
                "LogicError",
                format!(
                    "mem_get_ipc_handle: {address:#x} is stream-ordered memory (from \
                     mem_alloc_async, GPUArray's default allocator), which CUDA cannot \
                     share through IPC handles; allocate it with drv.mem_alloc (e.g. \
                     gpuarray.to_gpu(x, allocator=drv.mem_alloc)) ({e})"
                ),
            ));
        }
        return Err(e).or_raise();
    }
    Ok(h.reserved.iter().map(|&c| c as u8).collect())
}

/// Device memory of another process opened from its IPC handle (PyCUDA's
/// `IPCMemoryHandle`): `int()` gives its address here; closed when dropped or by
/// `close()`.
#[pyclass(module = "rucuda._native")]
pub struct IpcMemoryHandle {
    ptr: CUdeviceptr,
    ctx: Option<rucuda_driver::Context>,
}

impl IpcMemoryHandle {
    fn release(&mut self) -> rucuda_driver::Result<()> {
        match self.ctx.take() {
            // SAFETY: `ptr` came from cuIpcOpenMemHandle in `ctx` and is closed once.
            Some(ctx) => with_pushed(&ctx, || unsafe { cu!(cuIpcCloseMemHandle(self.ptr)) }),
            None => Ok(()),
        }
    }
}

impl Drop for IpcMemoryHandle {
    fn drop(&mut self) {
        // At interpreter exit the driver may be gone: nothing to report to.
        let _ = self.release();
    }
}

#[pymethods]
impl IpcMemoryHandle {
    /// Opens `handle` (64 bytes from `mem_get_ipc_handle` in another process) in the
    /// current context, with `flags` (`ipc_mem_flags`).
    #[new]
    #[pyo3(signature = (handle, flags = 1))]
    fn new(handle: Vec<u8>, flags: u32) -> PyResult<IpcMemoryHandle> {
        let ctx = current()?;
        let mut h = CUipcMemHandle::default();
        if handle.len() != h.reserved.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "an IPC handle has {} bytes, not {}",
                h.reserved.len(),
                handle.len()
            )));
        }
        for (d, s) in h.reserved.iter_mut().zip(&handle) {
            *d = *s as std::os::raw::c_char;
        }
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: writes one address; the driver checks the handle.
        unsafe { cu!(cuIpcOpenMemHandle_v2(&mut ptr, h, flags)) }.or_raise()?;
        Ok(IpcMemoryHandle {
            ptr,
            ctx: Some(ctx),
        })
    }

    fn __int__(&self) -> u64 {
        self.ptr
    }

    fn __index__(&self) -> u64 {
        self.ptr
    }

    /// Closes the mapping now (later uses of the address are the caller's error).
    fn close(&mut self) -> PyResult<()> {
        if self.ctx.is_none() {
            return Err(raise("LogicError", "the handle was already closed".into()));
        }
        self.release().or_raise()
    }
}
