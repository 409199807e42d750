//! Occupancy: how many blocks of a kernel fit on one multiprocessor, which block size
//! keeps the GPU busiest, and how much dynamic shared memory a block may use.
//!
//! The driver's calculator (`cuOccupancy*`) sees the kernel's registers, static shared
//! memory and the device's limits. [`Occupancy`] summarises one configuration the way
//! PyCUDA's `tools.OccupancyRecord` does (blocks, warps and the fraction of the
//! multiprocessor's warp slots in use); the `rucuda` facade builds `OccupancyRecord` on it.
//!
//! ```no_run
//! # use rucuda_driver::*;
//! # let ctx = Device::get(0)?.primary_context()?;
//! # let kernel = Module::load_data(&ctx, b"")?.function("k")?;
//! let occ = kernel.occupancy(256, 0)?;
//! println!(
//!     "{} blocks/SM, {} of {} warps: {:.0}%",
//!     occ.active_blocks_per_multiprocessor,
//!     occ.active_warps_per_multiprocessor,
//!     occ.max_warps_per_multiprocessor,
//!     100.0 * occ.fraction()
//! );
//! let best = kernel.suggested_block_size(0, 0, OccupancyFlags::DEFAULT)?;
//! println!("use {} threads per block, at least {} blocks", best.block_size, best.min_grid_size);
//! # Ok::<(), Error>(())
//! ```

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::Mutex;

use crate::device::attribute::DeviceAttribute;
use crate::error::{call, Error, Result};
use crate::kernels::function::{Function, FunctionAttribute};

bitflags::bitflags! {
    /// Flags of the occupancy calculator (`CUoccupancy_flags`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct OccupancyFlags: u32 {
        /// The default calculation.
        const DEFAULT = 0;
        /// Assume global caching is on and cannot be turned off to gain occupancy
        /// (`CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE`).
        const DISABLE_CACHING_OVERRIDE = 1;
    }
}

/// One launch configuration's occupancy of a multiprocessor (see [`Function::occupancy`]
/// and [`Occupancy::from_counts`] for examples).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Occupancy {
    /// Threads per block.
    pub block_size: u32,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared_mem_bytes: usize,
    /// Blocks resident on one multiprocessor at a time.
    pub active_blocks_per_multiprocessor: u32,
    /// Warps resident on one multiprocessor: blocks × warps per block.
    pub active_warps_per_multiprocessor: u32,
    /// The multiprocessor's warp slots: max threads per multiprocessor / warp size.
    pub max_warps_per_multiprocessor: u32,
    /// Multiprocessors on the device.
    pub multiprocessor_count: u32,
}

impl Occupancy {
    /// Builds the summary from the calculator's block count and the device's limits.
    ///
    /// ```
    /// // 256-thread blocks, 6 resident, on a device with 2048 threads per SM and 132 SMs.
    /// let occ = rucuda_driver::Occupancy::from_counts(256, 0, 6, 32, 2048, 132);
    /// assert_eq!(occ.active_warps_per_multiprocessor, 48);
    /// assert_eq!(occ.max_warps_per_multiprocessor, 64);
    /// assert_eq!(occ.fraction(), 0.75);
    /// assert_eq!(occ.max_resident_blocks(), 792);
    /// ```
    pub fn from_counts(
        block_size: u32,
        dynamic_shared_mem_bytes: usize,
        active_blocks_per_multiprocessor: u32,
        warp_size: u32,
        max_threads_per_multiprocessor: u32,
        multiprocessor_count: u32,
    ) -> Occupancy {
        let warp_size = warp_size.max(1);
        let warps_per_block = block_size.div_ceil(warp_size);
        Occupancy {
            block_size,
            dynamic_shared_mem_bytes,
            active_blocks_per_multiprocessor,
            active_warps_per_multiprocessor: active_blocks_per_multiprocessor
                .saturating_mul(warps_per_block),
            max_warps_per_multiprocessor: max_threads_per_multiprocessor / warp_size,
            multiprocessor_count,
        }
    }

    /// Active warps / warp slots, in `[0, 1]` (PyCUDA's `OccupancyRecord.occupancy`).
    pub fn fraction(&self) -> f64 {
        if self.max_warps_per_multiprocessor == 0 {
            return 0.0;
        }
        self.active_warps_per_multiprocessor as f64 / self.max_warps_per_multiprocessor as f64
    }

