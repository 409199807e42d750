//! Fast synchronous copies between pageable host memory and the device.
//!
//! The driver copies pageable memory through its own small staging buffers, one piece at
//! a time, at 5–12 GB/s. We stage instead through reusable page-locked buffers per
//! context (by default two of 16 MiB; `staging_config.rs` holds the knobs) with double
//! buffering: while the DMA engine moves chunk *i*
//! through one buffer, host threads copy chunk *i + 1* into (or chunk *i − 1* out of)
//! the other, and an event per buffer says when it may be reused. The host-side copies of
//! large chunks are split over up to eight threads (`std::thread::scope`), which also
//! spreads the page faults of a freshly allocated destination.
//!
//! Copies below [`STAGING_MIN_BYTES`], copies from or to memory CUDA already knows
//! (page-locked, registered, managed), copies while another thread holds the context's
//! staging buffers, and copies with `RUCUDA_STAGED_COPIES=0` in the environment go straight
//! through `cuMemcpyHtoD`/`cuMemcpyDtoH`.
//!
//! The DMA is queued on the legacy default stream, like `cuMemcpyHtoD`, so the copy is
//! ordered after earlier work on blocking streams exactly as the plain call is; it has
//! finished when the call returns.
//!
//! Staging buffers live as long as their context. Those of a primary context are kept
//! for the process (a retain of the primary context keeps them valid after the last
//! [`Context`] handle goes, as the CUDA runtime keeps its own); [`release_staging_buffers`]
//! frees them earlier. Code that resets a primary context behind rucuda's back
//! (`cuDevicePrimaryCtxReset`) must call [`release_staging_buffers`] first.

use std::sync::{Arc, Mutex, OnceLock, PoisonError, TryLockError, Weak};

use rucuda_driver_sys::{CUcontext, CUdevice, CUdeviceptr, CUevent};

use crate::context::{Context, ContextInner};
use crate::error::{call, Result};
use crate::memory::parallel_copy::{with_copiers, CopyJob};
use crate::memory::pointer_query::host_memory_is_known;
use crate::memory::staging_config::{staging_config, StagingConfig};

/// Copies smaller than this go straight through the driver.
pub(crate) const STAGING_MIN_BYTES: usize = 1 << 20;
/// Smallest chunk: below it the per-chunk overhead dominates.
const MIN_CHUNK: usize = 1 << 20;
/// Bytes each host thread should copy per chunk at least.
const BYTES_PER_WORKER: usize = 1 << 20;

/// How one copy is cut up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Bytes per chunk (the last may be shorter).
    pub chunk: usize,
    /// Number of chunks.
    pub chunks: usize,
    /// Host threads copying each chunk (the calling thread included).
    pub workers: usize,
}

/// Cuts `bytes` into about eight chunks of 1 MiB to `slot_bytes` (so the pipeline fills
/// quickly), each copied by one thread per MiB, at most `max_workers`.
pub(crate) fn plan(bytes: usize, slot_bytes: usize, max_workers: usize) -> Plan {
    let chunk = (bytes / 8)
        .next_multiple_of(64 << 10)
        .clamp(MIN_CHUNK.min(slot_bytes), slot_bytes)
        .max(1);
    Plan {
        chunk,
        chunks: bytes.div_ceil(chunk),
        workers: (chunk / BYTES_PER_WORKER).clamp(1, max_workers.max(1)),
    }
}

/// Whether staging is enabled (`RUCUDA_STAGED_COPIES=0` turns it off).
fn staging_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("RUCUDA_STAGED_COPIES").map_or(true, |v| v.trim() != "0"))
}

// ---------------------------------------------------------------------------------------
// The pipelines, over any staging device (the real one below; a fake in the tests).

/// The device side of a staged copy: two staging slots and ordered transfers.
pub(crate) trait StagingDevice {
    /// Number of staging slots (at least 2).
    fn slots(&self) -> usize;
    /// The host address of staging slot `slot`.
    fn slot_ptr(&mut self, slot: usize) -> *mut u8;
    /// Blocks until the transfer last queued through `slot` has finished.
    fn wait_slot(&mut self, slot: usize) -> Result<()>;
    /// Queues slot `slot`'s first `len` bytes to the device at `offset`.
    fn upload(&mut self, slot: usize, offset: usize, len: usize) -> Result<()>;
    /// Queues `len` device bytes at `offset` into slot `slot`.
    fn download(&mut self, slot: usize, offset: usize, len: usize) -> Result<()>;
}

