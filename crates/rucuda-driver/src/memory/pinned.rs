//! [`PinnedHostBuffer`]: page-locked host memory from `cuMemHostAlloc` (PyCUDA's
//! `pagelocked_empty`/`pagelocked_zeros` and their `_like` forms), the source and
//! destination of asynchronous copies, optionally mapped into the device address space.

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use rucuda_driver_sys::CUdeviceptr;

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::memory::device_buffer::byte_size;
use crate::memory::tracking::{Access, DeviceRange, UseLog};
use crate::memory::{DeviceView, DeviceViewMut};
use crate::repr::DeviceRepr;

bitflags::bitflags! {
    /// Flags of a page-locked allocation (PyCUDA's `host_alloc_flags`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct HostAllocFlags: u32 {
        /// Page-locked for every context, not only the allocating one.
        const PORTABLE = rucuda_driver_sys::CU_MEMHOSTALLOC_PORTABLE;
        /// Mapped into the device address space: kernels can read and write it through
        /// [`PinnedHostBuffer::device_view`].
        const DEVICEMAP = rucuda_driver_sys::CU_MEMHOSTALLOC_DEVICEMAP;
        /// Write-combined: faster host writes and transfers to the device, very slow host
        /// reads. For buffers the host only fills.
        const WRITECOMBINED = rucuda_driver_sys::CU_MEMHOSTALLOC_WRITECOMBINED;
    }
}

/// Page-locked host memory holding `len` elements of `T` (PyCUDA's
/// `PagelockedHostAllocation` with the array on top).
///
/// Copies from and to it run at full bus speed and may be asynchronous
/// ([`memcpy_htod_async`](crate::memcpy_htod_async),
/// [`memcpy_dtoh_async`](crate::memcpy_dtoh_async)) or be read and written by kernels
/// through its mapped views. Every such use goes through the buffer's [`UseLog`]: host
/// access through `Deref` waits for queued work that writes it (`DerefMut` for any queued
/// use), so the host never sees a half-done copy, and the free waits for everything.
/// Freed with `cuMemFreeHost` when dropped.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let mut host = pagelocked_zeros::<f32>(&ctx, 1 << 20, HostAllocFlags::empty())?;
/// host[0] = 1.5;
/// let dev = DeviceBuffer::from_slice(&ctx, &host)?;
/// # Ok::<(), Error>(())
/// ```
pub struct PinnedHostBuffer<T: DeviceRepr> {
    ptr: NonNull<T>,
    len: usize,
    flags: HostAllocFlags,
    ctx: Context,
    uses: UseLog,
}

// SAFETY: page-locked memory is ordinary host memory any thread may use; T is Send + Sync
// plain data; the use log is behind a Mutex.
unsafe impl<T: DeviceRepr> Send for PinnedHostBuffer<T> {}
// SAFETY: shared references only read the memory (and wait on events).
unsafe impl<T: DeviceRepr> Sync for PinnedHostBuffer<T> {}

impl<T: DeviceRepr> std::fmt::Debug for PinnedHostBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedHostBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("flags", &self.flags)
            .field("type", &T::C_TYPE)
            .finish()
    }
}

impl<T: DeviceRepr> PinnedHostBuffer<T> {
    /// Allocates `len` elements of page-locked memory in `ctx` (PyCUDA's
    /// `pagelocked_empty`). The contents are whatever the memory held (any bit pattern is
    /// a valid `T`).
    pub fn empty(ctx: &Context, len: usize, flags: HostAllocFlags) -> Result<Self> {
        let bytes = byte_size::<T>(len)?;
        if bytes == 0 {
            return Ok(PinnedHostBuffer {
                ptr: NonNull::dangling(),
                len,
                flags,
                ctx: ctx.clone(),
                uses: UseLog::new(),
            });
        }
        ctx.bind_verified()?;
        let mut raw: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: writes one host pointer; freed with cuMemFreeHost on drop.
        unsafe { call!(cuMemHostAlloc(&mut raw, bytes, flags.bits()))? };
        let Some(ptr) = NonNull::new(raw.cast::<T>()) else {
            return Err(Error::invalid("cuMemHostAlloc returned a null pointer"));
        };
        let buf = PinnedHostBuffer {
            ptr,
            len,
            flags,
            ctx: ctx.clone(),
            uses: UseLog::new(),
        };
        if raw as usize % std::mem::align_of::<T>() != 0 {
            // Dropping `buf` frees the memory.
            return Err(Error::invalid(format!(
                "cuMemHostAlloc returned {raw:p}, not aligned for {} ({} bytes)",
                T::C_TYPE,
                std::mem::align_of::<T>()
            )));
        }
        Ok(buf)
    }