    /// Active threads on one multiprocessor: blocks × block size.
    pub fn active_threads_per_multiprocessor(&self) -> u32 {
        self.active_blocks_per_multiprocessor
            .saturating_mul(self.block_size)
    }

    /// Blocks resident on the whole device at once: the largest grid a cooperative
    /// launch ([`Function::launch_cooperative`]) of this configuration accepts.
    pub fn max_resident_blocks(&self) -> u32 {
        self.active_blocks_per_multiprocessor
            .saturating_mul(self.multiprocessor_count)
    }
}

/// A block size the calculator suggests, with the smallest grid that fills the device
/// at that size.
///
/// ```no_run
/// # use rucuda_driver::*;
/// # let ctx = Device::get(0)?.primary_context()?;
/// # let kernel = Module::load_data(&ctx, b"")?.function("k")?;
/// let SuggestedBlockSize { block_size, min_grid_size } =
///     kernel.suggested_block_size(0, 0, OccupancyFlags::DEFAULT)?;
/// let cfg = LaunchConfig::linear(min_grid_size, block_size);
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SuggestedBlockSize {
    /// Threads per block reaching the highest occupancy.
    pub block_size: u32,
    /// Blocks needed to reach that occupancy on every multiprocessor.
    pub min_grid_size: u32,
}

fn to_c_int(v: u32, what: &str) -> Result<c_int> {
    c_int::try_from(v).map_err(|_| Error::invalid(format!("{what} {v} does not fit a C int")))
}