/// Host → device: copy chunk *i* into a free slot while chunk *i − 1* is transferred.
///
/// # Safety
/// `src..src+bytes` must be readable and unchanged during the call; the device range must
/// hold `bytes`; `plan.chunk` must not exceed the slots' size.
pub(crate) unsafe fn upload_pipelined<D: StagingDevice>(
    dev: &mut D,
    src: *const u8,
    bytes: usize,
    plan: Plan,
) -> Result<()> {
    let slots = dev.slots();
    with_copiers(plan.workers, |copy| {
        for i in 0..plan.chunks {
            let (slot, offset) = (i % slots, i * plan.chunk);
            let len = plan.chunk.min(bytes - offset);
            dev.wait_slot(slot)?;
            copy(CopyJob {
                src: src as usize + offset,
                dst: dev.slot_ptr(slot) as usize,
                len,
                parties: 1,
                streaming: false,
            });
            dev.upload(slot, offset, len)?;
        }
        (0..slots).try_for_each(|slot| dev.wait_slot(slot))
    })
}

/// Device → host: transfer the next chunks while chunk *i* is copied out of its slot
/// (with non-temporal stores when `streaming`).
///
/// # Safety
/// `dst..dst+bytes` must be writable and untouched by others during the call; the device
/// range must hold `bytes`; `plan.chunk` must not exceed the slots' size.
pub(crate) unsafe fn download_pipelined<D: StagingDevice>(
    dev: &mut D,
    dst: *mut u8,
    bytes: usize,
    plan: Plan,
    streaming: bool,
) -> Result<()> {
    let chunk_len = |i: usize| plan.chunk.min(bytes - i * plan.chunk);
    let slots = dev.slots();
    with_copiers(plan.workers, |copy| {
        (0..slots).try_for_each(|slot| dev.wait_slot(slot))?;
        for i in 0..plan.chunks.min(slots) {
            dev.download(i % slots, i * plan.chunk, chunk_len(i))?;
        }
        for i in 0..plan.chunks {
            let slot = i % slots;
            dev.wait_slot(slot)?;
            copy(CopyJob {
                src: dev.slot_ptr(slot) as usize,
                dst: dst as usize + i * plan.chunk,
                len: chunk_len(i),
                parties: 1,
                streaming,
            });
            let next = i + slots;
            if next < plan.chunks {
                dev.download(slot, next * plan.chunk, chunk_len(next))?;
            }
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// The real staging buffers, one set per context.

/// Page-locked staging memory and one event per slot, in one context (raw handles: the
/// context reclaims them when it is destroyed).
struct Stager {
    host: *mut u8,
    events: Vec<CUevent>,
    slot_bytes: usize,
}

// SAFETY: raw driver handles and page-locked memory, used by one thread at a time (the
// Mutex around each stager).
unsafe impl Send for Stager {}

impl Stager {
    /// Allocates the buffers and events of `config` in the current context (`ctx` is
    /// bound).
    fn new(config: &StagingConfig) -> Result<Stager> {
        let (slots, slot_bytes) = (config.slots, config.slot_bytes);
        let mut host: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: writes one host pointer; freed in `free` or with the context.
        unsafe { call!(cuMemHostAlloc(&mut host, slots * slot_bytes, 0))? };
        let mut stager = Stager {
            host: host.cast(),
            events: vec![std::ptr::null_mut(); slots],
            slot_bytes,
        };
        for slot in 0..slots {
            let mut event: CUevent = std::ptr::null_mut();
            // SAFETY: writes one event; CU_EVENT_DISABLE_TIMING (2) makes it cheap.
            let created = unsafe { call!(cuEventCreate(&mut event, 2)) };
            if let Err(e) = created {
                // SAFETY: what was created so far belongs to the current context.
                unsafe { stager.free() };
                return Err(e);
            }
            stager.events[slot] = event;
        }
        Ok(stager)
    }

    /// Frees the buffers and events; errors are ignored (the copies already finished).
    ///
    /// # Safety
    /// The owning context must be current and alive, and no transfer may use them.
    unsafe fn free(&mut self) {
        for event in &mut self.events {
            if !event.is_null() {
                // SAFETY: created by `new` in the current context, destroyed once.
                let _ = unsafe { destroy_event(*event) };
                *event = std::ptr::null_mut();
            }
        }
        if !self.host.is_null() {
            // SAFETY: allocated by `new` in the current context, freed once.
            let _ = unsafe { free_host(self.host) };
            self.host = std::ptr::null_mut();
        }
    }
}

/// # Safety
/// `event` must be a live event of the current context, destroyed once.
unsafe fn destroy_event(event: CUevent) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(cuEventDestroy_v2(event)) }
}

/// # Safety
/// `host` must be a live `cuMemHostAlloc` allocation of the current context, freed once.
unsafe fn free_host(host: *mut u8) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(cuMemFreeHost(host.cast())) }
}

