//! [`RegisteredHostMemory`]: existing host memory page-locked in place with
//! `cuMemHostRegister` (PyCUDA's `register_host_memory`), unregistered when it goes.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use rucuda_driver_sys::CUdeviceptr;

use crate::context::Context;
use crate::error::{call, Result};
use crate::memory::device_buffer::byte_size;
use crate::memory::tracking::{Access, DeviceRange, UseLog};
use crate::memory::{DeviceView, DeviceViewMut};
use crate::repr::DeviceRepr;

bitflags::bitflags! {
    /// Flags of a host registration (PyCUDA's `mem_host_register_flags`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct HostRegisterFlags: u32 {
        /// Page-locked for every context, not only the registering one.
        const PORTABLE = rucuda_driver_sys::CU_MEMHOSTREGISTER_PORTABLE;
        /// Mapped into the device address space (see
        /// [`RegisteredHostMemory::device_view`]).
        const DEVICEMAP = rucuda_driver_sys::CU_MEMHOSTREGISTER_DEVICEMAP;
        /// The memory is I/O memory (a PCI device's BAR), not system memory.
        const IOMEMORY = rucuda_driver_sys::CU_MEMHOSTREGISTER_IOMEMORY;
        /// The device only reads it.
        const READ_ONLY = rucuda_driver_sys::CU_MEMHOSTREGISTER_READ_ONLY;
    }
}

/// Host memory page-locked in place for as long as this value lives (PyCUDA's
/// `RegisteredHostMemory`). It borrows a slice (`'a`) or owns a `Vec` (`'static`, from
/// [`RegisteredHostMemory::from_vec`]) and derefs to it; copies from and to it run at
/// full bus speed.
///
/// Registering needs no particular alignment on Linux; page-aligned memory (see
/// [`aligned_zeros`](crate::aligned_zeros)) wastes no pinned memory at the edges.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let mut data = aligned_zeros::<f32>(1 << 20, DEFAULT_HOST_ALIGNMENT)?;
/// let pinned = register_host_memory(&ctx, &mut data[..], HostRegisterFlags::empty())?;
/// let dev = DeviceBuffer::from_slice(&ctx, &pinned)?;
/// pinned.unregister()?;
/// # Ok::<(), Error>(())
/// ```
pub struct RegisteredHostMemory<'a, T: DeviceRepr> {
    ptr: NonNull<T>,
    len: usize,
    flags: HostRegisterFlags,
    ctx: Context,
    registered: bool,
    owned: Option<Vec<T>>,
    /// Every use by queued work (async copies, kernels through the mapped views).
    uses: UseLog,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: the memory is an ordinary host slice (borrowed mutably or owned); T is plain
// data that is Send + Sync.
unsafe impl<T: DeviceRepr> Send for RegisteredHostMemory<'_, T> {}
// SAFETY: shared references only read it.
unsafe impl<T: DeviceRepr> Sync for RegisteredHostMemory<'_, T> {}

impl<T: DeviceRepr> std::fmt::Debug for RegisteredHostMemory<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredHostMemory")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("flags", &self.flags)
            .field("type", &T::C_TYPE)
            .finish()
    }
}

/// Page-locks `host` in `ctx` for as long as the returned value lives (PyCUDA's
/// `register_host_memory`).
pub fn register_host_memory<'a, T: DeviceRepr>(
    ctx: &Context,
    host: &'a mut [T],
    flags: HostRegisterFlags,
) -> Result<RegisteredHostMemory<'a, T>> {
    let len = host.len();
    let ptr = NonNull::from(host).cast::<T>();
    // SAFETY: `ptr..ptr + len` is the caller's slice, borrowed mutably for `'a`.
    unsafe { RegisteredHostMemory::register(ctx, ptr, len, flags, None) }
}

