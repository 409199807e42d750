//! [`DeviceBuffer`]: an owned, typed device allocation, freed on its stream (stream-ordered)
//! or synchronously; and borrowed views into it.

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use rucuda_driver_sys::CUdeviceptr;

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::memory::graph_pool::{GraphPool, PoolLease};
use crate::memory::staged;
use crate::memory::tracking::capture;
use crate::memory::tracking::{
    finish_legacy_stream, Access, DevicePtr, DeviceRange, InUse, UseLog,
};
use crate::repr::byte_size;
use crate::repr::DeviceRepr;
use crate::streams::stream::Stream;

/// An owned device allocation of `len` elements of `T` (PyCUDA's `DeviceAllocation`).
///
/// Freed when dropped: with `cuMemFreeAsync` on the stream it was allocated on when it
/// was allocated stream-ordered, else with `cuMemFree`. Freeing twice is impossible:
/// dropping consumes the only owner. Every use by queued work goes through the buffer's
/// [`UseLog`] (see [`DeviceRange::use_on`]), and the free waits for all of them; see the
/// [module docs](crate::memory#when-memory-is-freed).
///
/// ```no_run
/// use rucuda_driver::{DeviceBuffer, Device};
/// let ctx = Device::get(0)?.primary_context()?;
/// let buf = DeviceBuffer::from_slice(&ctx, &[1.0f32, 2.0, 3.0])?;
/// assert_eq!(buf.to_vec()?, vec![1.0, 2.0, 3.0]);
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub struct DeviceBuffer<T: DeviceRepr> {
    ptr: CUdeviceptr,
    len: usize,
    ctx: Context,
    free_on: Option<Stream>,
    uses: Arc<UseLog>,
    /// False for a handle that sees memory another buffer owns (never freed), and for a
    /// block of a capture's pool (the pool frees it).
    owns: bool,
    /// The block of a capture's pool this buffer holds (given back on drop).
    _lease: Option<PoolLease>,
    /// For memory rucuda did not allocate ([`DeviceBuffer::from_foreign`]): what keeps
    /// it alive, dropped only after every recorded use has finished.
    keeper: Option<Box<dyn Send + Sync>>,
    _marker: PhantomData<T>,
}

// SAFETY: device memory is not tied to a host thread; T is Send + Sync plain data.
unsafe impl<T: DeviceRepr> Send for DeviceBuffer<T> {}
// SAFETY: shared references only read the handle.
unsafe impl<T: DeviceRepr> Sync for DeviceBuffer<T> {}