/// Retains `device`'s primary context once more.
fn retain_primary(device: CUdevice) -> Result<CUcontext> {
    let mut raw: CUcontext = std::ptr::null_mut();
    // SAFETY: writes one handle; the caller releases the retain.
    unsafe { call!(cuDevicePrimaryCtxRetain(&mut raw, device))? };
    Ok(raw)
}

/// A stager bound to a device range for one copy.
struct CudaStaging<'a> {
    stager: &'a mut Stager,
    device: CUdeviceptr,
}

impl StagingDevice for CudaStaging<'_> {
    fn slots(&self) -> usize {
        self.stager.events.len()
    }

    fn slot_ptr(&mut self, slot: usize) -> *mut u8 {
        // SAFETY: `slot` is below the number of slots, so the offset stays inside the
        // allocation of `slots * slot_bytes` bytes.
        unsafe { self.stager.host.add(slot * self.stager.slot_bytes) }
    }

    fn wait_slot(&mut self, slot: usize) -> Result<()> {
        // SAFETY: the event is alive; a never-recorded event is complete.
        unsafe { call!(cuEventSynchronize(self.stager.events[slot])) }
    }

    fn upload(&mut self, slot: usize, offset: usize, len: usize) -> Result<()> {
        let src = self.slot_ptr(slot);
        // SAFETY: `len <= slot_bytes` bytes of page-locked memory to the caller's device
        // range; the slot is not touched until its event completes. Stream 0 is the legacy
        // default stream, as for cuMemcpyHtoD.
        unsafe {
            call!(cuMemcpyHtoDAsync_v2(
                self.device + offset as u64,
                src.cast(),
                len,
                std::ptr::null_mut()
            ))?;
            call!(cuEventRecord(
                self.stager.events[slot],
                std::ptr::null_mut()
            ))
        }
    }

    fn download(&mut self, slot: usize, offset: usize, len: usize) -> Result<()> {
        let dst = self.slot_ptr(slot);
        // SAFETY: as for `upload`, in the other direction.
        unsafe {
            call!(cuMemcpyDtoHAsync_v2(
                dst.cast(),
                self.device + offset as u64,
                len,
                std::ptr::null_mut()
            ))?;
            call!(cuEventRecord(
                self.stager.events[slot],
                std::ptr::null_mut()
            ))
        }
    }
}

/// Whose staging buffers an entry holds.
enum Owner {
    /// A device's primary context, retained once more by the entry.
    Primary { device: CUdevice },
    /// A created context, alive while the weak handle is.
    Created { id: u64, alive: Weak<ContextInner> },
}

struct Entry {
    owner: Owner,
    /// `None` when allocating the buffers failed: copies then go straight through.
    stager: Arc<Mutex<Option<Stager>>>,
}

static STAGERS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn owner_matches(owner: &Owner, ctx: &Context) -> bool {
    match owner {
        Owner::Primary { device, .. } => ctx.is_primary() && *device == ctx.device().raw(),
        Owner::Created { id, .. } => !ctx.is_primary() && *id == ctx.id(),
    }
}

/// The staging buffers of `ctx` (bound), made on first use.
fn stager_for(ctx: &Context) -> Arc<Mutex<Option<Stager>>> {
    let mut entries = STAGERS.lock().unwrap_or_else(PoisonError::into_inner);
    // Created contexts that are gone took their buffers with them.
    entries.retain(|e| match &e.owner {
        Owner::Created { alive, .. } => alive.strong_count() > 0,
        Owner::Primary { .. } => true,
    });
    if let Some(e) = entries.iter().find(|e| owner_matches(&e.owner, ctx)) {
        return Arc::clone(&e.stager);
    }
    let owner = if ctx.is_primary() {
        // This retain keeps the buffers valid for the process (released by
        // `release_staging_buffers`).
        if retain_primary(ctx.device().raw()).is_err() {
            return Arc::new(Mutex::new(None));
        }
        Owner::Primary {
            device: ctx.device().raw(),
        }
    } else {
        Owner::Created {
            id: ctx.id(),
            alive: Arc::downgrade(&ctx.inner),
        }
    };
    let stager = Arc::new(Mutex::new(Stager::new(&staging_config()).ok()));
    entries.push(Entry {
        owner,
        stager: Arc::clone(&stager),
    });
    stager
}

