//! The bin allocator both memory pools share ([`DeviceMemoryPool`] and
//! [`PageLockedMemoryPool`]): blocks grouped in bins by size, held for reuse when given
//! back, and the counts PyCUDA's pools report.
//!
//! Sizes are grouped in bins of sixteen per power of two (4 leading bits), exactly as
//! PyCUDA's pools number them ([`bin_number`], [`alloc_size`]): a request falls in the
//! bin of its leading five bits and gets a block of the bin's largest size, so one held
//! block serves every request of that bin and wastes under 1/16 of it. On out-of-memory
//! the allocator frees what it holds and tries once more.
//!
//! [`DeviceMemoryPool`]: super::DeviceMemoryPool
//! [`PageLockedMemoryPool`]: super::PageLockedMemoryPool

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use rucuda_driver::{Error, ErrorKind, Result};

/// Bits of a size below its leading one that pick its bin (PyCUDA's
/// `leading_bits_in_bin_id`, 4 by default).
const LEADING_BITS: u32 = 4;

/// `x` shifted left by `by`, or right by `-by` when `by` is negative (bits shifted past
/// either end are lost, as in PyCUDA's `signed_left_shift`).
fn signed_left_shift(x: usize, by: i64) -> usize {
    if by < 0 {
        x.checked_shr((-by) as u32).unwrap_or(0)
    } else {
        x.checked_shl(by as u32).unwrap_or(0)
    }
}

/// The bin of a request of `bytes` bytes, as PyCUDA's pools number them
/// (`DeviceMemoryPool.bin_number`): the position of the leading one bit times 16, plus
/// the next four bits below it. Sizes 0 and 1 share bin 0; sizes below 32 have a bin
/// of their own.
///
/// ```
/// use rucuda::tools::bin_number;
/// assert_eq!(bin_number(1000), 159); // 1000 = 0b11111_01000: 9 << 4 | 0b1111
/// assert_eq!(bin_number(1024), 160);
/// ```
pub fn bin_number(bytes: usize) -> u32 {
    let log = bytes.checked_ilog2().unwrap_or(0);
    let shifted = signed_left_shift(bytes, i64::from(LEADING_BITS) - i64::from(log));
    let mantissa = shifted & ((1 << LEADING_BITS) - 1);
    (log << LEADING_BITS) | mantissa as u32
}