    /// Allocates `len` zeroed elements (PyCUDA's `pagelocked_zeros`).
    pub fn zeros(ctx: &Context, len: usize, flags: HostAllocFlags) -> Result<Self> {
        let buf = Self::empty(ctx, len, flags)?;
        // SAFETY: `len` elements are allocated (or none with a dangling, aligned pointer);
        // all-zero bytes are a valid T.
        unsafe { std::ptr::write_bytes(buf.ptr.as_ptr(), 0, buf.len) };
        Ok(buf)
    }

    /// Allocates and copies `data` in.
    pub fn from_slice(ctx: &Context, data: &[T], flags: HostAllocFlags) -> Result<Self> {
        let mut buf = Self::empty(ctx, data.len(), flags)?;
        buf.copy_from_slice(data);
        Ok(buf)
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

    /// The context it was allocated in.
    #[inline]
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The flags it was allocated with.
    #[inline]
    pub fn alloc_flags(&self) -> HostAllocFlags {
        self.flags
    }

    /// The flags as the driver reports them (`cuMemHostGetFlags`, PyCUDA's `get_flags`).
    pub fn flags(&self) -> Result<HostAllocFlags> {
        if self.len == 0 || std::mem::size_of::<T>() == 0 {
            return Ok(self.flags);
        }
        self.ctx.bind()?;
        let mut raw: std::ffi::c_uint = 0;
        // SAFETY: writes one uint; the pointer is our live allocation.
        unsafe { call!(cuMemHostGetFlags(&mut raw, self.ptr.as_ptr().cast()))? };
        Ok(HostAllocFlags::from_bits_retain(raw))
    }

    /// The host address of the first element.
    #[inline]
    pub fn as_ptr(&self) -> *const T {
        self.ptr.as_ptr()
    }

    /// The device address of the memory (`cuMemHostGetDevicePointer`, PyCUDA's
    /// `get_device_pointer`): allocate with [`HostAllocFlags::DEVICEMAP`] (on systems with
    /// unified addressing all page-locked memory is mapped).
    pub fn device_pointer(&self) -> Result<CUdeviceptr> {
        if self.len == 0 || std::mem::size_of::<T>() == 0 {
            return Ok(0);
        }
        self.ctx.bind()?;
        let mut dptr: CUdeviceptr = 0;
        // SAFETY: writes one device pointer; the host pointer is our live allocation;
        // flags must be 0.
        unsafe {
            call!(cuMemHostGetDevicePointer_v2(
                &mut dptr,
                self.ptr.as_ptr().cast(),
                0
            ))?
        };
        Ok(dptr)
    }

    /// The mapped memory as a read-only device view, for kernels that read it.
    ///
    /// ```no_run
    /// use rucuda_driver::*;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let host = PinnedHostBuffer::from_slice(&ctx, &[1u32, 2, 3], HostAllocFlags::DEVICEMAP)?;
    /// let view = host.device_view()?;
    /// assert_eq!(view.len(), 3);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn device_view(&self) -> Result<DeviceView<'_, T>> {
        let dptr = self.device_pointer()?;
        // SAFETY: the mapping covers our `len` elements and lives as long as `self`, which
        // the view borrows (so the host cannot write meanwhile); the view records its
        // uses in this buffer's log, which host access and the free wait on.
        Ok(unsafe {
            DeviceView::from_range(
                DeviceRange::new(dptr, self.byte_len(), &self.uses),
                self.len,
            )
        })
    }