/// Frees `ctx`'s staging buffers now (they are made again by the next large copy). Copies
/// running on other threads keep theirs until they finish.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let big = DeviceBuffer::from_slice(&ctx, &vec![0u8; 64 << 20])?;
/// release_staging_buffers(&ctx)?;
/// # Ok::<(), Error>(())
/// ```
pub fn release_staging_buffers(ctx: &Context) -> Result<()> {
    let entry = {
        let mut entries = STAGERS.lock().unwrap_or_else(PoisonError::into_inner);
        match entries.iter().position(|e| owner_matches(&e.owner, ctx)) {
            Some(i) => entries.swap_remove(i),
            None => return Ok(()),
        }
    };
    ctx.bind()?;
    let mut guard = entry.stager.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(mut stager) = guard.take() {
        // SAFETY: `ctx` (the owner) is current and alive; holding the lock means no copy
        // uses the buffers; every copy waits for its transfers before returning.
        unsafe { stager.free() };
    }
    drop(guard);
    if let Owner::Primary { device, .. } = entry.owner {
        // SAFETY: releases the retain `stager_for` made.
        unsafe { call!(cuDevicePrimaryCtxRelease_v2(device))? };
    }
    Ok(())
}

/// The stager in `slot`, made again when `config` asks for other buffers (the context is
/// bound; holding the lock means no copy uses the old ones, and every copy waited for its
/// transfers). `None` when there is none and making one fails.
fn fitted<'a>(slot: &'a mut Option<Stager>, config: &StagingConfig) -> Option<&'a mut Stager> {
    let fits = slot
        .as_ref()
        .is_some_and(|s| s.events.len() == config.slots && s.slot_bytes == config.slot_bytes);
    if !fits {
        if let Some(mut old) = slot.take() {
            // SAFETY: as above: the owning context is current and no transfer uses them.
            unsafe { old.free() };
        }
        *slot = Stager::new(config).ok();
    }
    slot.as_mut()
}

/// How a synchronous copy of `bytes` with host memory at `host` should run.
fn use_staging(bytes: usize, host: *const u8) -> bool {
    bytes >= STAGING_MIN_BYTES && staging_enabled() && !host_memory_is_known(host)
}

/// Copies `bytes` from host `src` to device `dst` synchronously, staged when that is faster.
///
/// # Safety
/// `src..src+bytes` must be readable and not written during the call; `dst..dst+bytes`
/// must be device memory reachable from `ctx`.
pub(crate) unsafe fn copy_htod(
    ctx: &Context,
    dst: CUdeviceptr,
    src: *const u8,
    bytes: usize,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    ctx.bind()?;
    if use_staging(bytes, src) {
        let stager = stager_for(ctx);
        let locked = match stager.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        if let Some(mut guard) = locked {
            let config = staging_config();
            if let Some(stager) = fitted(&mut guard, &config) {
                let mut dev = CudaStaging {
                    stager,
                    device: dst,
                };
                let plan = plan(bytes, config.slot_bytes, config.max_workers);
                // SAFETY: the caller's contract; chunks never exceed the slots' size.
                return unsafe { upload_pipelined(&mut dev, src, bytes, plan) };
            }
        }
    }
    // SAFETY: the caller's contract.
    unsafe { call!(cuMemcpyHtoD_v2(dst, src.cast(), bytes))? };
    // From pageable memory the driver returns once it holds a copy of the bytes, while
    // its DMA may still be in flight on the legacy stream, which work on non-blocking
    // streams does not wait for. Wait for it, so that a kernel launched next on any
    // stream sees the data (found by the extras tests' review).
    // SAFETY: the legacy default stream of the current context.
    unsafe { call!(cuStreamSynchronize(std::ptr::null_mut())) }
}

/// Copies `bytes` from device `src` to host `dst` synchronously, staged when faster.
///
/// # Safety
/// `dst..dst+bytes` must be writable (it may be uninitialised) and untouched by others
/// during the call; `src..src+bytes` must be device memory reachable from `ctx`.
pub(crate) unsafe fn copy_dtoh(
    ctx: &Context,
    dst: *mut u8,
    src: CUdeviceptr,
    bytes: usize,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    ctx.bind()?;
    if use_staging(bytes, dst) {
        let stager = stager_for(ctx);
        let locked = match stager.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        if let Some(mut guard) = locked {
            let config = staging_config();
            if let Some(stager) = fitted(&mut guard, &config) {
                let mut dev = CudaStaging {
                    stager,
                    device: src,
                };
                if config.huge_pages {
                    crate::memory::parallel_copy::advise_huge_pages(dst, bytes);
                }
                let plan = plan(bytes, config.slot_bytes, config.max_workers);
                // SAFETY: the caller's contract; chunks never exceed the slots' size.
                return unsafe {
                    download_pipelined(
                        &mut dev,
                        dst,
                        bytes,
                        plan,
                        bytes >= config.streaming_min_bytes,
                    )
                };
            }
        }
    }
    // SAFETY: the caller's contract.
    unsafe { call!(cuMemcpyDtoH_v2(dst.cast(), src, bytes)) }
}

#[cfg(test)]
#[path = "staged_tests.rs"]
mod tests;
