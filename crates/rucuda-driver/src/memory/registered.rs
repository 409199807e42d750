//! [`RegisteredHostMemory`]: existing host memory page-locked in place with
//! `cuMemHostRegister` (PyCUDA's `register_host_memory`), unregistered when it goes.

use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::context::Context;
use crate::error::{call, Result};
use crate::memory::page_locked::{page_locked_api, page_locked_device_api, PageLocked};
use crate::memory::tracking::Access;
use crate::repr::byte_size;
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
///
/// Only a registration that owns its memory (`'static`, from
/// [`RegisteredHostMemory::from_vec`] or a `'static` slice) lends it to queued work
/// (device views, async copies). A borrowing one could be `mem::forget`-ed while a queued
/// write still runs, ending the borrow: the caller would then read (or free) memory the
/// GPU is writing. So this does not compile:
///
/// ```compile_fail
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
/// let mut local = vec![0u32; 16];
/// let mut host = register_host_memory(&ctx, &mut local[..], HostRegisterFlags::DEVICEMAP)?;
/// let mut view = host.device_view_mut()?; // borrowed registration: no device view
/// memset_d32_async(&mut view, 7, 16, &stream)?;
/// drop(view);
/// std::mem::forget(host); // the borrow of `local` ends, the memset still runs
/// println!("{}", local[0]); // a read racing the GPU's write
/// # Ok::<(), Error>(())
/// ```
pub struct RegisteredHostMemory<'a, T: DeviceRepr> {
    /// The memory, with every use by queued work (async copies, kernels through the
    /// mapped views).
    mem: PageLocked<T>,
    flags: HostRegisterFlags,
    registered: bool,
    owned: Option<Vec<T>>,
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
            .field("mem", &self.mem)
            .field("flags", &self.flags)
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

page_locked_api!(RegisteredHostMemory<'a>);
page_locked_device_api!(RegisteredHostMemory<'static>);

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
            // SAFETY: the caller's range, page-locked below for as long as `me` lives
            // (unless empty).
            mem: unsafe { PageLocked::new(ptr, len, ctx) },
            flags,
            registered: false,
            owned,
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

    /// The flags it was registered with.
    #[inline]
    pub fn flags(&self) -> HostRegisterFlags {
        self.flags
    }

    fn release(&mut self) -> Result<()> {
        if !self.registered {
            return Ok(());
        }
        // Where the wait fails the memory stays registered (and an owned Vec is leaked)
        // rather than handed back under queued work.
        self.mem.wait(Access::Write)?;
        self.context().make_current()?;
        // SAFETY: registered by `register`, unregistered once; no recorded use is pending.
        unsafe { call!(cuMemHostUnregister(self.mem.as_ptr().cast()))? };
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
            self.context().defer_error(e);
            if let Some(v) = self.owned.take() {
                // Still registered: freeing it would leave the driver a stale range.
                std::mem::forget(v);
            }
        }
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
