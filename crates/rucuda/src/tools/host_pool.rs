//! PyCUDA's `PageLockedMemoryPool`: page-locked host blocks that go back to the pool on
//! drop and are handed out again for requests of similar size, so staging buffers for
//! asynchronous copies cost no `cuMemHostAlloc` (which is slow: it maps and locks pages)
//! after the first time. The bins, counts and out-of-memory retry are the shared
//! [`BinAllocator`]'s, as for [`DeviceMemoryPool`](super::DeviceMemoryPool).

use std::sync::Arc;

use rucuda_driver::{Context, Error, Result};

use super::bins::{pool_counts, BinAllocator};
use super::host_alloc::{HostBlocks, PageLockedAllocator};
use super::host_block::PooledHostAllocation;

/// A pool of page-locked host memory (PyCUDA's `PageLockedMemoryPool`), cheap to clone;
/// blocks hold the pool and the pool its context.
///
/// PyCUDA's `allocate(shape, dtype, order)` returns a NumPy array on a pooled block; here
/// [`allocate::<T>(len)`](Self::allocate) returns a [`PooledHostAllocation<T>`], a slice
/// of `len` elements (wrap it in an `ndarray` view for a shape and an order).
///
/// ```no_run
/// use rucuda::driver::HostAllocFlags;
/// use rucuda::tools::{PageLockedAllocator, PageLockedMemoryPool};
/// let ctx = rucuda::tools::autoprimaryctx()?;
/// let pool = PageLockedMemoryPool::with_allocator(ctx, PageLockedAllocator::new(HostAllocFlags::PORTABLE));
/// let mut a = pool.allocate::<f32>(1 << 20)?;
/// a.fill(1.0);
/// drop(a);                                   // back to the pool
/// let b = pool.allocate::<u32>(1 << 20)?;    // the same block, no cuMemHostAlloc
/// assert_eq!((pool.active_blocks(), pool.held_blocks()), (1, 0));
/// # Ok::<(), rucuda::driver::Error>(())
/// ```
#[derive(Clone)]
pub struct PageLockedMemoryPool {
    inner: Arc<BinAllocator<HostBlocks>>,
}

impl std::fmt::Debug for PageLockedMemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("PageLockedMemoryPool");
        d.field("flags", &self.allocator().flags());
        self.inner.debug_counts(&mut d).finish()
    }
}

impl PageLockedMemoryPool {
    /// An empty pool allocating in `ctx` with no flags (PyCUDA's default
    /// `PageLockedAllocator()`).
    pub fn new(ctx: &Context) -> PageLockedMemoryPool {
        PageLockedMemoryPool::with_allocator(ctx, PageLockedAllocator::default())
    }

    /// An empty pool allocating in `ctx` through `allocator`.
    pub fn with_allocator(ctx: &Context, allocator: PageLockedAllocator) -> PageLockedMemoryPool {
        let blocks = HostBlocks {
            ctx: ctx.clone(),
            allocator,
        };
        PageLockedMemoryPool {
            inner: Arc::new(BinAllocator::new(blocks)),
        }
    }

    /// The allocator (and so the flags) of this pool.
    pub fn allocator(&self) -> PageLockedAllocator {
        self.inner.source().allocator
    }

    /// `len` elements of `T`, contents unspecified (PyCUDA's `allocate`: an "empty"
    /// array). A block of a fitting size the pool holds is reused.
    pub fn allocate<T: rucuda_driver::DeviceRepr>(
        &self,
        len: usize,
    ) -> Result<PooledHostAllocation<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            Error::InvalidArgument(format!("{len} elements of {} overflow usize", T::C_TYPE))
        })?;
        let taken = self.inner.allocate(bytes)?;
        let addr = taken.block;
        // Constructed before the alignment check, so that its drop returns the block.
        let block = PooledHostAllocation::new(self.inner.clone(), taken, len);
        if addr % std::mem::align_of::<T>() != 0 {
            return Err(Error::InvalidArgument(format!(
                "cuMemHostAlloc returned {addr:#x}, not aligned for {}",
                T::C_TYPE
            )));
        }
        Ok(block)
    }

    pool_counts!();
}
