//! The bin allocator both memory pools share ([`DeviceMemoryPool`] and
//! [`PageLockedMemoryPool`]): blocks grouped in bins by size, held for reuse when given
//! back, and the counts PyCUDA's pools report.
//!
//! Sizes are grouped in bins of four per power of two (2 mantissa bits), as PyCUDA's
//! pools do: a request is rounded up to its bin's size ([`alloc_size`] of
//! [`bin_number`]), so one held block serves every request of that bin. On out-of-memory
//! the allocator frees what it holds and tries once more.
//!
//! [`DeviceMemoryPool`]: super::DeviceMemoryPool
//! [`PageLockedMemoryPool`]: super::PageLockedMemoryPool

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use rucuda_driver::{ErrorKind, Result};

const MANTISSA_BITS: u32 = 2;

/// The bin of a request of `bytes` bytes (PyCUDA's `bin_number`): bin sizes are 1, 2, 3,
/// then `(4 + m) << s` for `m` in 0..4, four per power of two, and a request falls in
/// the smallest bin that holds it.
pub(crate) fn bin_number(bytes: usize) -> u32 {
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

/// The size of the blocks of `bin` (PyCUDA's `alloc_size`): the largest request that
/// falls in it.
pub(crate) fn alloc_size(bin: u32) -> usize {
    if bin < 4 {
        return bin as usize;
    }
    let (shift, m) = ((bin - 4) / 4, (bin - 4) % 4);
    (4 + m as usize) << shift
}

/// Where a pool's blocks come from and go back to: the driver, through one kind of
/// memory.
pub(crate) trait BlockSource {
    /// A block of memory, owned until freed.
    type Block;
    /// What the pool is called in log messages.
    const POOL: &'static str;
    /// A new block of `size` (> 0) bytes.
    fn allocate(&self, size: usize) -> Result<Self::Block>;
    /// Gives `block` back to the driver.
    fn free(&self, block: Self::Block) -> Result<()>;
}

/// A block handed out by a [`BinAllocator`], with the bin it goes back to.
pub(crate) struct Taken<B> {
    pub block: B,
    pub bin: u32,
}

/// Blocks of a [`BlockSource`] by bin, with the counts of blocks and bytes held and in
/// use. Dropping it frees what it holds; blocks in use keep it alive through their pool.
pub(crate) struct BinAllocator<S: BlockSource> {
    source: S,
    /// Free blocks by bin.
    held: Mutex<HashMap<u32, Vec<S::Block>>>,
    held_blocks: AtomicUsize,
    active_blocks: AtomicUsize,
    managed_bytes: AtomicUsize,
    active_bytes: AtomicUsize,
    holding: AtomicBool,
}

impl<S: BlockSource> BinAllocator<S> {
    /// An allocator holding nothing yet.
    pub(crate) fn new(source: S) -> BinAllocator<S> {
        BinAllocator {
            source,
            held: Mutex::new(HashMap::new()),
            held_blocks: AtomicUsize::new(0),
            active_blocks: AtomicUsize::new(0),
            managed_bytes: AtomicUsize::new(0),
            active_bytes: AtomicUsize::new(0),
            holding: AtomicBool::new(true),
        }
    }

    /// Where its blocks come from.
    pub(crate) fn source(&self) -> &S {
        &self.source
    }

    /// A block for a request of `bytes` bytes: one of its bin held for reuse, or a new one
    /// of the bin's size.
    pub(crate) fn allocate(&self, bytes: usize) -> Result<Taken<S::Block>> {
        let bin = bin_number(bytes.max(1));
        // A panic while the lock was held cannot leave the map half-changed.
        let reused = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(&bin)
            .and_then(Vec::pop);
        let block = match reused {
            Some(b) => {
                self.held_blocks.fetch_sub(1, Ordering::Relaxed);
                b
            }
            None => {
                let size = alloc_size(bin);
                let b = retry_after_freeing(|| self.source.allocate(size), || self.free_held())?;
                self.managed_bytes.fetch_add(size, Ordering::Relaxed);
                b
            }
        };
        self.active_blocks.fetch_add(1, Ordering::Relaxed);
        self.active_bytes.fetch_add(bytes, Ordering::Relaxed);
        Ok(Taken { block, bin })
    }

    /// Takes back a block that [`allocate`](Self::allocate) gave for `bytes` bytes: holds
    /// it for reuse, or frees it once the allocator stopped holding (and returns that
    /// error).
    pub(crate) fn give_back(&self, taken: Taken<S::Block>, bytes: usize) -> Result<()> {
        self.active_blocks.fetch_sub(1, Ordering::Relaxed);
        self.active_bytes.fetch_sub(bytes, Ordering::Relaxed);
        if self.holding.load(Ordering::Relaxed) {
            self.held
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(taken.bin)
                .or_default()
                .push(taken.block);
            self.held_blocks.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        self.release(taken)
    }

    /// Frees a block that is neither held nor in use.
    fn release(&self, taken: Taken<S::Block>) -> Result<()> {
        self.managed_bytes
            .fetch_sub(alloc_size(taken.bin), Ordering::Relaxed);
        self.source.free(taken.block)
    }

    /// Frees every held block (PyCUDA's `free_held`); returns the first error.
    pub(crate) fn free_held(&self) -> Result<()> {
        let taken: Vec<(u32, Vec<S::Block>)> = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect();
        let mut first_err = None;
        for (bin, blocks) in taken {
            for block in blocks {
                self.held_blocks.fetch_sub(1, Ordering::Relaxed);
                if let Err(e) = self.release(Taken { block, bin }) {
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Frees held blocks and stops holding: blocks given back from now on are freed
    /// (PyCUDA's `stop_holding`).
    pub(crate) fn stop_holding(&self) -> Result<()> {
        self.holding.store(false, Ordering::Relaxed);
        self.free_held()
    }

    /// Blocks held for reuse (PyCUDA's `held_blocks`).
    pub(crate) fn held_blocks(&self) -> usize {
        self.held_blocks.load(Ordering::Relaxed)
    }

    /// Blocks in use (PyCUDA's `active_blocks`).
    pub(crate) fn active_blocks(&self) -> usize {
        self.active_blocks.load(Ordering::Relaxed)
    }

    /// Bytes allocated from the driver, held or in use (PyCUDA's `managed_bytes`).
    pub(crate) fn managed_bytes(&self) -> usize {
        self.managed_bytes.load(Ordering::Relaxed)
    }

    /// Bytes requested by blocks in use (PyCUDA's `active_bytes`).
    pub(crate) fn active_bytes(&self) -> usize {
        self.active_bytes.load(Ordering::Relaxed)
    }

    /// The counts, as fields of a pool's `Debug` output.
    pub(crate) fn debug_counts<'d, 'a, 'b>(
        &self,
        d: &'d mut fmt::DebugStruct<'a, 'b>,
    ) -> &'d mut fmt::DebugStruct<'a, 'b> {
        d.field("held_blocks", &self.held_blocks())
            .field("active_blocks", &self.active_blocks())
            .field("managed_bytes", &self.managed_bytes())
            .field("active_bytes", &self.active_bytes())
    }
}

/// The public methods of a pool whose `inner` field is an `Arc<BinAllocator<_>>`: its
/// counts, `free_held` and `stop_holding`, as PyCUDA's pools name them.
macro_rules! pool_counts {
    () => {
        /// Blocks held for reuse (PyCUDA's `held_blocks`).
        pub fn held_blocks(&self) -> usize {
            self.inner.held_blocks()
        }

        /// Blocks in use (PyCUDA's `active_blocks`).
        pub fn active_blocks(&self) -> usize {
            self.inner.active_blocks()
        }

        /// Bytes allocated from the driver, held or in use (PyCUDA's `managed_bytes`).
        pub fn managed_bytes(&self) -> usize {
            self.inner.managed_bytes()
        }

        /// Bytes requested by blocks in use (PyCUDA's `active_bytes`).
        pub fn active_bytes(&self) -> usize {
            self.inner.active_bytes()
        }

        /// Frees every held block (PyCUDA's `free_held`).
        pub fn free_held(&self) -> rucuda_driver::Result<()> {
            self.inner.free_held()
        }

        /// Frees held blocks and stops holding: blocks given back from now on go back to
        /// the driver (PyCUDA's `stop_holding`).
        pub fn stop_holding(&self) -> rucuda_driver::Result<()> {
            self.inner.stop_holding()
        }
    };
}
pub(crate) use pool_counts;

impl<S: BlockSource> Drop for BinAllocator<S> {
    fn drop(&mut self) {
        if let Err(e) = self.free_held() {
            log::error!("rucuda: freeing the blocks of a {} failed: {e}", S::POOL);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use rucuda_driver::sys::CUresult;
    use rucuda_driver::{DriverError, Error};

    #[test]
    fn every_request_fits_its_bin_and_bins_are_tight() {
        let mut prev_size = 0;
        for bin in 1..200u32 {
            let size = alloc_size(bin);
            assert!(size > prev_size, "bin {bin}: {size} <= {prev_size}");
            assert_eq!(bin_number(size), bin, "size {size}");
            assert_eq!(bin_number(prev_size + 1), bin, "size {}", prev_size + 1);
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
            let size = alloc_size(bin_number(bytes));
            assert!(
                size >= bytes && size <= bytes + bytes / 4 + 4,
                "{bytes} -> {size}"
            );
        }
    }

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
        let got: Result<()> = retry_after_freeing(
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
        let got: Result<()> = retry_after_freeing(
            || {
                calls += 1;
                Err(error(CUresult::CUDA_ERROR_OUT_OF_MEMORY))
            },
            || Ok(()),
        );
        assert!(got.is_err());
        assert_eq!(calls, 2, "one retry, not a loop");
    }

    /// Numbered blocks; freeing one records its number.
    #[derive(Default)]
    struct Counter {
        made: std::cell::Cell<usize>,
        freed: std::cell::RefCell<Vec<usize>>,
    }

    impl BlockSource for Counter {
        type Block = usize;
        const POOL: &'static str = "test pool";
        fn allocate(&self, _size: usize) -> Result<usize> {
            self.made.set(self.made.get() + 1);
            Ok(self.made.get())
        }
        fn free(&self, block: usize) -> Result<()> {
            self.freed.borrow_mut().push(block);
            Ok(())
        }
    }

    #[test]
    fn blocks_given_back_are_held_reused_by_bin_and_freed_when_asked() {
        let bins = BinAllocator::new(Counter::default());
        let a = bins.allocate(1000).unwrap();
        let size = alloc_size(a.bin);
        assert_eq!((bins.active_blocks(), bins.active_bytes()), (1, 1000));
        assert_eq!(bins.managed_bytes(), size);
        bins.give_back(a, 1000).unwrap();
        assert_eq!((bins.active_blocks(), bins.held_blocks()), (0, 1));
        // The same bin reuses the block; another bin gets a new one.
        let b = bins.allocate(size).unwrap();
        assert_eq!(b.block, 1);
        let c = bins.allocate(size + 1).unwrap();
        assert_eq!(c.block, 2);
        assert_eq!(bins.managed_bytes(), size + alloc_size(c.bin));
        bins.give_back(b, size).unwrap();
        bins.give_back(c, size + 1).unwrap();
        bins.free_held().unwrap();
        assert_eq!((bins.held_blocks(), bins.managed_bytes()), (0, 0));
        assert_eq!(bins.source().freed.borrow().len(), 2);
        // After stop_holding, a block given back is freed at once.
        let d = bins.allocate(10).unwrap();
        bins.stop_holding().unwrap();
        bins.give_back(d, 10).unwrap();
        let mut freed = bins.source().freed.borrow().clone();
        freed[..2].sort_unstable(); // free_held frees in no set order
        assert_eq!(freed, [1, 2, 3]);
        assert_eq!((bins.held_blocks(), bins.managed_bytes()), (0, 0));
    }
}
