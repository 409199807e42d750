//! [`Memcpy2D`], [`Memcpy3D`] and [`Memcpy3DPeer`] (PyCUDA's classes of the same
//! names).

use super::endpoint::{
    device_endpoint, host_endpoint, host_endpoint_mut, unified_endpoint, unified_endpoint_mut,
};
use std::ffi::c_void;
use std::marker::PhantomData;

use rucuda_driver_sys::{CUDA_MEMCPY2D, CUDA_MEMCPY3D, CUDA_MEMCPY3D_PEER};

use crate::arrays::cuda_array::CudaArray;
use crate::arrays::structured::endpoint::Endpoint;
use crate::arrays::structured::geometry::Geometry;
use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::memory::tracking::finish_legacy_stream;
use crate::memory::tracking::DevicePtr;
use crate::repr::DeviceRepr;
use crate::streams::stream::Stream;

fn check_stream(op: &str, ctx: &Context, stream: &Stream) -> Result<()> {
    if stream.context() != ctx {
        return Err(Error::invalid(format!(
            "{op}: the stream belongs to another context than the copy"
        )));
    }
    Ok(())
}

/// A 2D copy of `height` rows of `width_in_bytes` bytes (PyCUDA's `Memcpy2D`).
///
/// ```no_run
/// use rucuda_driver::{ArrayDescriptor, ArrayFormat, CudaArray, Device, Memcpy2D};
/// let ctx = Device::get(0)?.primary_context()?;
/// // A 16 x 8 block of f32 out of a host image 100 floats wide, at column 4, row 2.
/// let image = vec![0.5f32; 100 * 50];
/// let mut tile = CudaArray::new(&ctx, &ArrayDescriptor::new(16, 8, ArrayFormat::F32, 1))?;
/// Memcpy2D::new(&ctx)
///     .src_host(&image).src_pitch(100 * 4).src_x_in_bytes(4 * 4).src_y(2)
///     .dst_array(&mut tile)
///     .width_in_bytes(16 * 4).height(8)
///     .execute()?;
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub struct Memcpy2D<'a> {
    ctx: Context,
    g: Geometry<'a>,
    _borrows: PhantomData<&'a mut ()>,
}

impl std::fmt::Debug for Memcpy2D<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memcpy2D")
            .field("src", &self.g.src.end.describe())
            .field("dst", &self.g.dst.end.describe())
            .field("width_in_bytes", &self.g.width_in_bytes)
            .field("height", &self.g.height)
            .finish()
    }
}

impl<'a> Memcpy2D<'a> {
    /// An empty copy made in `ctx`: set a source, a destination and the box.
    pub fn new(ctx: &Context) -> Self {
        Memcpy2D {
            ctx: ctx.clone(),
            g: Geometry::new(),
            _borrows: PhantomData,
        }
    }

    copy_setters!();

    /// The checked driver struct.
    pub fn to_raw(&self) -> Result<CUDA_MEMCPY2D> {
        self.g.check("Memcpy2D", false)?;
        self.g.check_contexts("Memcpy2D", &self.ctx, &self.ctx)?;
        Ok(self.g.raw_2d())
    }

    /// Copies and waits (`cuMemcpy2D`; PyCUDA's `__call__()`).
    pub fn execute(&self) -> Result<()> {
        let raw = self.to_raw()?;
        // SAFETY: every side was checked to lie inside memory the builder borrows.
        self.g
            .run_sync(&self.ctx, || unsafe { call!(cuMemcpy2D_v2(&raw)) })
    }

    /// Copies and waits, tolerating device-side misalignment at a cost in bandwidth
    /// (`cuMemcpy2DUnaligned`; PyCUDA's `__call__(aligned=False)`).
    pub fn execute_unaligned(&self) -> Result<()> {
        let raw = self.to_raw()?;
        // SAFETY: as for `execute`.
        self.g
            .run_sync(&self.ctx, || unsafe { call!(cuMemcpy2DUnaligned_v2(&raw)) })
    }

