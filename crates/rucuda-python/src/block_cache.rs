//! Freed small stream-ordered blocks kept for reuse (what `mem_alloc_async` hands out
//! first): a GPUArray operator's result then costs no driver call to allocate or free.
//!
//! The driver's pool already reuses memory freed on the legacy stream, but each
//! `cuMemAllocAsync`/`cuMemFreeAsync` pair costs about 0.9 µs of host time, a sixth of
//! `a + b` on 1000 elements. CuPy keeps its own pool for the same reason; ours is small
//! and narrow:
//!
//! - only blocks of [`MAX_BLOCK`] bytes or less, in power-of-two classes from
//!   [`MIN_CLASS`], at most [`MAX_CACHED`] bytes per context (the rest is freed at once);
//! - a block is cached in place of `cuMemFreeAsync` on the legacy stream, and handed out
//!   in place of `cuMemAllocAsync` on the legacy stream. Both orders are the same: the
//!   pool also reuses a block freed on a stream for an allocation on that stream without
//!   waiting, so work queued on the legacy stream (and on blocking streams, which it
//!   orders) after the allocation runs after every earlier use of the block, and work on
//!   a non-blocking stream must be ordered by the caller in both cases (PyCUDA's
//!   contract);
//! - entries hold their context weakly: a context that goes takes its blocks with it;
//! - [`flush`] gives a context's blocks back to the driver: when an allocation runs out
//!   of memory (then retried once), when the context is detached, and from
//!   `pycuda.tools.clear_context_caches`.

use std::sync::{Mutex, PoisonError};

use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::{Context, WeakContext};

use crate::errors::cu;

/// Largest block kept.
pub const MAX_BLOCK: usize = 64 << 10;
/// Smallest class: smaller requests take a block of this size.
pub const MIN_CLASS: usize = 512;
/// Most bytes kept per context.
pub const MAX_CACHED: usize = 8 << 20;

/// The bytes a request of `bytes` allocates when it may be cached: its class (1 byte
/// takes 512, 4000 take 4096, 64 KiB take 64 KiB), or None for a block too large to cache.
pub fn class_of(bytes: usize) -> Option<usize> {
    (bytes <= MAX_BLOCK).then(|| bytes.max(MIN_CLASS).next_power_of_two())
}

/// One context's blocks.
struct Entry {
    ctx: WeakContext,
    /// (class bytes, free blocks of that class).
    classes: Vec<(usize, Vec<CUdeviceptr>)>,
    bytes: usize,
}

static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn entries() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    CACHE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A cached block of `class` bytes of `ctx`, taken out of the cache.
pub fn take(ctx: &Context, class: usize) -> Option<CUdeviceptr> {
    let mut entries = entries();
    let e = entries.iter_mut().find(|e| e.ctx.id() == ctx.id())?;
    let (_, blocks) = e.classes.iter_mut().find(|(c, _)| *c == class)?;
    let ptr = blocks.pop()?;
    e.bytes -= class;
    Some(ptr)
}

/// Keeps `ptr`, a stream-ordered block of `class` bytes of `ctx` that nothing uses once
/// the work queued on the legacy stream has run; false when the cache is full (the
/// caller frees it).
pub fn give(ctx: &Context, class: usize, ptr: CUdeviceptr) -> bool {
    let mut entries = entries();
    let i = match entries.iter().position(|e| e.ctx.id() == ctx.id()) {
        Some(i) => i,
        None => {
            // Contexts that are gone took their memory with them (ids are never reused,
            // so their entries only take room): dropped when a new context comes.
            entries.retain(|e| e.ctx.upgrade().is_some());
            entries.push(Entry {
                ctx: ctx.downgrade(),
                classes: Vec::new(),
                bytes: 0,
            });
            entries.len() - 1
        }
    };
    let e = &mut entries[i];
    if e.bytes + class > MAX_CACHED {
        return false;
    }
    e.bytes += class;
    match e.classes.iter_mut().find(|(c, _)| *c == class) {
        Some((_, blocks)) => blocks.push(ptr),
        None => e.classes.push((class, vec![ptr])),
    }
    true
}

