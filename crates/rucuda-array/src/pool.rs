//! Keeping stream-ordered scratch memory mapped between calls.
//!
//! Reductions and scans allocate small stream-ordered buffers on every call (the result,
//! the block partials, the look-back status words). The driver's pools default to a
//! release threshold of 0: at every stream, event or context synchronisation, all the
//! freed memory a pool holds goes back to the device, so the next call's
//! `cuMemAllocAsync` has to create and map a fresh chunk (tens of microseconds of host
//! time, during which the stream sits idle). A call such as `x.sum()?.to_scalar()?`
//! synchronises every time, so it paid that on every call.
//!
//! Like the caching allocators of CuPy and PyTorch, rucuda-array therefore keeps freed
//! memory in the pool: the first rucuda-array kernel loaded in a context (every one is
//! loaded through `compile::load_kernel_list`) raises the device's current pool's release
//! threshold from the driver's default 0 to `u64::MAX` (once per context; a threshold
//! someone already set is left alone). To give memory back, call
//! `MemPool::current(ctx)?.trim_to(0)` or set the threshold back afterwards. (The
//! histogram loaded its kernels on its own and missed this: on an H200, 2026-11-28, the
//! allocation of its counts took about 28 µs of host time per call, the stream idle,
//! beside a 259 µs kernel.)

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use rucuda_driver::{Context, MemPool};

/// Raises the current pool's release threshold from 0 to `u64::MAX`, once per context.
/// Best effort: devices without pools, or driver errors, leave everything as it was.
pub(crate) fn retain_freed_memory(ctx: &Context) {
    static DONE: OnceLock<Mutex<HashSet<u64>>> = OnceLock::new();
    let done = DONE.get_or_init(|| Mutex::new(HashSet::new()));
    let mut done = done.lock().unwrap_or_else(|p| p.into_inner());
    if !done.insert(ctx.id()) || !ctx.supports_memory_pools() {
        return;
    }
    if let Ok(pool) = MemPool::current(ctx) {
        if matches!(pool.release_threshold(), Ok(0)) {
            // Ignored on failure: the pool then behaves as before, only slower.
            let _ = pool.set_release_threshold(u64::MAX);
        }
    }
}