    /// Queues the copy on `stream` (`cuMemcpy2DAsync`; PyCUDA's `__call__(stream)`).
    /// Host memory should be page-locked for the copy to overlap other work.
    ///
    /// # Safety
    /// The copy may still run after this returns, when the borrows have ended: every
    /// side must stay alive, and host memory unread and unwritten by the host (for the
    /// destination) or unwritten (for the source), until the work queued on `stream` so
    /// far has finished.
    pub unsafe fn execute_async(&self, stream: &Stream) -> Result<()> {
        let raw = self.to_raw()?;
        check_stream("Memcpy2D", &self.ctx, stream)?;
        // SAFETY: sides checked; the caller keeps host sides alive and untouched until
        // the stream is done.
        self.g.run_async(stream, || unsafe {
            call!(cuMemcpy2DAsync_v2(&raw, stream.raw()))
        })
    }
}

/// A 3D copy of `depth` slices of `height` rows of `width_in_bytes` bytes (PyCUDA's
/// `Memcpy3D`): everything [`Memcpy2D`] has, plus z offsets, rows per slice of linear
/// memory (`src_height`, `dst_height`) and `depth`. It addresses 3D, layered and cubemap
/// arrays (z is the slice, layer or face).
///
/// ```no_run
/// use rucuda_driver::{ArrayDescriptor3D, ArrayFormat, CudaArray, Device, Memcpy3D};
/// let ctx = Device::get(0)?.primary_context()?;
/// let volume = vec![1u16; 32 * 32 * 16];
/// let mut a = CudaArray::new_3d(&ctx, &ArrayDescriptor3D::d3(32, 32, 16, ArrayFormat::U16, 1))?;
/// Memcpy3D::new(&ctx)
///     .src_host(&volume).src_pitch(32 * 2).src_height(32)
///     .dst_array(&mut a)
///     .width_in_bytes(32 * 2).height(32).depth(16)
///     .execute()?;
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub struct Memcpy3D<'a> {
    ctx: Context,
    g: Geometry<'a>,
    _borrows: PhantomData<&'a mut ()>,
}

impl std::fmt::Debug for Memcpy3D<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memcpy3D")
            .field("src", &self.g.src.end.describe())
            .field("dst", &self.g.dst.end.describe())
            .field("width_in_bytes", &self.g.width_in_bytes)
            .field("height", &self.g.height)
            .field("depth", &self.g.depth)
            .finish()
    }
}

impl<'a> Memcpy3D<'a> {
    /// An empty copy made in `ctx` (depth 1): set a source, a destination and the box.
    pub fn new(ctx: &Context) -> Self {
        Memcpy3D {
            ctx: ctx.clone(),
            g: Geometry::new(),
            _borrows: PhantomData,
        }
    }

    copy_setters!();
    copy_setters_3d!();

    /// Copies into `len` bytes of host memory at `ptr` (crate use: filling a `Vec`'s
    /// spare capacity).
    ///
    /// # Safety
    /// `ptr` must be valid for writes of `len` bytes for as long as the copy lives.
    pub(crate) unsafe fn dst_host_raw(mut self, ptr: *mut c_void, len: usize) -> Self {
        self.g.dst.end = Endpoint::Host { ptr, len };
        self
    }

    /// Moves the start of a linear source `bytes` further (crate use: copies in pieces).
    pub(crate) fn advance_src(mut self, bytes: usize) -> Result<Self> {
        self.g.src.end = self.g.src.end.advanced(bytes)?;
        Ok(self)
    }

    /// Moves the start of a linear destination `bytes` further.
    pub(crate) fn advance_dst(mut self, bytes: usize) -> Result<Self> {
        self.g.dst.end = self.g.dst.end.advanced(bytes)?;
        Ok(self)
    }

    /// Turns this copy into a peer copy between `src_ctx` and `dst_ctx`.
    pub fn peer(self, src_ctx: &Context, dst_ctx: &Context) -> Memcpy3DPeer<'a> {
        Memcpy3DPeer {
            src_ctx: src_ctx.clone(),
            dst_ctx: dst_ctx.clone(),
            g: self.g,
            _borrows: PhantomData,
        }
    }

    /// The checked driver struct.
    pub fn to_raw(&self) -> Result<CUDA_MEMCPY3D> {
        self.g.check("Memcpy3D", true)?;
        self.g.check_contexts("Memcpy3D", &self.ctx, &self.ctx)?;
        Ok(self.g.raw_3d())
    }

    /// Copies and waits (`cuMemcpy3D`).
    pub fn execute(&self) -> Result<()> {
        let raw = self.to_raw()?;
        // SAFETY: every side was checked to lie inside memory the builder borrows.
        self.g
            .run_sync(&self.ctx, || unsafe { call!(cuMemcpy3D_v2(&raw)) })
    }

    /// Queues the copy on `stream` (`cuMemcpy3DAsync`).
    ///
    /// # Safety
    /// As for [`Memcpy2D::execute_async`]: every side must stay alive and untouched by
    /// the host until the work queued on `stream` so far has finished.
    pub unsafe fn execute_async(&self, stream: &Stream) -> Result<()> {
        let raw = self.to_raw()?;
        check_stream("Memcpy3D", &self.ctx, stream)?;
        // SAFETY: sides checked; the caller keeps host sides alive and untouched until
        // the stream is done.
        self.g.run_async(stream, || unsafe {
            call!(cuMemcpy3DAsync_v2(&raw, stream.raw()))
        })
    }
}

