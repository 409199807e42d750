//! Where a page-locked pool's blocks come from: [`PageLockedAllocator`] (PyCUDA's
//! `PageLockedAllocator`, the flags of `cuMemHostAlloc`) and the block source the pool's
//! [`BinAllocator`](super::bins::BinAllocator) draws on.

use rucuda_driver::{check, driver, Context, Error, HostAllocFlags, Result};

use super::bins::BlockSource;

/// How a [`PageLockedMemoryPool`](super::PageLockedMemoryPool) allocates: the [`HostAllocFlags`] given to
/// `cuMemHostAlloc` (PyCUDA's `PageLockedAllocator(flags)`).
///
/// ```
/// use rucuda::driver::HostAllocFlags;
/// use rucuda::tools::PageLockedAllocator;
/// let mapped = PageLockedAllocator::new(HostAllocFlags::DEVICEMAP | HostAllocFlags::PORTABLE);
/// assert!(mapped.flags().contains(HostAllocFlags::DEVICEMAP));
/// assert_eq!(PageLockedAllocator::default().flags(), HostAllocFlags::empty());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PageLockedAllocator {
    flags: HostAllocFlags,
}

impl PageLockedAllocator {
    /// An allocator passing `flags` to `cuMemHostAlloc`.
    pub fn new(flags: HostAllocFlags) -> PageLockedAllocator {
        PageLockedAllocator { flags }
    }

    /// The flags it allocates with.
    pub fn flags(&self) -> HostAllocFlags {
        self.flags
    }

    /// `bytes` (> 0) bytes of page-locked memory in `ctx`: its address.
    fn allocate(&self, ctx: &Context, bytes: usize) -> Result<usize> {
        ctx.bind()?;
        let alloc = driver()?.cuMemHostAlloc()?;
        let mut raw: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: writes one host pointer; the block is freed with cuMemFreeHost by
        // `HostBlocks::free` exactly once (the pool owns it until then).
        let code = unsafe { alloc(&mut raw, bytes, self.flags.bits()) };
        check(code, "cuMemHostAlloc")?;
        if raw.is_null() {
            return Err(Error::InvalidArgument(
                "cuMemHostAlloc returned a null pointer".into(),
            ));
        }
        Ok(raw as usize)
    }
}

/// Page-locked blocks of one context, by address, allocated through `allocator`.
pub(super) struct HostBlocks {
    pub(super) ctx: Context,
    pub(super) allocator: PageLockedAllocator,
}

impl BlockSource for HostBlocks {
    type Block = usize;
    const POOL: &'static str = "page-locked memory pool";

    fn allocate(&self, size: usize) -> Result<usize> {
        self.allocator.allocate(&self.ctx, size)
    }

    /// Frees a block from [`PageLockedAllocator::allocate`].
    fn free(&self, addr: usize) -> Result<()> {
        self.ctx.bind()?;
        let free = driver()?.cuMemFreeHost()?;
        // SAFETY: `addr` came from cuMemHostAlloc in this context and nobody uses it any
        // more (its allocation waited for its copies before giving it back).
        let code = unsafe { free(addr as *mut std::ffi::c_void) };
        check(code, "cuMemFreeHost")
    }
}
