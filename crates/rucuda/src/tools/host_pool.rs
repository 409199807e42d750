//! PyCUDA's `PageLockedMemoryPool` and `PageLockedAllocator`: page-locked host blocks
//! that go back to the pool on drop and are handed out again for requests of similar
//! size, so staging buffers for asynchronous copies cost no `cuMemHostAlloc` (which is
//! slow: it maps and locks pages) after the first time.
//!
//! Sizes fall in the same bins as [`DeviceMemoryPool`](super::DeviceMemoryPool)'s (four
//! per power of two). On out-of-memory the pool frees what it holds and tries once more.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rucuda_driver::{check, driver, Context, Error, ErrorKind, HostAllocFlags, Result};

use super::host_block::PooledHostAllocation;
use super::pool::{bin_of, bin_size};

/// How a [`PageLockedMemoryPool`] allocates: the [`HostAllocFlags`] given to
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
        // `free_block` exactly once (the pool owns it until then).
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

/// Calls `allocate`; when it runs out of memory, calls `free_held` (the pool gives back
/// what it holds) and `allocate` once more.
fn retry_after_freeing<A>(
    mut allocate: impl FnMut() -> Result<A>,
    free_held: impl FnOnce() -> Result<()>,
) -> Result<A> {
    match allocate() {
        Err(e) if e.kind() == ErrorKind::Memory => {
            free_held()?;
            allocate()
        }
        other => other,
    }
}

/// Frees a block from [`PageLockedAllocator::allocate`].
fn free_block(ctx: &Context, addr: usize) -> Result<()> {
    ctx.bind()?;
    let free = driver()?.cuMemFreeHost()?;
    // SAFETY: `addr` came from cuMemHostAlloc in this context and nobody uses it any more
    // (its allocation waited for its copies before giving it back).
    let code = unsafe { free(addr as *mut std::ffi::c_void) };
    check(code, "cuMemFreeHost")
}

/// The pool's state, shared by the pool's clones and its blocks.
pub(super) struct HostPoolInner {
    pub(super) ctx: Context,
    pub(super) allocator: PageLockedAllocator,
    pub(super) held: Mutex<HashMap<u32, Vec<usize>>>,
    pub(super) held_blocks: AtomicUsize,
    pub(super) active_blocks: AtomicUsize,
    pub(super) managed_bytes: AtomicUsize,
    pub(super) active_bytes: AtomicUsize,
    pub(super) holding: AtomicBool,
}

impl HostPoolInner {
    pub(super) fn release(&self, addr: usize, bin: u32) -> Result<()> {
        self.managed_bytes
            .fetch_sub(bin_size(bin), Ordering::Relaxed);
        free_block(&self.ctx, addr)
    }