/// A 3D copy between memory of two contexts, possibly on two devices (PyCUDA's
/// `Memcpy3DPeer`, `cuMemcpy3DPeer`): the members of [`Memcpy3D`] plus the source and
/// destination contexts.
///
/// ```no_run
/// use rucuda_driver::{Device, DeviceBuffer, Memcpy3DPeer};
/// let (c0, c1) = (Device::get(0)?.primary_context()?, Device::get(1)?.primary_context()?);
/// let src = DeviceBuffer::from_slice(&c0, &[1.0f32; 64 * 64])?;
/// let mut dst = DeviceBuffer::<f32>::uninit(&c1, 64 * 64)?;
/// Memcpy3DPeer::new(&c0, &c1)
///     .src_device(&src).dst_device(&mut dst)
///     .width_in_bytes(64 * 4).height(64)
///     .execute()?;
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub struct Memcpy3DPeer<'a> {
    src_ctx: Context,
    dst_ctx: Context,
    g: Geometry<'a>,
    _borrows: PhantomData<&'a mut ()>,
}

impl std::fmt::Debug for Memcpy3DPeer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memcpy3DPeer")
            .field("src", &self.g.src.end.describe())
            .field("dst", &self.g.dst.end.describe())
            .field("src_ctx", &self.src_ctx)
            .field("dst_ctx", &self.dst_ctx)
            .finish()
    }
}

impl<'a> Memcpy3DPeer<'a> {
    /// An empty copy from memory of `src_ctx` to memory of `dst_ctx`.
    pub fn new(src_ctx: &Context, dst_ctx: &Context) -> Self {
        Memcpy3DPeer {
            src_ctx: src_ctx.clone(),
            dst_ctx: dst_ctx.clone(),
            g: Geometry::new(),
            _borrows: PhantomData,
        }
    }

    copy_setters!();
    copy_setters_3d!();

    /// Sets the source's context (PyCUDA's `set_src_context`).
    pub fn src_context(mut self, ctx: &Context) -> Self {
        self.src_ctx = ctx.clone();
        self
    }

    /// Sets the destination's context (PyCUDA's `set_dst_context`).
    pub fn dst_context(mut self, ctx: &Context) -> Self {
        self.dst_ctx = ctx.clone();
        self
    }

    /// The checked driver struct.
    pub fn to_raw(&self) -> Result<CUDA_MEMCPY3D_PEER> {
        self.g.check("Memcpy3DPeer", true)?;
        self.g
            .check_contexts("Memcpy3DPeer", &self.src_ctx, &self.dst_ctx)?;
        Ok(self.g.raw_peer(&self.src_ctx, &self.dst_ctx))
    }

    /// Copies and waits (`cuMemcpy3DPeer`).
    pub fn execute(&self) -> Result<()> {
        let raw = self.to_raw()?;
        self.g.run_sync(&self.dst_ctx, || {
            // SAFETY: every side was checked to lie inside memory the builder borrows;
            // both contexts are alive (held).
            unsafe { call!(cuMemcpy3DPeer(&raw)) }
        })?;
        finish_legacy_stream(&self.src_ctx)
    }

    /// Queues the copy on `stream` (`cuMemcpy3DPeerAsync`).
    ///
    /// # Safety
    /// As for [`Memcpy2D::execute_async`].
    pub unsafe fn execute_async(&self, stream: &Stream) -> Result<()> {
        let raw = self.to_raw()?;
        // SAFETY: sides checked; the caller keeps host sides alive and untouched until
        // the stream is done.
        self.g.run_async(stream, || unsafe {
            call!(cuMemcpy3DPeerAsync(&raw, stream.raw()))
        })
    }
}
