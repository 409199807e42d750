//! CUDA arrays: opaque, texture-laid-out device memory in one, two or three dimensions,
//! layered or cubemap (PyCUDA's `Array`).
//!
//! Arrays are read by kernels through [`crate::TextureObject`]s and written through
//! [`crate::SurfaceObject`]s; the host fills and reads them with the copies of
//! `host_copy.rs` ([`CudaArray::copy_from_host`], [`crate::Memcpy2D`], [`crate::Memcpy3D`]).

use rucuda_driver_sys::{CUarray, CUDA_ARRAY3D_DESCRIPTOR, CUDA_ARRAY_DESCRIPTOR};

use crate::arrays::descriptor::ArrayDescriptor;
use crate::arrays::descriptor::ArrayDescriptor3D;
use crate::context::Context;
use crate::error::{call, Result};

/// A CUDA array (PyCUDA's `Array`): 1D, 2D, 3D, layered or cubemap device memory in the
/// texture hardware's layout. Destroyed on drop (errors queued on the context) or with
/// [`CudaArray::free`] (errors returned).
///
/// ```no_run
/// use rucuda_driver::{ArrayDescriptor3D, ArrayFormat, CudaArray, Device};
/// let ctx = Device::get(0)?.primary_context()?;
/// let mut a = CudaArray::new_3d(&ctx, &ArrayDescriptor3D::d2(64, 32, ArrayFormat::F32, 1))?;
/// a.copy_from_host(&vec![1.0f32; 64 * 32])?;
/// assert_eq!(a.descriptor_3d()?.width, 64);
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub struct CudaArray {
    raw: CUarray,
    desc: ArrayDescriptor3D,
    ctx: Context,
}

// SAFETY: a CUarray handle may be used from any thread of the process; the struct is
// immutable apart from the device memory it names.
unsafe impl Send for CudaArray {}
// SAFETY: as above; shared references only read the handle.
unsafe impl Sync for CudaArray {}

impl std::fmt::Debug for CudaArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaArray")
            .field("raw", &self.raw)
            .field("desc", &self.desc)
            .finish()
    }
}

impl CudaArray {
    /// Creates a 1D or 2D array with `cuArrayCreate` (PyCUDA's `Array(ArrayDescriptor)`).
    pub fn new(ctx: &Context, desc: &ArrayDescriptor) -> Result<CudaArray> {
        desc.to_3d().validate()?;
        ctx.bind()?;
        let raw_desc = desc.to_raw();
        let mut raw: CUarray = std::ptr::null_mut();
        // SAFETY: reads one descriptor, writes one handle; destroyed on drop.
        unsafe { call!(cuArrayCreate_v2(&mut raw, &raw_desc))? };
        Ok(CudaArray {
            raw,
            desc: desc.to_3d(),
            ctx: ctx.clone(),
        })
    }

    /// Creates any array with `cuArray3DCreate` (PyCUDA's `Array(ArrayDescriptor3D)`):
    /// the only way to set [`Array3DFlags`](crate::Array3DFlags).
    pub fn new_3d(ctx: &Context, desc: &ArrayDescriptor3D) -> Result<CudaArray> {
        desc.validate()?;
        ctx.bind()?;
        let raw_desc = desc.to_raw();
        let mut raw: CUarray = std::ptr::null_mut();
        // SAFETY: reads one descriptor, writes one handle; destroyed on drop.
        unsafe { call!(cuArray3DCreate_v2(&mut raw, &raw_desc))? };
        Ok(CudaArray {
            raw,
            desc: *desc,
            ctx: ctx.clone(),
        })
    }

    /// The descriptor as the driver reports it for a 1D or 2D array
    /// (`cuArrayGetDescriptor`, PyCUDA's `get_descriptor`).
    pub fn descriptor(&self) -> Result<ArrayDescriptor> {
        self.ctx.bind()?;
        let mut raw = CUDA_ARRAY_DESCRIPTOR::default();
        // SAFETY: writes one descriptor; the handle is alive.
        unsafe { call!(cuArrayGetDescriptor_v2(&mut raw, self.raw))? };
        Ok(ArrayDescriptor::from_raw(&raw))
    }

    /// The descriptor as the driver reports it, for any array (`cuArray3DGetDescriptor`,
    /// PyCUDA's `get_descriptor_3d`).
    pub fn descriptor_3d(&self) -> Result<ArrayDescriptor3D> {
        self.ctx.bind()?;
        let mut raw = CUDA_ARRAY3D_DESCRIPTOR::default();
        // SAFETY: writes one descriptor; the handle is alive.
        unsafe { call!(cuArray3DGetDescriptor_v2(&mut raw, self.raw))? };
        Ok(ArrayDescriptor3D::from_raw(&raw))
    }

    /// The descriptor it was created with (no driver call).
    pub fn desc(&self) -> &ArrayDescriptor3D {
        &self.desc
    }

    /// Bytes of the whole array.
    pub fn byte_size(&self) -> Result<usize> {
        self.desc.byte_size()
    }

    /// The raw handle (PyCUDA's `handle`).
    pub fn raw(&self) -> CUarray {
        self.raw
    }

    /// The context it belongs to.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Destroys the array now and returns any error (PyCUDA's `free`).
    pub fn free(self) -> Result<()> {
        let me = std::mem::ManuallyDrop::new(self);
        let r = me.release();
        // SAFETY: `me` is never dropped, so the context is read (and dropped) exactly once.
        drop(unsafe { std::ptr::read(&me.ctx) });
        r
    }

    fn release(&self) -> Result<()> {
        self.ctx.make_current()?;
        // SAFETY: created by this object and destroyed once (drop and free consume it).
        unsafe { call!(cuArrayDestroy(self.raw)) }
    }
}

impl Drop for CudaArray {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            self.ctx.defer_error(e);
        }
    }
}