    fn free_held(&self) -> Result<()> {
        let taken: Vec<(u32, Vec<usize>)> = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect();
        let mut first_err = None;
        for (bin, blocks) in taken {
            for addr in blocks {
                self.held_blocks.fetch_sub(1, Ordering::Relaxed);
                if let Err(e) = self.release(addr, bin) {
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl Drop for HostPoolInner {
    fn drop(&mut self) {
        if let Err(e) = self.free_held() {
            log::error!("rucuda: freeing a page-locked pool's blocks failed: {e}");
        }
    }
}

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
    inner: Arc<HostPoolInner>,
}

impl std::fmt::Debug for PageLockedMemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageLockedMemoryPool")
            .field("flags", &self.inner.allocator.flags())
            .field("held_blocks", &self.held_blocks())
            .field("active_blocks", &self.active_blocks())
            .field("managed_bytes", &self.managed_bytes())
            .field("active_bytes", &self.active_bytes())
            .finish()
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
        PageLockedMemoryPool {
            inner: Arc::new(HostPoolInner {
                ctx: ctx.clone(),
                allocator,
                held: Mutex::new(HashMap::new()),
                held_blocks: AtomicUsize::new(0),
                active_blocks: AtomicUsize::new(0),
                managed_bytes: AtomicUsize::new(0),
                active_bytes: AtomicUsize::new(0),
                holding: AtomicBool::new(true),
            }),
        }
    }

    /// The allocator (and so the flags) of this pool.
    pub fn allocator(&self) -> PageLockedAllocator {
        self.inner.allocator
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
        let bin = bin_of(bytes.max(1));
        let reused = self
            .inner
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(&bin)
            .and_then(Vec::pop);
        let addr = match reused {
            Some(a) => {
                self.inner.held_blocks.fetch_sub(1, Ordering::Relaxed);
                a
            }
            None => self.fresh(bin_size(bin))?,
        };
        self.inner.active_blocks.fetch_add(1, Ordering::Relaxed);
        self.inner.active_bytes.fetch_add(bytes, Ordering::Relaxed);
        // Constructed before the alignment check, so that its drop returns the block.
        let block = PooledHostAllocation::new(self.inner.clone(), addr, len, bin);
        if addr % std::mem::align_of::<T>() != 0 {
            return Err(Error::InvalidArgument(format!(
                "cuMemHostAlloc returned {addr:#x}, not aligned for {}",
                T::C_TYPE
            )));
        }
        Ok(block)
    }

    fn fresh(&self, size: usize) -> Result<usize> {
        let inner = &self.inner;
        let addr = retry_after_freeing(
            || inner.allocator.allocate(&inner.ctx, size),
            || inner.free_held(),
        )?;
        inner.managed_bytes.fetch_add(size, Ordering::Relaxed);
        Ok(addr)
    }

    /// Blocks held for reuse (PyCUDA's `held_blocks`).
    pub fn held_blocks(&self) -> usize {
        self.inner.held_blocks.load(Ordering::Relaxed)
    }
    /// Blocks in use (PyCUDA's `active_blocks`).
    pub fn active_blocks(&self) -> usize {
        self.inner.active_blocks.load(Ordering::Relaxed)
    }
    /// Bytes allocated from the driver, held or in use.
    pub fn managed_bytes(&self) -> usize {
        self.inner.managed_bytes.load(Ordering::Relaxed)
    }
    /// Bytes requested by blocks in use.
    pub fn active_bytes(&self) -> usize {
        self.inner.active_bytes.load(Ordering::Relaxed)
    }

    /// Frees every held block (PyCUDA's `free_held`).
    pub fn free_held(&self) -> Result<()> {
        self.inner.free_held()
    }

    /// Frees held blocks and stops holding: blocks dropped from now on go back to the
    /// driver (PyCUDA's `stop_holding`).
    pub fn stop_holding(&self) -> Result<()> {
        self.inner.holding.store(false, Ordering::Relaxed);
        self.inner.free_held()
    }
}

#[cfg(test)]
mod tests {
    use super::retry_after_freeing;
    use rucuda_driver::sys::CUresult;
    use rucuda_driver::{DriverError, Error};

    fn error(code: CUresult) -> Error {
        Error::Driver(DriverError {
            code,
            call: "cuMemHostAlloc",
            name: "",
            message: "".into(),
        })
    }

    #[test]
    fn out_of_memory_frees_held_blocks_and_retries_once() {
        let mut calls = 0;
        let mut freed = false;
        let got = retry_after_freeing(
            || {
                calls += 1;
                if calls == 1 {
                    Err(error(CUresult::CUDA_ERROR_OUT_OF_MEMORY))
                } else {
                    Ok(7usize)
                }
            },
            || {
                freed = true;
                Ok(())
            },
        );
        assert_eq!(got.unwrap(), 7);
        assert!(freed);
        assert_eq!(calls, 2);
    }

    #[test]
    fn other_errors_and_a_second_failure_are_returned() {
        let mut freed = false;
        let got: Result<(), _> = retry_after_freeing(
            || Err(error(CUresult::CUDA_ERROR_INVALID_VALUE)),
            || {
                freed = true;
                Ok(())
            },
        );
        assert_eq!(
            got.unwrap_err().code(),
            Some(CUresult::CUDA_ERROR_INVALID_VALUE)
        );
        assert!(!freed, "only out-of-memory frees the held blocks");
        let mut calls = 0;
        let got: Result<(), _> = retry_after_freeing(
            || {
                calls += 1;
                Err(error(CUresult::CUDA_ERROR_OUT_OF_MEMORY))
            },
            || Ok(()),
        );
        assert!(got.is_err());
        assert_eq!(calls, 2, "one retry, not a loop");
    }
}
