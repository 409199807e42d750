//! [`PooledHostAllocation`]: a block of a
//! [`PageLockedMemoryPool`](super::PageLockedMemoryPool) seen as a slice of `T`, which
//! waits for the asynchronous copies that use it before the host touches it and before
//! it goes back to the pool.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use rucuda_driver::{
    check, driver, Access, Context, DeviceRange, DeviceRepr, HostAllocFlags, Result, UseLog,
};

use super::bins::{BinAllocator, Taken};
use super::host_alloc::HostBlocks;

/// `len` elements of `T` in a page-locked block of a
/// [`PageLockedMemoryPool`](super::PageLockedMemoryPool) (PyCUDA's `PooledHostAllocation`
/// with the array on top). Dereferences to `[T]`; goes back to the
/// pool when dropped, after the asynchronous copies that use it have finished.
pub struct PooledHostAllocation<T: DeviceRepr> {
    pool: Arc<BinAllocator<HostBlocks>>,
    addr: usize,
    len: usize,
    bin: u32,
    /// Every use of the block by queued work (the asynchronous copies).
    uses: UseLog,
    _type: PhantomData<T>,
}

impl<T: DeviceRepr> std::fmt::Debug for PooledHostAllocation<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PooledHostAllocation<{}>({:#x}, {} elements)",
            T::C_TYPE,
            self.addr,
            self.len
        )
    }
}

impl<T: DeviceRepr> PooledHostAllocation<T> {
    /// `len` elements of `T` in `taken`, a block of `pool` (given back on drop).
    pub(super) fn new(
        pool: Arc<BinAllocator<HostBlocks>>,
        taken: Taken<usize>,
        len: usize,
    ) -> Self {
        PooledHostAllocation {
            pool,
            addr: taken.block,
            len,
            bin: taken.bin,
            uses: UseLog::new(),
            _type: PhantomData,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Size in bytes, as requested (PyCUDA's `len()` of the allocation).
    pub fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
    /// The host address of the first element.
    pub fn as_ptr(&self) -> *const T {
        self.addr as *const T
    }
    /// The context the block was allocated in.
    pub fn context(&self) -> &Context {
        &self.pool.source().ctx
    }
    /// The flags of the pool's allocator.
    pub fn alloc_flags(&self) -> HostAllocFlags {
        self.pool.source().allocator.flags()
    }
    /// The flags as the driver reports them for this block (`cuMemHostGetFlags`).
    pub fn flags(&self) -> Result<HostAllocFlags> {
        self.context().bind()?;
        let get = driver()?.cuMemHostGetFlags()?;
        let mut raw: std::ffi::c_uint = 0;
        // SAFETY: writes one uint; `addr` is the start of our live cuMemHostAlloc block.
        let code = unsafe { get(&mut raw, self.addr as *mut std::ffi::c_void) };
        check(code, "cuMemHostGetFlags")?;
        Ok(HostAllocFlags::from_bits_retain(raw))
    }

    /// Returns the block to the pool now (PyCUDA's `free`), after waiting for the
    /// asynchronous copies that use it; returns their error, if any.
    pub fn free(self) -> Result<()> {
        self.synchronize()
    }

    /// Waits for the asynchronous copies that use the block.
    pub fn synchronize(&self) -> Result<()> {
        self.uses.wait_on_host(Access::Write)
    }

    /// The block as a range for asynchronous copies: its "address" is the host address,
    /// and its log is the block's, which host access and the return to the pool wait on.
    pub fn host_range(&self) -> DeviceRange<'_> {
        // SAFETY: `len` elements at `addr` live as long as `self`; `uses` is the block's
        // one log (a block handed out again starts idle: its drop waited for every use).
        unsafe { DeviceRange::new(self.addr as u64, self.byte_len(), &self.uses) }
    }

    /// The elements, after waiting for asynchronous copies that write them.
    pub fn as_slice(&self) -> Result<&[T]> {
        self.uses.wait_on_host(Access::Read)?;
        // SAFETY: the block holds `len` elements (aligned, checked in `allocate`; driver
        // memory holds some bit pattern, valid for T); no copy uses it any more and
        // `&self` forbids host writes.
        Ok(unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len) })
    }

    /// The elements, writable, after waiting for asynchronous copies that use them.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.synchronize()?;
        // SAFETY: as for `as_slice`; `&mut self` makes this the only access.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.addr as *mut T, self.len) })
    }

    /// Waits before host access from `Deref`, which cannot fail: the wait fails only on a
    /// broken context, where no queued work runs any more.
    fn wait_or_report(&self, access: Access) {
        if let Err(e) = self.uses.wait_on_host(access) {
            log::error!("rucuda: waiting for copies of a pooled host block failed: {e}");
        }
    }
}

impl<T: DeviceRepr> Deref for PooledHostAllocation<T> {
    type Target = [T];
    /// Waits for asynchronous copies that use the block first.
    fn deref(&self) -> &[T] {
        self.wait_or_report(Access::Read);
        // SAFETY: see `as_slice`.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len) }
    }
}

impl<T: DeviceRepr> DerefMut for PooledHostAllocation<T> {
    /// Waits for asynchronous copies that use the block first.
    fn deref_mut(&mut self) -> &mut [T] {
        self.wait_or_report(Access::Write);
        // SAFETY: see `as_mut_slice`.
        unsafe { std::slice::from_raw_parts_mut(self.addr as *mut T, self.len) }
    }
}

impl<T: DeviceRepr> Drop for PooledHostAllocation<T> {
    fn drop(&mut self) {
        // A copy still reading or writing the block must finish before anyone else gets it.
        if let Err(e) = self.synchronize() {
            // The context is broken: leak the block rather than hand out memory a copy
            // may still touch.
            log::error!(
                "rucuda: a pooled host block is leaked: waiting for its copies failed: {e}"
            );
            return;
        }
        let taken = Taken {
            block: self.addr,
            bin: self.bin,
        };
        if let Err(e) = self.pool.give_back(taken, self.byte_len()) {
            log::error!("rucuda: freeing a pooled host block failed: {e}");
        }
    }
}