/// The size of the blocks of `bin` (PyCUDA's `alloc_size`): the largest request that
/// falls in it, so `bin_number(alloc_size(bin)?) == bin`. Fails for a number that is no
/// bin of any size (one [`bin_number`] never gives) or whose size overflows `usize`.
///
/// ```
/// use rucuda::tools::{alloc_size, bin_number};
/// assert_eq!(alloc_size(bin_number(1000))?, 1023);
/// assert_eq!(alloc_size(bin_number(1024))?, 1087);
/// assert!(alloc_size(1 << 20).is_err());
/// # Ok::<(), rucuda::driver::Error>(())
/// ```
pub fn alloc_size(bin: u32) -> Result<usize> {
    let exponent = bin >> LEADING_BITS;
    let mantissa = (bin & ((1 << LEADING_BITS) - 1)) as usize;
    let not_a_bin = || Error::InvalidArgument(format!("{bin} is not a memory pool bin number"));
    if exponent >= usize::BITS {
        return Err(not_a_bin());
    }
    let by = i64::from(exponent) - i64::from(LEADING_BITS);
    let ones = signed_left_shift(1, by).saturating_sub(1);
    let head = signed_left_shift((1 << LEADING_BITS) | mantissa, by);
    let size = head | ones;
    // A bin below 32 bytes with mantissa bits its exponent cannot hold, or one whose
    // head bits were shifted out, maps to another bin.
    if bin_number(size) != bin {
        return Err(not_a_bin());
    }
    Ok(size)
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
        let bin = bin_number(bytes);
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
                let size = alloc_size(bin)?;
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
            .fetch_sub(alloc_size(taken.bin).unwrap_or(0), Ordering::Relaxed);
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

        /// The bin of a request of `bytes` bytes (PyCUDA's `bin_number`); see
        /// [`bin_number`](crate::tools::bin_number).
        pub fn bin_number(&self, bytes: usize) -> u32 {
            crate::tools::bin_number(bytes)
        }

        /// The size of the blocks of `bin` (PyCUDA's `alloc_size`): what a request
        /// in that bin gets from the driver; see [`alloc_size`](crate::tools::alloc_size).
        pub fn alloc_size(&self, bin: u32) -> rucuda_driver::Result<usize> {
            crate::tools::alloc_size(bin)
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

    /// PyCUDA's `memory_pool::bin_number` and `alloc_size` (mempool.hpp), transcribed
    /// with 128-bit integers so no shift overflows: the reference the fast versions
    /// must match.
    fn pycuda_bin(size: u128) -> u32 {
        let l = if size == 0 {
            0
        } else {
            127 - size.leading_zeros()
        } as i64;
        let by = l - 4;
        let shifted = if by < 0 { size << -by } else { size >> by };
        assert!(size == 0 || shifted & 16 != 0, "bitlog2 fault");
        ((l as u32) << 4) | (shifted & 15) as u32
    }

    fn pycuda_alloc_size(bin: u32) -> u128 {
        let (e, m) = (i64::from(bin >> 4), u128::from(bin & 15));
        let sh = |x: u128| {
            if e - 4 < 0 {
                x >> (4 - e)
            } else {
                x << (e - 4)
            }
        };
        let ones = sh(1).saturating_sub(1);
        let head = sh(16 | m);
        assert_eq!(ones & head, 0, "bit-counting fault");
        head | ones
    }

    #[test]
    fn bins_match_pycuda_numbering() {
        let mut sizes: Vec<usize> = (0..300).collect();
        for shift in 5..usize::BITS {
            let p = 1usize << shift;
            sizes.extend([p - 1, p, p + 1, p + p / 3, p | (p - 1)]);
        }
        sizes.extend([1000, 4096, 123_456_789, usize::MAX]);
        for &size in &sizes {
            let bin = bin_number(size);
            assert_eq!(bin, pycuda_bin(size as u128), "bin_number({size})");
            let got = alloc_size(bin).unwrap();
            assert_eq!(got as u128, pycuda_alloc_size(bin), "alloc_size({bin})");
            assert!(got >= size.max(1), "{size} -> {got}");
            assert!(
                got - size.max(1) <= size / 16,
                "{size} -> {got}: a loose bin"
            );
            assert_eq!(bin_number(got), bin, "alloc_size is in its bin");
        }
        // Known values (PyCUDA: DeviceMemoryPool().bin_number(1000) == 159, ...).
        assert_eq!((bin_number(0), bin_number(1), bin_number(2)), (0, 0, 16));
        assert_eq!((bin_number(1000), alloc_size(159).unwrap()), (159, 1023));
        assert_eq!((bin_number(1024), alloc_size(160).unwrap()), (160, 1087));
        assert_eq!(alloc_size(0).unwrap(), 1);
    }

    #[test]
    fn bins_are_ordered_and_tight() {
        // Every valid bin: its size is above the previous bin's and one past the
        // previous bin's size falls in it.
        let mut prev: Option<usize> = None;
        for bin in 0..(usize::BITS << 4) {
            let Ok(size) = alloc_size(bin) else { continue };
            if let Some(p) = prev {
                assert!(size > p, "bin {bin}: {size} <= {p}");
                assert_eq!(bin_number(p + 1), bin, "size {}", p + 1);
            }
            prev = Some(size);
        }
        assert_eq!(prev, Some(usize::MAX));
    }

    #[test]
    fn numbers_that_are_no_bin_are_refused() {
        // Bin 1 would be 1 byte with mantissa 1: no size gives it; 4 << 4 | 15 is
        // 0b11111 = 31 (a valid bin 79); 2 << 4 | 1 is no bin (4 bytes is bin 32).
        for bad in [1u32, 5, 15, 17, (2 << 4) | 1, usize::BITS << 4, u32::MAX] {
            let e = alloc_size(bad).unwrap_err();
            assert!(e.to_string().contains("bin number"), "{bad}: {e}");
        }
        assert_eq!(alloc_size((4 << 4) | 15).unwrap(), 31);
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
        let size = alloc_size(a.bin).unwrap();
        assert_eq!((bins.active_blocks(), bins.active_bytes()), (1, 1000));
        assert_eq!(bins.managed_bytes(), size);
        bins.give_back(a, 1000).unwrap();
        assert_eq!((bins.active_blocks(), bins.held_blocks()), (0, 1));
        // The same bin reuses the block; another bin gets a new one.
        let b = bins.allocate(size).unwrap();
        assert_eq!(b.block, 1);
        let c = bins.allocate(size + 1).unwrap();
        assert_eq!(c.block, 2);
        assert_eq!(bins.managed_bytes(), size + alloc_size(c.bin).unwrap());
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
