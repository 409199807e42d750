//! [`PinnedHostBuffer`]: page-locked host memory from `cuMemHostAlloc` (PyCUDA's
//! `pagelocked_empty`/`pagelocked_zeros` and their `_like` forms), the source and
//! destination of asynchronous copies, optionally mapped into the device address space.

use std::ptr::NonNull;

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::memory::page_locked::{page_locked_api, page_locked_device_api, PageLocked};
use crate::memory::tracking::Access;
use crate::repr::byte_size;
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
/// through its mapped views. Every such use goes through the buffer's [`UseLog`](crate::UseLog): host
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
    mem: PageLocked<T>,
    flags: HostAllocFlags,
}

// SAFETY: page-locked memory is ordinary host memory any thread may use; T is Send + Sync
// plain data; the use log is behind a Mutex.
unsafe impl<T: DeviceRepr> Send for PinnedHostBuffer<T> {}
// SAFETY: shared references only read the memory (and wait on events).
unsafe impl<T: DeviceRepr> Sync for PinnedHostBuffer<T> {}

impl<T: DeviceRepr> std::fmt::Debug for PinnedHostBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedHostBuffer")
            .field("mem", &self.mem)
            .field("flags", &self.flags)
            .finish()
    }
}

page_locked_api!(PinnedHostBuffer);
page_locked_device_api!(PinnedHostBuffer);

impl<T: DeviceRepr> PinnedHostBuffer<T> {
    /// Allocates `len` elements of page-locked memory in `ctx` (PyCUDA's
    /// `pagelocked_empty`). The contents are whatever the memory held (any bit pattern is
    /// a valid `T`).
    pub fn empty(ctx: &Context, len: usize, flags: HostAllocFlags) -> Result<Self> {
        let bytes = byte_size::<T>(len)?;
        if bytes == 0 {
            return Ok(PinnedHostBuffer {
                // SAFETY: no byte to own.
                mem: unsafe { PageLocked::new(NonNull::dangling(), len, ctx) },
                flags,
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
            // SAFETY: `len` elements just allocated page-locked in `ctx`, freed with the
            // buffer.
            mem: unsafe { PageLocked::new(ptr, len, ctx) },
            flags,
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
        unsafe { std::ptr::write_bytes(buf.mem.as_ptr(), 0, buf.len()) };
        Ok(buf)
    }

    /// Allocates and copies `data` in.
    pub fn from_slice(ctx: &Context, data: &[T], flags: HostAllocFlags) -> Result<Self> {
        let mut buf = Self::empty(ctx, data.len(), flags)?;
        buf.copy_from_slice(data);
        Ok(buf)
    }

    /// The flags it was allocated with.
    #[inline]
    pub fn alloc_flags(&self) -> HostAllocFlags {
        self.flags
    }

    /// The flags as the driver reports them (`cuMemHostGetFlags`, PyCUDA's `get_flags`).
    pub fn flags(&self) -> Result<HostAllocFlags> {
        if self.mem.is_void() {
            return Ok(self.flags);
        }
        self.context().bind()?;
        let mut raw: std::ffi::c_uint = 0;
        // SAFETY: writes one uint; the pointer is our live allocation.
        unsafe { call!(cuMemHostGetFlags(&mut raw, self.mem.as_ptr().cast()))? };
        Ok(HostAllocFlags::from_bits_retain(raw))
    }

    fn release(&mut self) -> Result<()> {
        // Where the wait fails the memory is leaked rather than freed under queued work.
        self.mem.wait(Access::Write)?;
        if self.mem.is_void() {
            return Ok(());
        }
        self.context().make_current()?;
        // SAFETY: allocated with cuMemHostAlloc, freed once (drop or `free` consume us);
        // no queued work uses it any more (waited above).
        unsafe { call!(cuMemFreeHost(self.mem.as_ptr().cast())) }
    }

    /// Frees now and returns any error (instead of queueing it on the context).
    pub fn free(self) -> Result<()> {
        let mut me = std::mem::ManuallyDrop::new(self);
        let r = me.release();
        // SAFETY: `me` is never dropped, so each owned field is dropped exactly once here.
        unsafe { std::ptr::drop_in_place(&mut me.mem) };
        r
    }
}

impl<T: DeviceRepr> Drop for PinnedHostBuffer<T> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            self.context().defer_error(e);
        }
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
