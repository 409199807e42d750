//! PyCUDA's `DeviceMemoryPool`: device allocations that go back to the pool on drop and
//! are handed out again for requests of similar size, so frequent temporaries cost no
//! `cuMemAlloc`. The bins, counts and out-of-memory retry are the shared
//! [`BinAllocator`]'s.

use std::sync::Arc;

use rucuda_driver::{
    Access, Context, DeviceBuffer, DevicePtr, DeviceRange, Error, KernelArg, Param, Result, Stream,
};

use super::bins::{pool_counts, BinAllocator, BlockSource, Taken};

/// Device blocks of one context. Each keeps its buffer while held, whose use log still
/// holds the work the last owner queued: the next owner's work on another stream waits
/// for it.
struct DeviceBlocks {
    ctx: Context,
}

impl BlockSource for DeviceBlocks {
    type Block = DeviceBuffer<u8>;
    const POOL: &'static str = "device memory pool";

    fn allocate(&self, size: usize) -> Result<DeviceBuffer<u8>> {
        DeviceBuffer::<u8>::uninit(&self.ctx, size)
    }

    /// Frees a block (waiting for the work its log recorded).
    fn free(&self, block: DeviceBuffer<u8>) -> Result<()> {
        block.free()
    }
}

/// A pool of device memory (PyCUDA's `DeviceMemoryPool`), cheap to clone; blocks hold
/// the pool, and the pool its context, so nothing outlives what it needs.
///
/// A block handed out again keeps the use log of its memory: work the next owner queues
/// on another stream first waits for the work the last owner queued on it (PyTorch's
/// caching allocator gets the same from `recordStream` events), and a block freed back
/// to the driver waits for all of it.
///
/// ```no_run
/// use rucuda::tools::DeviceMemoryPool;
/// let ctx = rucuda::tools::autoprimaryctx()?;
/// let pool = DeviceMemoryPool::new(ctx);
/// let a = pool.allocate(1 << 20)?;
/// drop(a);                                  // back to the pool
/// let b = pool.allocate(1 << 20)?;          // the same block, no cuMemAlloc
/// assert_eq!(pool.held_blocks(), 0);
/// # Ok::<(), rucuda::driver::Error>(())
/// ```
#[derive(Clone)]
pub struct DeviceMemoryPool {
    inner: Arc<BinAllocator<DeviceBlocks>>,
}

impl std::fmt::Debug for DeviceMemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner
            .debug_counts(&mut f.debug_struct("DeviceMemoryPool"))
            .finish()
    }
}

impl DeviceMemoryPool {
    /// An empty pool allocating in `ctx`.
    pub fn new(ctx: &Context) -> DeviceMemoryPool {
        DeviceMemoryPool {
            inner: Arc::new(BinAllocator::new(DeviceBlocks { ctx: ctx.clone() })),
        }
    }

    /// A block of at least `bytes` bytes.
    pub fn allocate(&self, bytes: usize) -> Result<PooledDeviceAllocation> {
        let taken = self.inner.allocate(bytes)?;
        Ok(PooledDeviceAllocation {
            pool: self.inner.clone(),
            block: Some(taken),
            bytes,
        })
    }

    pool_counts!();
}

/// A block from a [`DeviceMemoryPool`] (PyCUDA's `PooledDeviceAllocation`); goes back to
/// the pool when dropped. Pass it to kernels as `&block` (or `&mut block`), or take its
/// address for your own work through [`DevicePtr::device_range`].
pub struct PooledDeviceAllocation {
    pool: Arc<BinAllocator<DeviceBlocks>>,
    /// The block (taken when it goes back to the pool).
    block: Option<Taken<DeviceBuffer<u8>>>,
    bytes: usize,
}

impl std::fmt::Debug for PooledDeviceAllocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PooledDeviceAllocation({} bytes)", self.bytes)
    }
}

impl PooledDeviceAllocation {
    /// Size in bytes, as requested (PyCUDA's `len()`).
    pub fn len(&self) -> usize {
        self.bytes
    }
    /// True for a zero-byte request.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
    /// Returns the block to the pool now (PyCUDA's `free`).
    pub fn free(self) {}
}

impl DevicePtr for PooledDeviceAllocation {
    fn device_range(&self) -> DeviceRange<'_> {
        match &self.block {
            // The first `bytes` bytes of the block, with the block's log.
            Some(Taken { block: b, .. }) => b
                .device_range()
                .sub(0, self.bytes)
                .unwrap_or_else(|_| b.device_range()),
            // SAFETY: an empty range at address 0 (only seen during drop): no memory.
            None => unsafe { DeviceRange::untracked(0, 0) },
        }
    }
}

// A pooled block is owned memory: copies and memsets may write it.
impl rucuda_driver::DevicePtrMut for PooledDeviceAllocation {}

/// The block as a kernel argument used as `access` says, its address from the block's
/// use log for the launch's stream.
fn block_param<'a>(
    block: &'a PooledDeviceAllocation,
    stream: Option<&Stream>,
    access: Access,
) -> Result<Param<'a>> {
    let stream = stream
        .ok_or_else(|| Error::InvalidArgument("a pooled block needs the launch's stream".into()))?;
    Ok(Param::Address(block.device_range().use_on(stream, access)?))
}

// SAFETY: the address comes from the block's use log for the launch's stream.
unsafe impl KernelArg for &PooledDeviceAllocation {
    fn param(&self, stream: Option<&Stream>) -> Result<Param<'_>> {
        block_param(self, stream, Access::Read)
    }
}

// SAFETY: as above, recorded as a write.
unsafe impl KernelArg for &mut PooledDeviceAllocation {
    fn param(&self, stream: Option<&Stream>) -> Result<Param<'_>> {
        block_param(self, stream, Access::Write)
    }
}

impl Drop for PooledDeviceAllocation {
    fn drop(&mut self) {
        let Some(taken) = self.block.take() else {
            return;
        };
        if let Err(e) = self.pool.give_back(taken, self.bytes) {
            log::error!("rucuda: freeing a pooled block failed: {e}");
        }
    }
}