impl Function {
    /// Blocks of `block_size` threads using `dynamic_shared_mem_bytes` each that fit on
    /// one multiprocessor at once (`cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags`).
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// # let kernel = Module::load_data(&ctx, b"")?.function("k")?;
    /// let blocks = kernel.max_active_blocks_per_multiprocessor(256, 0, OccupancyFlags::DEFAULT)?;
    /// # Ok::<(), Error>(())
    /// ```
    pub fn max_active_blocks_per_multiprocessor(
        &self,
        block_size: u32,
        dynamic_shared_mem_bytes: usize,
        flags: OccupancyFlags,
    ) -> Result<u32> {
        let block = to_c_int(block_size, "block size")?;
        self.context().bind()?;
        let mut n: c_int = 0;
        // SAFETY: writes one int; the function is alive and its context current.
        unsafe {
            call!(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                &mut n,
                self.raw(),
                block,
                dynamic_shared_mem_bytes,
                flags.bits()
            ))?
        };
        Ok(n.max(0) as u32)
    }

    /// The [`Occupancy`] of launching with `block_size` threads and
    /// `dynamic_shared_mem_bytes` of dynamic shared memory per block.
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// # let kernel = Module::load_data(&ctx, b"")?.function("k")?;
    /// let occ = kernel.occupancy(128, 16 * 1024)?;
    /// assert!(occ.fraction() <= 1.0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn occupancy(&self, block_size: u32, dynamic_shared_mem_bytes: usize) -> Result<Occupancy> {
        let blocks = self.max_active_blocks_per_multiprocessor(
            block_size,
            dynamic_shared_mem_bytes,
            OccupancyFlags::DEFAULT,
        )?;
        let dev = self.context().device();
        let attr = |a| dev.attribute(a).map(|v| v.max(0) as u32);
        Ok(Occupancy::from_counts(
            block_size,
            dynamic_shared_mem_bytes,
            blocks,
            attr(DeviceAttribute::WarpSize)?,
            attr(DeviceAttribute::MaxThreadsPerMultiprocessor)?,
            attr(DeviceAttribute::MultiprocessorCount)?,
        ))
    }

    /// The block size with the highest occupancy when every block uses
    /// `dynamic_shared_mem_bytes` (`cuOccupancyMaxPotentialBlockSizeWithFlags`).
    /// `block_size_limit` caps the answer; 0 means the kernel's own maximum.
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// # let kernel = Module::load_data(&ctx, b"")?.function("k")?;
    /// let s = kernel.suggested_block_size(0, 0, OccupancyFlags::DEFAULT)?;
    /// let cfg = LaunchConfig::linear(s.min_grid_size, s.block_size);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn suggested_block_size(
        &self,
        dynamic_shared_mem_bytes: usize,
        block_size_limit: u32,
        flags: OccupancyFlags,
    ) -> Result<SuggestedBlockSize> {
        let limit = to_c_int(block_size_limit, "block size limit")?;
        self.context().bind()?;
        let (mut grid, mut block): (c_int, c_int) = (0, 0);
        // SAFETY: writes two ints; no callback is passed, so the fixed size is used.
        unsafe {
            call!(cuOccupancyMaxPotentialBlockSizeWithFlags(
                &mut grid,
                &mut block,
                self.raw(),
                None,
                dynamic_shared_mem_bytes,
                limit,
                flags.bits()
            ))?
        };
        Ok(SuggestedBlockSize {
            block_size: block.max(0) as u32,
            min_grid_size: grid.max(0) as u32,
        })
    }

    /// Like [`Function::suggested_block_size`], with the dynamic shared memory of a
    /// block given by `shared_mem_for_block(block_size)`, evaluated by the driver for
    /// each block size it tries.
    ///
    /// The driver's callback carries no user data, so the closure is reached through a
    /// process-wide slot: calls are serialised by a lock (they are short). The closure
    /// may run on a driver thread (hence `Sync`); it must not call CUDA, nor this
    /// function (such a nested call returns an error). If it panics, the panic is caught
    /// and this returns an error.
    ///
    /// [`Function::suggested_block_size_by_search`] answers the same question in Rust,
    /// without a callback.
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// # let kernel = Module::load_data(&ctx, b"")?.function("k")?;
    /// // One float of shared memory per thread.
    /// let s = kernel.suggested_block_size_with(|threads| threads as usize * 4, 0, OccupancyFlags::DEFAULT)?;
    /// # Ok::<(), Error>(())
    /// ```
    pub fn suggested_block_size_with<F>(
        &self,
        shared_mem_for_block: F,
        block_size_limit: u32,
        flags: OccupancyFlags,
    ) -> Result<SuggestedBlockSize>
    where
        F: Fn(u32) -> usize + Sync,
    {
        let limit = to_c_int(block_size_limit, "block size limit")?;
        if IN_CLOSURE.try_with(Cell::get).unwrap_or(false) {
            return Err(Error::invalid(
                "suggested_block_size_with called from inside a shared-memory closure",
            ));
        }
        self.context().bind()?;
        let slot = CallbackSlot {
            f: &shared_mem_for_block,
            panicked: AtomicBool::new(false),
        };
        let (mut grid, mut block): (c_int, c_int) = (0, 0);
        let result = {
            // A poisoned lock only means an earlier holder panicked; the slot it guards is
            // cleared below on every path, so the state is still consistent.
            let _guard = CALLBACK_LOCK
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            CALLBACK_SLOT.store(
                (&slot as *const CallbackSlot<'_>).cast_mut().cast(),
                Ordering::Release,
            );
            // SAFETY: writes two ints. The trampoline reads CALLBACK_SLOT, which points
            // at `slot` (alive until the end of this function) for exactly the duration
            // of this call: the lock keeps other callers from replacing it, and it is
            // cleared before the lock is released.
            let r = unsafe {
                call!(cuOccupancyMaxPotentialBlockSizeWithFlags(
                    &mut grid,
                    &mut block,
                    self.raw(),
                    Some(shared_mem_trampoline),
                    0,
                    limit,
                    flags.bits()
                ))
            };
            CALLBACK_SLOT.store(std::ptr::null_mut(), Ordering::Release);
            r
        };
        if slot.panicked.load(Ordering::Acquire) {
            return Err(Error::invalid(format!(
                "the shared-memory closure passed to suggested_block_size_with for kernel `{}` panicked",
                self.name()
            )));
        }
        result?;
        Ok(SuggestedBlockSize {
            block_size: block.max(0) as u32,
            min_grid_size: grid.max(0) as u32,
        })
    }

    /// The block size with the highest occupancy when a block of `n` threads uses
    /// `shared_mem_for_block(n)` bytes of dynamic shared memory, found in Rust: every
    /// multiple of the warp size up to `block_size_limit` (0: the kernel's maximum) is
    /// asked of [`Function::max_active_blocks_per_multiprocessor`], and the size with the
    /// most active threads per multiprocessor wins (the largest on ties, as the driver
    /// does). Sizes whose shared memory exceeds what the kernel may use are skipped.
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// # let kernel = Module::load_data(&ctx, b"")?.function("k")?;
    /// let s = kernel.suggested_block_size_by_search(|threads| threads as usize * 8, 512, OccupancyFlags::DEFAULT)?;
    /// assert!(s.block_size <= 512);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn suggested_block_size_by_search(
        &self,
        shared_mem_for_block: impl Fn(u32) -> usize,
        block_size_limit: u32,
        flags: OccupancyFlags,
    ) -> Result<SuggestedBlockSize> {
        let dev = self.context().device();
        let warp = dev.attribute(DeviceAttribute::WarpSize)?.max(1) as u32;
        let sms = dev.attribute(DeviceAttribute::MultiprocessorCount)?.max(0) as u32;
        let kernel_max = self
            .attribute(FunctionAttribute::MaxThreadsPerBlock)?
            .max(0) as u32;
        let smem_max = self
            .attribute(FunctionAttribute::MaxDynamicSharedSizeBytes)?
            .max(0) as usize;
        let limit = if block_size_limit == 0 {
            kernel_max
        } else {
            block_size_limit.min(kernel_max)
        };
        let mut best: Option<(u32, u32, u32)> = None; // (threads per SM, block size, blocks)
        let mut size = (limit / warp) * warp;
        while size >= warp {
            let smem = shared_mem_for_block(size);
            if smem <= smem_max {
                let blocks = self.max_active_blocks_per_multiprocessor(size, smem, flags)?;
                let threads = blocks.saturating_mul(size);
                if blocks > 0 && best.is_none_or(|(t, _, _)| threads > t) {
                    best = Some((threads, size, blocks));
                }
            }
            size -= warp;
        }
        let (_, block_size, blocks) = best.ok_or_else(|| {
            Error::invalid(format!(
                "no block size up to {limit} lets kernel `{}` run with the shared memory asked \
                 (it may use at most {smem_max} bytes of dynamic shared memory)",
                self.name()
            ))
        })?;
        Ok(SuggestedBlockSize {
            block_size,
            min_grid_size: blocks.saturating_mul(sms),
        })
    }

    /// The most dynamic shared memory per block that still lets `blocks_per_multiprocessor`
    /// blocks of `block_size` threads reside on one multiprocessor
    /// (`cuOccupancyAvailableDynamicSMemPerBlock`).
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// # let kernel = Module::load_data(&ctx, b"")?.function("k")?;
    /// let bytes = kernel.available_dynamic_shared_memory_per_block(4, 256)?;
    /// # Ok::<(), Error>(())
    /// ```
    pub fn available_dynamic_shared_memory_per_block(
        &self,
        blocks_per_multiprocessor: u32,
        block_size: u32,
    ) -> Result<usize> {
        let blocks = to_c_int(blocks_per_multiprocessor, "block count")?;
        let block = to_c_int(block_size, "block size")?;
        self.context().bind()?;
        let mut bytes = 0usize;
        // SAFETY: writes one size_t; the function is alive.
        unsafe {
            call!(cuOccupancyAvailableDynamicSMemPerBlock(
                &mut bytes,
                self.raw(),
                blocks,
                block
            ))?
        };
        Ok(bytes)
    }
}