impl<T: DeviceRepr> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .field("type", &T::C_TYPE)
            .finish()
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Allocates `len` elements with `cuMemAlloc` (contents unspecified: any bit pattern
    /// is a valid `T`). PyCUDA's `mem_alloc`.
    pub fn uninit(ctx: &Context, len: usize) -> Result<Self> {
        let bytes = byte_size::<T>(len)?;
        ctx.bind_verified()?;
        let mut ptr: CUdeviceptr = 0;
        if bytes > 0 {
            // SAFETY: writes one device pointer; freed on drop.
            unsafe { call!(cuMemAlloc_v2(&mut ptr, bytes))? };
        }
        Ok(DeviceBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
            free_on: None,
            uses: Arc::new(UseLog::new()),
            owns: true,
            _lease: None,
            keeper: None,
            _marker: PhantomData,
        }
        .observed())
    }

    /// Notes this new allocation for an observing thread (`tracking/capture.rs`).
    fn observed(self) -> Self {
        capture::on_allocation(Arc::as_ptr(&self.uses) as usize);
        self
    }

    /// Allocates `len` elements stream-ordered (`cuMemAllocAsync` on `stream`); freed on
    /// the same stream. Falls back to [`DeviceBuffer::uninit`] (plus a stream
    /// synchronisation) where the device has no memory pools.
    pub fn uninit_async(stream: &Stream, len: usize) -> Result<Self> {
        let ctx = stream.context();
        if !ctx.supports_memory_pools() {
            stream.synchronize()?;
            return Self::uninit(ctx, len);
        }
        let bytes = byte_size::<T>(len)?;
        ctx.bind_verified()?;
        if let Some(session) = capture::session_on(stream) {
            return Self::from_capture_pool(&session, len, bytes);
        }
        let mut ptr: CUdeviceptr = 0;
        if bytes > 0 {
            // SAFETY: writes one device pointer; freed on drop on this stream.
            unsafe { call!(cuMemAllocAsync(&mut ptr, bytes, stream.raw()))? };
        }
        Ok(DeviceBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
            free_on: Some(stream.clone()),
            uses: Arc::new(UseLog::written_on(stream)),
            owns: true,
            _lease: None,
            keeper: None,
            _marker: PhantomData,
        }
        .observed())
    }

    /// A block of the pool of the capture session `session` (see `graph_pool.rs`).
    fn from_capture_pool(session: &capture::Session, len: usize, bytes: usize) -> Result<Self> {
        let pool = Arc::clone(&session.pool)
            .downcast::<GraphPool>()
            .map_err(|_| Error::invalid("a capture session without a graph pool"))?;
        let (ptr, uses, lease) = GraphPool::allocate(&pool, session, bytes)?;
        Ok(DeviceBuffer {
            ptr,
            len,
            ctx: session.stream.context().clone(),
            free_on: None,
            uses,
            owns: false,
            _lease: Some(lease),
            keeper: None,
            _marker: PhantomData,
        }
        .observed())
    }

    /// Allocates `len` zeroed elements; they are zero when it returns, for work on any
    /// stream.
    pub fn zeros(ctx: &Context, len: usize) -> Result<Self> {
        let buf = Self::uninit(ctx, len)?;
        buf.ctx.bind()?;
        if buf.byte_len() > 0 {
            // SAFETY: the range lies inside the new allocation, which no work uses yet.
            unsafe { call!(cuMemsetD8_v2(buf.ptr, 0, buf.byte_len()))? };
            finish_legacy_stream(&buf.ctx)?;
        }
        Ok(buf)
    }

    /// Allocates and copies `data` to the device (PyCUDA's `to_device`).
    pub fn from_slice(ctx: &Context, data: &[T]) -> Result<Self> {
        let mut buf = Self::uninit(ctx, data.len())?;
        buf.copy_from_host(data)?;
        Ok(buf)
    }

    /// Takes ownership of memory another library allocated with `cuMemAlloc`.
    ///
    /// # Safety
    /// `ptr` must be a `cuMemAlloc` allocation of `ctx` holding at least `len` elements,
    /// owned by nobody else: it is freed with `cuMemFree` on drop.
    pub unsafe fn from_raw(ctx: &Context, ptr: CUdeviceptr, len: usize) -> Self {
        DeviceBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
            free_on: None,
            uses: Arc::new(UseLog::new()),
            owns: true,
            _lease: None,
            keeper: None,
            _marker: PhantomData,
        }
    }

    /// Device memory that rucuda did not allocate (another library's, a driver
    /// allocation made by hand), kept alive by `keeper` (PyCUDA's `PointerHolderBase`,
    /// DLPack's deleter): never freed by rucuda. Its uses are tracked in a log of its
    /// own like any buffer's, and when the buffer goes it waits on the host for every
    /// recorded use before dropping `keeper`, so the memory outlives the work queued
    /// with it. (If that wait fails, `keeper` is leaked rather than dropped under
    /// running work, and the error is queued on the context.)
    ///
    /// ```no_run
    /// use rucuda_driver::{Device, DeviceBuffer, DevicePtr};
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let theirs = DeviceBuffer::<f32>::zeros(&ctx, 256)?; // stands for another library's memory
    /// let ptr = theirs.device_range().address();
    /// // SAFETY: `theirs` holds 256 f32 of `ctx` at `ptr` and lives as long as the keeper.
    /// let ours = unsafe { DeviceBuffer::<f32>::from_foreign(&ctx, ptr, 256, Box::new(theirs)) };
    /// assert_eq!(ours.to_vec()?, vec![0.0; 256]);
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    ///
    /// # Safety
    /// `ptr` must be device-accessible memory of `ctx` holding `len` elements of `T`,
    /// aligned for `T`, that stays allocated while `keeper` lives; nothing else may
    /// access it (on the host or the device) while work queued through this buffer runs
    /// unless that access is ordered with the work by the caller.
    pub unsafe fn from_foreign(
        ctx: &Context,
        ptr: CUdeviceptr,
        len: usize,
        keeper: Box<dyn Send + Sync>,
    ) -> Self {
        DeviceBuffer {
            ptr,
            len,
            ctx: ctx.clone(),
            free_on: None,
            uses: Arc::new(UseLog::new()),
            owns: false,
            _lease: None,
            keeper: Some(keeper),
            _marker: PhantomData,
        }
    }

    /// True for memory rucuda did not allocate ([`DeviceBuffer::from_foreign`]).
    pub fn is_foreign(&self) -> bool {
        self.keeper.is_some()
    }

    /// A handle that sees the memory of `owner` as `len` elements of `T`, sharing its
    /// [`UseLog`]: uses through either are ordered against each other and the owner's free
    /// waits for them. It never frees the memory (rucuda-array's `reinterpret`, `real`
    /// and `imag`).
    ///
    /// # Safety
    /// `len * size_of::<T>()` must not exceed `owner`'s byte size, its address must be
    /// aligned for `T`, and the returned handle must not outlive `owner`.
    pub unsafe fn alias_of<U: DeviceRepr>(owner: &DeviceBuffer<U>, len: usize) -> Self {
        DeviceBuffer {
            ptr: owner.ptr,
            len,
            ctx: owner.ctx.clone(),
            free_on: owner.free_on.clone(),
            uses: Arc::clone(&owner.uses),
            owns: false,
            _lease: None,
            keeper: None,
            _marker: PhantomData,
        }
    }

    /// Gives up ownership: the memory is no longer freed on drop. (Foreign memory's
    /// keeper is leaked: it is never dropped, so the memory stays valid for any work
    /// still queued with it.)
    pub fn into_raw(self) -> CUdeviceptr {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped, so each field is read exactly once.
        unsafe {
            drop(std::ptr::read(&me.ctx));
            drop(std::ptr::read(&me.free_on));
            drop(std::ptr::read(&me.uses));
            std::mem::forget(std::ptr::read(&me._lease));
            std::mem::forget(std::ptr::read(&me.keeper));
        }
        me.ptr
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds no element.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The context it belongs to.
    #[inline]
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The stream it is freed on, if it was allocated stream-ordered.
    pub fn stream(&self) -> Option<&Stream> {
        self.free_on.as_ref()
    }

    /// Copies `src` (same length) from the host, synchronously. Large pageable copies
    /// are staged through page-locked buffers (see `memory/staged.rs`).
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        self.check_len(src.len())?;
        let dst = self.legacy_use(Access::Write)?;
        // SAFETY: both ranges hold `byte_len` bytes; `src` is borrowed for the call; the
        // copy runs on the legacy stream, ordered after conflicting work (above), and has
        // finished when this returns.
        unsafe { staged::copy_htod(&self.ctx, dst.ptr(), src.as_ptr().cast(), self.byte_len()) }
    }

    /// Copies to `dst` (same length) on the host, synchronously (staged when large).
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        self.check_len(dst.len())?;
        let src = self.legacy_use(Access::Read)?;
        // SAFETY: both ranges hold `byte_len` bytes; any bit pattern is a valid T; the
        // copy runs on the legacy stream after the work that writes the buffer (above)
        // and has finished when this returns.
        unsafe {
            staged::copy_dtoh(
                &self.ctx,
                dst.as_mut_ptr().cast(),
                src.ptr(),
                self.byte_len(),
            )
        }
    }

    /// Copies the whole buffer into a new `Vec` (PyCUDA's `from_device`).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut v = Vec::<T>::with_capacity(self.len);
        let src = self.legacy_use(Access::Read)?;
        // SAFETY: the Vec has capacity for `len` elements; the copy fills all of them
        // (any bit pattern is a valid T) before `set_len`; it runs on the legacy stream
        // after the work that writes the buffer (above) and has finished when it returns.
        unsafe {
            staged::copy_dtoh(&self.ctx, v.as_mut_ptr().cast(), src.ptr(), self.byte_len())?;
            v.set_len(self.len);
        }
        Ok(v)
    }

    /// A read-only view of `range`.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceView<'_, T>> {
        let (start, end) = resolve_range(range, self.len)?;
        Ok(DeviceView {
            range: self.sub_range(start, end),
            len: end - start,
            _marker: PhantomData,
        })
    }

    /// A mutable view of `range`.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceViewMut<'_, T>> {
        let (start, end) = resolve_range(range, self.len)?;
        Ok(DeviceViewMut {
            range: self.sub_range(start, end),
            len: end - start,
            _marker: PhantomData,
        })
    }

    /// The address for a synchronous copy, which runs on the legacy default stream: the
    /// stream is ordered after conflicting work and the use recorded, like any queued
    /// work, so a later free or use on another stream orders after it by events too.
    fn legacy_use(&self, access: Access) -> Result<InUse<'_>> {
        self.sub_range(0, self.len)
            .use_on(&Stream::null(&self.ctx), access)
    }

    /// Elements `start..end` (checked by the caller) as a range sharing the log.
    fn sub_range(&self, start: usize, end: usize) -> DeviceRange<'_> {
        let size = std::mem::size_of::<T>();
        // SAFETY: the elements lie inside the allocation, which outlives the borrow;
        // `uses` is the log every user of the allocation goes through.
        unsafe {
            DeviceRange::new(
                self.ptr + (start * size) as u64,
                (end - start) * size,
                &self.uses,
            )
        }
    }

    fn check_len(&self, other: usize) -> Result<()> {
        if other == self.len {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "host slice has {other} elements, device buffer has {}",
                self.len
            )))
        }
    }

    /// Frees now and returns any error (instead of queueing it on the context).
    pub fn free(self) -> Result<()> {
        let me = std::mem::ManuallyDrop::new(self);
        let r = me.release();
        // SAFETY: `me` is never dropped, so each field is read exactly once.
        unsafe {
            drop(std::ptr::read(&me.ctx));
            drop(std::ptr::read(&me.free_on));
            drop(std::ptr::read(&me.uses));
            drop(std::ptr::read(&me._lease));
            let keeper = std::ptr::read(&me.keeper);
            if r.is_ok() {
                drop(keeper);
            } else {
                // Work may still use the memory: keep it alive for good.
                std::mem::forget(keeper);
            }
        }
        r
    }

    fn release(&self) -> Result<()> {
        if self.keeper.is_some() {
            // Foreign memory: the keeper is dropped after this returns Ok; every
            // recorded use must have finished by then.
            return self.uses.wait_on_host(Access::Write);
        }
        if self.ptr == 0 || !self.owns {
            return Ok(());
        }
        self.ctx.make_current()?;
        match &self.free_on {
            Some(s) => {
                // The free is a write on the home stream: ordered after every recorded
                // use on other streams. Where that fails, the memory is leaked rather than
                // freed under queued work.
                let _free = self.uses.note(s, Access::Write, self.ptr)?;
                // SAFETY: allocated with cuMemAllocAsync; freed once, ordered on its
                // stream after its own work and after every recorded use (above).
                unsafe { call!(cuMemFreeAsync(self.ptr, s.raw())) }
            }
            None => {
                self.uses.wait_on_host(Access::Write)?;
                // SAFETY: allocated with cuMemAlloc; freed once; no recorded use is
                // pending (waited above).
                unsafe { call!(cuMemFree_v2(self.ptr)) }
            }
        }
    }
}

