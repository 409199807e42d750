//! PyCUDA's `DeviceMemoryPool`: device allocations that go back to the pool on drop and
//! are handed out again for requests of similar size, so frequent temporaries cost no
//! `cuMemAlloc`.
//!
//! Sizes are grouped in bins of four per power of two (2 mantissa bits), as PyCUDA's
//! pool does: a request is rounded up to its bin's size, so one held block serves every
//! request of that bin. On out-of-memory the pool frees what it holds and tries once
//! more.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rucuda_driver::{
    Access, Context, DeviceBuffer, DevicePtr, DeviceRange, Error, ErrorKind, Param, Result, Stream,
};

const MANTISSA_BITS: u32 = 2;

/// Bin sizes are 1, 2, 3, then `(4 + m) << s` for `m` in 0..4: four per power of two.
/// The bin of a request is the smallest one that holds it.
pub(crate) fn bin_of(bytes: usize) -> u32 {
    if bytes <= 4 {
        return bytes as u32;
    }
    let exp = usize::BITS - 1 - bytes.leading_zeros(); // >= 2
    let mut shift = exp - MANTISSA_BITS;
    let top = (bytes >> shift) as u32; // 4..=7
    let mut m = top - 4 + u32::from((top as usize) << shift != bytes);
    if m == 1 << MANTISSA_BITS {
        shift += 1;
        m = 0;
    }
    4 * shift + m + 4
}

/// The allocation size of a bin: the largest request that falls in it.
pub(crate) fn bin_size(bin: u32) -> usize {
    if bin < 4 {
        return bin as usize;
    }
    let (shift, m) = ((bin - 4) / 4, (bin - 4) % 4);
    (4 + m as usize) << shift
}

struct PoolInner {
    ctx: Context,
    /// Free blocks by bin. Each keeps its buffer, whose use log still holds the work the
    /// last owner queued: the next owner's work on another stream waits for it.
    held: Mutex<HashMap<u32, Vec<DeviceBuffer<u8>>>>,
    held_blocks: AtomicUsize,
    active_blocks: AtomicUsize,
    managed_bytes: AtomicUsize,
    active_bytes: AtomicUsize,
    holding: AtomicBool,
}

impl PoolInner {
    /// Frees a block (waiting for the work its log recorded).
    fn release(&self, block: DeviceBuffer<u8>) -> Result<()> {
        self.managed_bytes.fetch_sub(block.len(), Ordering::Relaxed);
        block.free()
    }