impl<'a, T: DeviceRepr> RegisteredHostMemory<'a, T> {
    /// # Safety
    /// `ptr..ptr + len` must be valid, exclusively ours for `'a` (or owned by `owned`).
    unsafe fn register(
        ctx: &Context,
        ptr: NonNull<T>,
        len: usize,
        flags: HostRegisterFlags,
        owned: Option<Vec<T>>,
    ) -> Result<Self> {
        let bytes = byte_size::<T>(len)?;
        let mut me = RegisteredHostMemory {
            ptr,
            len,
            flags,
            ctx: ctx.clone(),
            registered: false,
            owned,
            uses: UseLog::new(),
            _borrow: PhantomData,
        };
        if bytes > 0 {
            ctx.bind()?;
            // SAFETY: the range is valid host memory (caller's contract); unregistered on
            // drop.
            unsafe {
                call!(cuMemHostRegister_v2(
                    ptr.as_ptr().cast(),
                    bytes,
                    flags.bits()
                ))?
            };
            me.registered = true;
        }
        Ok(me)
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

    /// The flags it was registered with.
    #[inline]
    pub fn flags(&self) -> HostRegisterFlags {
        self.flags
    }

    /// The context it was registered in.
    #[inline]
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The device address of the memory (`cuMemHostGetDevicePointer`, PyCUDA's
    /// `get_device_pointer`); register with [`HostRegisterFlags::DEVICEMAP`].
    pub fn device_pointer(&self) -> Result<CUdeviceptr> {
        if !self.registered {
            return Ok(0);
        }
        self.ctx.bind()?;
        let mut dptr: CUdeviceptr = 0;
        // SAFETY: writes one device pointer; the host pointer is registered; flags must be 0.
        unsafe {
            call!(cuMemHostGetDevicePointer_v2(
                &mut dptr,
                self.ptr.as_ptr().cast(),
                0
            ))?
        };
        Ok(dptr)
    }

    /// The mapped memory as a read-only device view.
    pub fn device_view(&self) -> Result<DeviceView<'_, T>> {
        let range = self.mapped_range()?;
        // SAFETY: the mapping covers our `len` elements while registered, which lasts as
        // long as `self`, borrowed by the view; uses go through our log.
        Ok(unsafe { DeviceView::from_range(range, self.len) })
    }

    /// The mapped memory as a writable device view (kernels write the host memory).
    ///
    /// ```no_run
    /// use rucuda_driver::*;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let mut data = vec![0u32; 4096];
    /// let mut pinned = register_host_memory(&ctx, &mut data, HostRegisterFlags::DEVICEMAP)?;
    /// let view = pinned.device_view_mut()?;
    /// assert_eq!(view.len(), 4096);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn device_view_mut(&mut self) -> Result<DeviceViewMut<'_, T>> {
        let range = self.mapped_range()?;
        // SAFETY: as for `device_view`; the view borrows `self` mutably.
        Ok(unsafe { DeviceViewMut::from_range(range, self.len) })
    }

    fn mapped_range(&self) -> Result<DeviceRange<'_>> {
        let dptr = self.device_pointer()?;
        // SAFETY: the mapping covers our `len` elements while registered (as long as
        // `self`); `uses` is the one log of this memory.
        Ok(unsafe { DeviceRange::new(dptr, self.len * std::mem::size_of::<T>(), &self.uses) })
    }

    /// Waits for queued work before host access from `Deref`, which cannot fail: a
    /// failure (a broken context, where no queued work runs any more) is queued on the
    /// context and returned by its next call.
    fn wait_or_defer(&self, access: Access) {
        if let Err(e) = self.uses.wait_on_host(access) {
            self.ctx.defer_error(e);
        }
    }

    fn release(&mut self) -> Result<()> {
        if !self.registered {
            return Ok(());
        }
        // Where the wait fails the memory stays registered (and an owned Vec is leaked)
        // rather than handed back under queued work.
        self.uses.wait_on_host(Access::Write)?;
        self.ctx.make_current()?;
        // SAFETY: registered by `register`, unregistered once; no recorded use is pending.
        unsafe { call!(cuMemHostUnregister(self.ptr.as_ptr().cast()))? };
        self.registered = false;
        Ok(())
    }

    /// Unregisters now and returns any error (PyCUDA's `unregister`).
    pub fn unregister(mut self) -> Result<()> {
        self.release()
    }
}

impl<T: DeviceRepr> RegisteredHostMemory<'static, T> {
    /// Page-locks the elements of `vec` in place, owning it until
    /// [`RegisteredHostMemory::into_vec`].
    pub fn from_vec(ctx: &Context, mut vec: Vec<T>, flags: HostRegisterFlags) -> Result<Self> {
        let len = vec.len();
        let ptr = NonNull::from(vec.as_mut_slice()).cast::<T>();
        // SAFETY: the Vec's heap buffer does not move while we own the Vec, and nothing
        // else can reach it.
        unsafe { Self::register(ctx, ptr, len, flags, Some(vec)) }
    }

    /// Unregisters and gives the `Vec` back.
    pub fn into_vec(mut self) -> Result<Vec<T>> {
        self.release()?;
        Ok(self.owned.take().unwrap_or_default())
    }
}

impl<T: DeviceRepr> Drop for RegisteredHostMemory<'_, T> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            self.ctx.defer_error(e);
            if let Some(v) = self.owned.take() {
                // Still registered: freeing it would leave the driver a stale range.
                std::mem::forget(v);
            }
        }
    }
}

impl<T: DeviceRepr> Deref for RegisteredHostMemory<'_, T> {
    type Target = [T];
    /// Waits for queued work that writes the memory first.
    fn deref(&self) -> &[T] {
        self.wait_or_defer(Access::Read);
        // SAFETY: `len` valid elements, exclusively ours (borrowed mutably or owned); no
        // queued work writes them (waited above).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceRepr> DerefMut for RegisteredHostMemory<'_, T> {
    /// Waits for all queued work that uses the memory first.
    fn deref_mut(&mut self) -> &mut [T] {
        self.wait_or_defer(Access::Write);
        // SAFETY: as for `deref`; `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_flags_match_the_driver_constants() {
        assert_eq!(HostRegisterFlags::PORTABLE.bits(), 1);
        assert_eq!(HostRegisterFlags::DEVICEMAP.bits(), 2);
        assert_eq!(HostRegisterFlags::IOMEMORY.bits(), 4);
        assert_eq!(HostRegisterFlags::READ_ONLY.bits(), 8);
    }
}