impl<T: DeviceRepr> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            if let Some(keeper) = self.keeper.take() {
                // Work may still use the memory: keep it alive for good.
                std::mem::forget(keeper);
            }
            self.ctx.defer_error(e);
        }
    }
}

impl<T: DeviceRepr> DevicePtr for DeviceBuffer<T> {
    #[inline]
    fn device_range(&self) -> DeviceRange<'_> {
        self.sub_range(0, self.len)
    }
}

pub(crate) fn resolve_range(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(Error::invalid(format!(
            "range {start}..{end} out of bounds for length {len}"
        )));
    }
    Ok((start, end))
}

/// A borrowed, read-only range of a [`DeviceBuffer`] (or of other memory that work can
/// read, such as mapped page-locked memory), sharing its owner's [`UseLog`].
#[derive(Debug, Clone, Copy)]
pub struct DeviceView<'a, T> {
    range: DeviceRange<'a>,
    len: usize,
    _marker: PhantomData<&'a T>,
}

/// A borrowed, writable range of a [`DeviceBuffer`] (or of other memory that work can
/// write), sharing its owner's [`UseLog`].
#[derive(Debug)]
pub struct DeviceViewMut<'a, T> {
    range: DeviceRange<'a>,
    len: usize,
    _marker: PhantomData<&'a mut T>,
}

macro_rules! view_impl {
    ($v:ident) => {
        impl<'a, T> $v<'a, T> {
            /// A view of `len` elements of `T` over `range` (memory of an owner that
            /// keeps `range`'s log).
            ///
            /// # Safety
            /// `range` must hold at least `len * size_of::<T>()` bytes aligned for `T`,
            /// and for a writable view nobody else may access it on the host for `'a`.
            pub(crate) unsafe fn from_range(range: DeviceRange<'a>, len: usize) -> Self {
                $v {
                    range,
                    len,
                    _marker: PhantomData,
                }
            }
            /// Number of elements.
            pub fn len(&self) -> usize {
                self.len
            }
            /// True when empty.
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }
        }
        impl<T> DevicePtr for $v<'_, T> {
            #[inline]
            fn device_range(&self) -> DeviceRange<'_> {
                self.range
            }
        }
    };
}
view_impl!(DeviceView);
view_impl!(DeviceViewMut);