/// What the trampoline reaches: the caller's closure and whether it panicked.
struct CallbackSlot<'f> {
    f: &'f (dyn Fn(u32) -> usize + Sync),
    panicked: AtomicBool,
}

/// Serialises [`Function::suggested_block_size_with`] calls, which share one slot.
static CALLBACK_LOCK: Mutex<()> = Mutex::new(());
/// The `CallbackSlot` of the call in progress, or null.
static CALLBACK_SLOT: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

thread_local! {
    /// True on the thread running a shared-memory closure, whichever thread the driver
    /// calls it on: a nested `suggested_block_size_with` from there is refused instead of
    /// waiting forever on the lock its outer call holds.
    static IN_CLOSURE: Cell<bool> = const { Cell::new(false) };
}

/// Shared memory reported for a block size the closure could not answer: no block fits.
const NO_FIT_BYTES: usize = u32::MAX as usize;

/// The `CUoccupancyB2DSize` callback: forwards to the closure in `CALLBACK_SLOT`.
unsafe extern "C" fn shared_mem_trampoline(block_size: c_int) -> usize {
    let p = CALLBACK_SLOT.load(Ordering::Acquire) as *const CallbackSlot<'_>;
    if p.is_null() {
        return NO_FIT_BYTES;
    }
    // SAFETY: a non-null slot pointer is only published by suggested_block_size_with
    // while its `CallbackSlot` is alive and its driver call (the only caller of this
    // function) is running; it is cleared before that slot goes out of scope.
    let slot = unsafe { &*p };
    let f = slot.f;
    let _ = IN_CLOSURE.try_with(|c| c.set(true));
    // A panic must not unwind into the driver.
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(block_size.max(0) as u32)));
    let _ = IN_CLOSURE.try_with(|c| c.set(false));
    match result {
        Ok(bytes) => bytes,
        Err(_) => {
            slot.panicked.store(true, Ordering::Release);
            NO_FIT_BYTES
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_summary_arithmetic() {
        // 96-thread blocks use 3 warps each; 10 of them use 30 of 64 warp slots.
        let o = Occupancy::from_counts(96, 1024, 10, 32, 2048, 100);
        assert_eq!(o.active_warps_per_multiprocessor, 30);
        assert_eq!(o.max_warps_per_multiprocessor, 64);
        assert!((o.fraction() - 30.0 / 64.0).abs() < 1e-12);
        assert_eq!(o.active_threads_per_multiprocessor(), 960);
        assert_eq!(o.max_resident_blocks(), 1000);
        // A partial warp still takes a whole warp slot.
        let o = Occupancy::from_counts(33, 0, 1, 32, 2048, 1);
        assert_eq!(o.active_warps_per_multiprocessor, 2);
        // Degenerate device data does not divide by zero.
        let o = Occupancy::from_counts(32, 0, 1, 0, 0, 0);
        assert_eq!(o.fraction(), 0.0);
        assert_eq!(o.max_resident_blocks(), 0);
    }

    #[test]
    fn trampoline_without_a_slot_reports_no_fit() {
        // The lock keeps the test beside this one from publishing its slot meanwhile
        // (without it, a parallel run saw that slot's closure answer 385 here).
        let _guard = CALLBACK_LOCK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // SAFETY: with no slot published the trampoline touches nothing.
        assert_eq!(unsafe { shared_mem_trampoline(128) }, NO_FIT_BYTES);
    }

    #[test]
    fn trampoline_forwards_to_the_published_closure_and_catches_panics() {
        let _guard = CALLBACK_LOCK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The closure sees itself marked as running (so nested calls are refused).
        let f = |n: u32| n as usize * 3 + usize::from(IN_CLOSURE.with(Cell::get));
        let slot = CallbackSlot {
            f: &f,
            panicked: AtomicBool::new(false),
        };
        CALLBACK_SLOT.store(
            (&slot as *const CallbackSlot<'_>).cast_mut().cast(),
            Ordering::Release,
        );
        // SAFETY: the slot is alive and published, as during a driver call.
        let got = unsafe { shared_mem_trampoline(64) };
        let bad = |_n: u32| -> usize { panic!("closure panics") };
        let bad_slot = CallbackSlot {
            f: &bad,
            panicked: AtomicBool::new(false),
        };
        CALLBACK_SLOT.store(
            (&bad_slot as *const CallbackSlot<'_>).cast_mut().cast(),
            Ordering::Release,
        );
        // SAFETY: as above.
        let got_bad = unsafe { shared_mem_trampoline(64) };
        CALLBACK_SLOT.store(std::ptr::null_mut(), Ordering::Release);
        assert_eq!(got, 193);
        assert!(!IN_CLOSURE.with(Cell::get), "the mark outlived the closure");
        assert_eq!(got_bad, NO_FIT_BYTES);
        assert!(bad_slot.panicked.load(Ordering::Acquire));
        assert!(!slot.panicked.load(Ordering::Acquire));
    }
}