    fn free_held(&self) -> Result<()> {
        let taken: Vec<(u32, Vec<DeviceBuffer<u8>>)> = match self.held.lock() {
            Ok(mut h) => h.drain().collect(),
            Err(_) => {
                return Err(Error::InvalidArgument(
                    "memory pool poisoned by a panic".into(),
                ))
            }
        };
        let mut first_err = None;
        for (_, blocks) in taken {
            for b in blocks {
                self.held_blocks.fetch_sub(1, Ordering::Relaxed);
                if let Err(e) = self.release(b) {
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl Drop for PoolInner {
    fn drop(&mut self) {
        if let Err(e) = self.free_held() {
            log::error!("rucuda: freeing a memory pool's blocks failed: {e}");
        }
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
    inner: Arc<PoolInner>,
}

impl std::fmt::Debug for DeviceMemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceMemoryPool")
            .field("held_blocks", &self.held_blocks())
            .field("active_blocks", &self.active_blocks())
            .field("managed_bytes", &self.managed_bytes())
            .field("active_bytes", &self.active_bytes())
            .finish()
    }
}

impl DeviceMemoryPool {
    /// An empty pool allocating in `ctx`.
    pub fn new(ctx: &Context) -> DeviceMemoryPool {
        DeviceMemoryPool {
            inner: Arc::new(PoolInner {
                ctx: ctx.clone(),
                held: Mutex::new(HashMap::new()),
                held_blocks: AtomicUsize::new(0),
                active_blocks: AtomicUsize::new(0),
                managed_bytes: AtomicUsize::new(0),
                active_bytes: AtomicUsize::new(0),
                holding: AtomicBool::new(true),
            }),
        }
    }

    /// A block of at least `bytes` bytes.
    pub fn allocate(&self, bytes: usize) -> Result<PooledDeviceAllocation> {
        let bin = bin_of(bytes.max(1));
        let size = bin_size(bin);
        let reused = self
            .inner
            .held
            .lock()
            .map_err(|_| Error::InvalidArgument("memory pool poisoned by a panic".into()))?
            .get_mut(&bin)
            .and_then(Vec::pop);
        let block = match reused {
            Some(b) => {
                self.inner.held_blocks.fetch_sub(1, Ordering::Relaxed);
                b
            }
            None => self.fresh(size)?,
        };
        self.inner.active_blocks.fetch_add(1, Ordering::Relaxed);
        self.inner.active_bytes.fetch_add(bytes, Ordering::Relaxed);
        Ok(PooledDeviceAllocation {
            pool: self.inner.clone(),
            block: Some(block),
            bytes,
            bin,
        })
    }

    fn fresh(&self, size: usize) -> Result<DeviceBuffer<u8>> {
        let block = match DeviceBuffer::<u8>::uninit(&self.inner.ctx, size) {
            Ok(b) => b,
            Err(e) if e.kind() == ErrorKind::Memory => {
                // Give back what we hold, then try once more.
                self.inner.free_held()?;
                DeviceBuffer::<u8>::uninit(&self.inner.ctx, size)?
            }
            Err(e) => return Err(e),
        };
        self.inner.managed_bytes.fetch_add(size, Ordering::Relaxed);
        Ok(block)
    }

    /// Blocks held for reuse (PyCUDA's `held_blocks`).
    pub fn held_blocks(&self) -> usize {
        self.inner.held_blocks.load(Ordering::Relaxed)
    }
    /// Blocks in use (PyCUDA's `active_blocks`).
    pub fn active_blocks(&self) -> usize {
        self.inner.active_blocks.load(Ordering::Relaxed)
    }
    /// Bytes allocated from the driver, held or in use (PyCUDA's `managed_bytes`).
    pub fn managed_bytes(&self) -> usize {
        self.inner.managed_bytes.load(Ordering::Relaxed)
    }
    /// Bytes requested by blocks in use (PyCUDA's `active_bytes`).
    pub fn active_bytes(&self) -> usize {
        self.inner.active_bytes.load(Ordering::Relaxed)
    }

    /// Frees every held block (PyCUDA's `free_held`).
    pub fn free_held(&self) -> Result<()> {
        self.inner.free_held()
    }

    /// Frees held blocks and stops holding: blocks freed from now on go back to the
    /// driver (PyCUDA's `stop_holding`).
    pub fn stop_holding(&self) -> Result<()> {
        self.inner.holding.store(false, Ordering::Relaxed);
        self.inner.free_held()
    }
}

/// A block from a [`DeviceMemoryPool`] (PyCUDA's `PooledDeviceAllocation`); goes back to
/// the pool when dropped. Pass it to kernels as `&block` (or `&mut block`), or take its
/// address for your own work through [`DevicePtr::device_range`].
pub struct PooledDeviceAllocation {
    pool: Arc<PoolInner>,
    /// The block (taken when it goes back to the pool).
    block: Option<DeviceBuffer<u8>>,
    bytes: usize,
    bin: u32,
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
            Some(b) => b
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

// SAFETY: the address comes from the block's use log for the launch's stream.
unsafe impl rucuda_driver::KernelArg for &PooledDeviceAllocation {
    fn param(&self, stream: Option<&Stream>) -> Result<Param<'_>> {
        let stream = stream.ok_or_else(|| {
            Error::InvalidArgument("a pooled block needs the launch's stream".into())
        })?;
        Ok(Param::Address(
            self.device_range().use_on(stream, Access::Read)?,
        ))
    }
}

// SAFETY: as above, recorded as a write.
unsafe impl rucuda_driver::KernelArg for &mut PooledDeviceAllocation {
    fn param(&self, stream: Option<&Stream>) -> Result<Param<'_>> {
        let stream = stream.ok_or_else(|| {
            Error::InvalidArgument("a pooled block needs the launch's stream".into())
        })?;
        Ok(Param::Address(
            self.device_range().use_on(stream, Access::Write)?,
        ))
    }
}

impl Drop for PooledDeviceAllocation {
    fn drop(&mut self) {
        let p = &self.pool;
        p.active_blocks.fetch_sub(1, Ordering::Relaxed);
        p.active_bytes.fetch_sub(self.bytes, Ordering::Relaxed);
        let Some(block) = self.block.take() else {
            return;
        };
        if p.holding.load(Ordering::Relaxed) {
            if let Ok(mut held) = p.held.lock() {
                held.entry(self.bin).or_default().push(block);
                p.held_blocks.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        if let Err(e) = p.release(block) {
            log::error!("rucuda: freeing a pooled block failed: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{bin_of, bin_size};

    #[test]
    fn every_request_fits_its_bin_and_bins_are_tight() {
        let mut prev_size = 0;
        for bin in 1..200u32 {
            let size = bin_size(bin);
            assert!(size > prev_size, "bin {bin}: {size} <= {prev_size}");
            assert_eq!(bin_of(size), bin, "size {size}");
            assert_eq!(bin_of(prev_size + 1), bin, "size {}", prev_size + 1);
            prev_size = size;
            if size > 1 << 40 {
                break;
            }
        }
        for bytes in [
            1usize,
            3,
            5,
            100,
            1000,
            4096,
            1 << 20,
            (1 << 20) + 1,
            123_456_789,
        ] {
            let size = bin_size(bin_of(bytes));
            assert!(
                size >= bytes && size <= bytes + bytes / 4 + 4,
                "{bytes} -> {size}"
            );
        }
    }
}