/// Frees `ctx`'s cached blocks (stream-ordered, on the legacy stream); true when there
/// were any.
pub fn flush(ctx: &Context) -> bool {
    let entry = {
        let mut entries = entries();
        match entries.iter().position(|e| e.ctx.id() == ctx.id()) {
            Some(i) => entries.swap_remove(i),
            None => return false,
        }
    };
    let any = entry.bytes > 0;
    crate::context::with_pushed(ctx, || {
        for ptr in entry.classes.into_iter().flat_map(|(_, blocks)| blocks) {
            // SAFETY: each block came from cuMemAllocAsync in `ctx` and was taken out of
            // the cache above, so it is freed once; the free is ordered on the legacy
            // stream after the work that used it.
            let _ = unsafe { cu!(cuMemFreeAsync(ptr, std::ptr::null_mut())) };
        }
    });
    any
}

/// Frees the cached blocks of every live context.
pub fn flush_all() {
    let contexts: Vec<Context> = entries().iter().filter_map(|e| e.ctx.upgrade()).collect();
    for ctx in contexts {
        flush(&ctx);
    }
}

/// `attempt`, and when it fails for want of memory and `flush` gave memory back (true),
/// `attempt` once more; any other failure, or a flush that freed nothing, is returned as
/// it is.
pub fn retry_after_flush<T>(
    mut attempt: impl FnMut() -> rucuda_driver::Result<T>,
    flush: impl FnOnce() -> rucuda_driver::Result<bool>,
) -> rucuda_driver::Result<T> {
    match attempt() {
        Err(e) if e.kind() == rucuda_driver::ErrorKind::Memory => {
            if flush()? {
                attempt()
            } else {
                Err(e)
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rucuda_driver::sys::CUresult;
    use rucuda_driver::ErrorKind;
    use std::cell::Cell;

    fn fails(code: CUresult) -> rucuda_driver::Result<u32> {
        rucuda_driver::check(code, "cuMemAllocAsync").map(|()| 0)
    }

    /// Runs retry_after_flush over the attempt results `results` (in order) and a flush
    /// answering `freed`: (result, attempts made, flushes made).
    fn run(results: &[CUresult], freed: bool) -> (rucuda_driver::Result<u32>, usize, usize) {
        let attempts = Cell::new(0);
        let flushes = Cell::new(0);
        let r = retry_after_flush(
            || {
                let i = attempts.get();
                attempts.set(i + 1);
                match results[i] {
                    CUresult::CUDA_SUCCESS => Ok(7),
                    code => fails(code),
                }
            },
            || {
                flushes.set(flushes.get() + 1);
                Ok(freed)
            },
        );
        (r, attempts.get(), flushes.get())
    }

    #[test]
    fn out_of_memory_flushes_and_tries_once_more() {
        let oom = CUresult::CUDA_ERROR_OUT_OF_MEMORY;
        let (r, a, f) = run(&[oom, CUresult::CUDA_SUCCESS], true);
        assert_eq!((r.unwrap(), a, f), (7, 2, 1));
        // Still out of memory after the flush: the second failure is returned.
        let (r, a, f) = run(&[oom, oom], true);
        assert_eq!(r.unwrap_err().kind(), ErrorKind::Memory);
        assert_eq!((a, f), (2, 1));
        // Nothing cached: no second attempt.
        let (r, a, f) = run(&[oom], false);
        assert_eq!(r.unwrap_err().kind(), ErrorKind::Memory);
        assert_eq!((a, f), (1, 1));
    }

    #[test]
    fn other_outcomes_never_flush() {
        let (r, a, f) = run(&[CUresult::CUDA_SUCCESS], true);
        assert_eq!((r.unwrap(), a, f), (7, 1, 0));
        let (r, a, f) = run(&[CUresult::CUDA_ERROR_INVALID_VALUE], true);
        assert_ne!(r.unwrap_err().kind(), ErrorKind::Memory);
        assert_eq!((a, f), (1, 0));
    }

    #[test]
    fn classes_are_powers_of_two_up_to_the_largest_block() {
        assert_eq!(class_of(0), Some(MIN_CLASS));
        assert_eq!(class_of(513), Some(1024));
        assert_eq!(class_of(MAX_BLOCK), Some(MAX_BLOCK));
        assert_eq!(class_of(MAX_BLOCK + 1), None);
        for b in [1, 100, 4000, 40_000] {
            let c = class_of(b).unwrap();
            assert!(c >= b && c.is_power_of_two() && c < 2 * b.max(MIN_CLASS));
        }
    }
}