    /// The mapped memory as a writable device view, for kernels that write it. The host
    /// sees their writes once the kernel's stream is synchronised.
    pub fn device_view_mut(&mut self) -> Result<DeviceViewMut<'_, T>> {
        let dptr = self.device_pointer()?;
        let bytes = self.byte_len();
        // SAFETY: as for `device_view`; the view borrows `self` mutably.
        Ok(unsafe {
            DeviceViewMut::from_range(DeviceRange::new(dptr, bytes, &self.uses), self.len)
        })
    }

    fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// The host memory as a range for asynchronous copies: its "address" is the host
    /// address, and its log is the buffer's, which host access and the free wait on.
    pub fn host_range(&self) -> DeviceRange<'_> {
        // SAFETY: `len` elements at `ptr` live as long as `self`; `uses` is the log every
        // use of this memory goes through.
        unsafe {
            DeviceRange::new(
                self.ptr.as_ptr() as usize as u64,
                self.byte_len(),
                &self.uses,
            )
        }
    }

    /// Waits for all queued work that uses this buffer (copies, kernels through its
    /// mapped views).
    pub fn synchronize(&self) -> Result<()> {
        self.uses.wait_on_host(Access::Write)
    }

    /// The elements, after waiting for queued work that writes them.
    pub fn as_slice(&self) -> Result<&[T]> {
        self.uses.wait_on_host(Access::Read)?;
        // SAFETY: `len` initialised elements (driver memory holds some bit pattern, valid
        // for T), no device copy writes them any more, and `&self` forbids host writes.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) })
    }

    /// The elements, writable, after waiting for all queued work that uses them.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.uses.wait_on_host(Access::Write)?;
        // SAFETY: as for `as_slice`; `&mut self` makes this the only access.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) })
    }

    /// Waits for queued work before host access from `Deref`, which cannot return an
    /// error. The wait does not depend on the context's queued errors; it fails only when
    /// the context itself is broken (a sticky error), and then no queued work runs any
    /// more. The failure is queued on the context and returned by its next call.
    fn wait_or_defer(&self, access: Access) {
        if let Err(e) = self.uses.wait_on_host(access) {
            self.ctx.defer_error(e);
        }
    }

    fn release(&mut self) -> Result<()> {
        // Where the wait fails the memory is leaked rather than freed under queued work.
        self.uses.wait_on_host(Access::Write)?;
        if self.len == 0 || std::mem::size_of::<T>() == 0 {
            return Ok(());
        }
        self.ctx.make_current()?;
        // SAFETY: allocated with cuMemHostAlloc, freed once (drop or `free` consume us);
        // no queued work uses it any more (waited above).
        unsafe { call!(cuMemFreeHost(self.ptr.as_ptr().cast())) }
    }

    /// Frees now and returns any error (instead of queueing it on the context).
    pub fn free(self) -> Result<()> {
        let mut me = std::mem::ManuallyDrop::new(self);
        let r = me.release();
        // SAFETY: `me` is never dropped, so each owned field is dropped exactly once here.
        unsafe {
            std::ptr::drop_in_place(&mut me.ctx);
            std::ptr::drop_in_place(&mut me.uses);
        }
        r
    }
}

impl<T: DeviceRepr> Drop for PinnedHostBuffer<T> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            self.ctx.defer_error(e);
        }
    }
}

impl<T: DeviceRepr> Deref for PinnedHostBuffer<T> {
    type Target = [T];
    /// Waits for queued work that writes the buffer first.
    fn deref(&self) -> &[T] {
        self.wait_or_defer(Access::Read);
        // SAFETY: `len` initialised elements; see `as_slice`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceRepr> DerefMut for PinnedHostBuffer<T> {
    /// Waits for all queued work that uses the buffer first.
    fn deref_mut(&mut self) -> &mut [T] {
        self.wait_or_defer(Access::Write);
        // SAFETY: as for `deref`; `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// `len` elements of page-locked memory, contents unspecified (PyCUDA's `pagelocked_empty`).
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let buf = pagelocked_empty::<f64>(&ctx, 1000, HostAllocFlags::PORTABLE)?;
/// assert!(buf.flags()?.contains(HostAllocFlags::PORTABLE));
/// # Ok::<(), Error>(())
/// ```
pub fn pagelocked_empty<T: DeviceRepr>(
    ctx: &Context,
    len: usize,
    flags: HostAllocFlags,
) -> Result<PinnedHostBuffer<T>> {
    PinnedHostBuffer::empty(ctx, len, flags)
}

/// `len` zeroed elements of page-locked memory (PyCUDA's `pagelocked_zeros`).
pub fn pagelocked_zeros<T: DeviceRepr>(
    ctx: &Context,
    len: usize,
    flags: HostAllocFlags,
) -> Result<PinnedHostBuffer<T>> {
    PinnedHostBuffer::zeros(ctx, len, flags)
}

/// Page-locked memory as long as `like`, contents unspecified (PyCUDA's
/// `pagelocked_empty_like`).
pub fn pagelocked_empty_like<T: DeviceRepr>(
    ctx: &Context,
    like: &[T],
    flags: HostAllocFlags,
) -> Result<PinnedHostBuffer<T>> {
    PinnedHostBuffer::empty(ctx, like.len(), flags)
}

/// Zeroed page-locked memory as long as `like` (PyCUDA's `pagelocked_zeros_like`).
pub fn pagelocked_zeros_like<T: DeviceRepr>(
    ctx: &Context,
    like: &[T],
    flags: HostAllocFlags,
) -> Result<PinnedHostBuffer<T>> {
    PinnedHostBuffer::zeros(ctx, like.len(), flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_alloc_flags_match_the_driver_constants() {
        assert_eq!(HostAllocFlags::PORTABLE.bits(), 1);
        assert_eq!(HostAllocFlags::DEVICEMAP.bits(), 2);
        assert_eq!(HostAllocFlags::WRITECOMBINED.bits(), 4);
        let all = HostAllocFlags::all();
        assert_eq!(all.bits(), 7);
        assert_eq!(HostAllocFlags::from_bits_retain(0x10).bits(), 0x10);
    }
}
