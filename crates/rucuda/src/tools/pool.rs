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

use rucuda_driver::{Context, DeviceBuffer, DevicePtr, Error, ErrorKind, Result};
use rucuda_driver_sys::CUdeviceptr;

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
    held: Mutex<HashMap<u32, Vec<CUdeviceptr>>>,
    held_blocks: AtomicUsize,
    active_blocks: AtomicUsize,
    managed_bytes: AtomicUsize,
    active_bytes: AtomicUsize,
    holding: AtomicBool,
}

impl PoolInner {
    fn release_raw(&self, ptr: CUdeviceptr, bytes: usize) -> Result<()> {
        self.managed_bytes.fetch_sub(bytes, Ordering::Relaxed);
        // SAFETY: `ptr` came from DeviceBuffer::<u8>::uninit(.., bytes).into_raw() in this
        // pool's context and is owned by nobody else.
        unsafe { DeviceBuffer::<u8>::from_raw(&self.ctx, ptr, bytes) }.free()
    }

    fn free_held(&self) -> Result<()> {
        let taken: Vec<(u32, Vec<CUdeviceptr>)> = match self.held.lock() {
            Ok(mut h) => h.drain().collect(),
            Err(_) => {
                return Err(Error::InvalidArgument(
                    "memory pool poisoned by a panic".into(),
                ))
            }
        };
        let mut first_err = None;
        for (bin, ptrs) in taken {
            for p in ptrs {
                self.held_blocks.fetch_sub(1, Ordering::Relaxed);
                if let Err(e) = self.release_raw(p, bin_size(bin)) {
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
            eprintln!("rucuda: freeing a memory pool's blocks failed: {e}");
        }
    }
}

/// A pool of device memory (PyCUDA's `DeviceMemoryPool`), cheap to clone; blocks hold
/// the pool, and the pool its context, so nothing outlives what it needs.
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
        let ptr = match reused {
            Some(p) => {
                self.inner.held_blocks.fetch_sub(1, Ordering::Relaxed);
                p
            }
            None => self.fresh(size)?,
        };
        self.inner.active_blocks.fetch_add(1, Ordering::Relaxed);
        self.inner.active_bytes.fetch_add(bytes, Ordering::Relaxed);
        Ok(PooledDeviceAllocation {
            pool: self.inner.clone(),
            ptr,
            bytes,
            bin,
        })
    }

    fn fresh(&self, size: usize) -> Result<CUdeviceptr> {
        let ptr = match DeviceBuffer::<u8>::uninit(&self.inner.ctx, size) {
            Ok(b) => b.into_raw(),
            Err(e) if e.kind() == ErrorKind::Memory => {
                // Give back what we hold, then try once more.
                self.inner.free_held()?;
                DeviceBuffer::<u8>::uninit(&self.inner.ctx, size)?.into_raw()
            }
            Err(e) => return Err(e),
        };
        self.inner.managed_bytes.fetch_add(size, Ordering::Relaxed);
        Ok(ptr)
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
/// the pool when dropped. Pass it to kernels as `&block` or through its
/// [`DevicePtr::device_ptr`].
pub struct PooledDeviceAllocation {
    pool: Arc<PoolInner>,
    ptr: CUdeviceptr,
    bytes: usize,
    bin: u32,
}

impl std::fmt::Debug for PooledDeviceAllocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PooledDeviceAllocation({:#x}, {} bytes)",
            self.ptr, self.bytes
        )
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
    fn device_ptr(&self) -> CUdeviceptr {
        self.ptr
    }
    fn byte_len(&self) -> usize {
        self.bytes
    }
}

// A pooled block is owned memory: copies and memsets may write it.
impl rucuda_driver::DevicePtrMut for PooledDeviceAllocation {}

// SAFETY: the argument bytes are the `ptr` field (a CUdeviceptr, 8 bytes, what a
// kernel's pointer parameter takes), alive as long as the borrow.
unsafe impl rucuda_driver::KernelArg for &PooledDeviceAllocation {
    fn param_ptr(&self) -> *mut std::ffi::c_void {
        (&self.ptr as *const CUdeviceptr).cast_mut().cast()
    }
    fn param_size(&self) -> usize {
        std::mem::size_of::<CUdeviceptr>()
    }
}

impl Drop for PooledDeviceAllocation {
    fn drop(&mut self) {
        let p = &self.pool;
        p.active_blocks.fetch_sub(1, Ordering::Relaxed);
        p.active_bytes.fetch_sub(self.bytes, Ordering::Relaxed);
        if p.holding.load(Ordering::Relaxed) {
            if let Ok(mut held) = p.held.lock() {
                held.entry(self.bin).or_default().push(self.ptr);
                p.held_blocks.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        if let Err(e) = p.release_raw(self.ptr, bin_size(self.bin)) {
            eprintln!("rucuda: freeing a pooled block failed: {e}");
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
