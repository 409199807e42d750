//! Contexts: the primary context of a device (the default, shared with the runtime API
//! and its libraries) and contexts created with flags; making one current on a thread;
//! PyCUDA's push/pop stack; limits, cache configuration, memory information.
//!
//! Every safe object holds the [`Context`] it belongs to (an `Arc`), so a context is
//! never destroyed under live memory, streams or modules. Before each driver call that
//! needs it, an object makes its context current on the calling thread through a
//! thread-local check (no driver call when it is already current). Code that changes
//! the current context behind rucuda's back (raw `cuCtxSetCurrent`) must call
//! [`Context::bind`] again before using rucuda objects on that thread.

pub(crate) mod profiler;

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use rucuda_driver_sys::{CUcontext, CUfunc_cache, CUlimit};

use crate::device::attribute::DeviceAttribute;
use crate::device::{init, Device};
use crate::error::{call, Error, Result};

bitflags::bitflags! {
    /// Flags of a created context (PyCUDA's `ctx_flags`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct ContextFlags: u32 {
        /// Let the driver choose how the host waits (the default).
        const SCHED_AUTO = 0;
        /// Spin while waiting for the GPU.
        const SCHED_SPIN = 1;
        /// Yield the thread while waiting.
        const SCHED_YIELD = 2;
        /// Block on a synchronisation primitive while waiting.
        const SCHED_BLOCKING_SYNC = 4;
        /// Allow mapped pinned host memory (always on since CUDA 11; kept for PyCUDA code).
        const MAP_HOST = 8;
        /// Keep local memory at its largest size after a kernel needed it.
        const LMEM_RESIZE_TO_MAX = 16;
        /// Write a core dump when a kernel faults.
        const COREDUMP_ENABLE = 32;
        /// Allow user-triggered core dumps.
        const USER_COREDUMP_ENABLE = 64;
        /// Make synchronous memory operations synchronize.
        const SYNC_MEMOPS = 128;
    }
}

/// A context limit (PyCUDA's `limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// Stack size per GPU thread, bytes.
    StackSize,
    /// Size of the `printf` buffer, bytes.
    PrintfFifoSize,
    /// Size of the device `malloc` heap, bytes.
    MallocHeapSize,
    /// Nesting depth of device-side synchronisation (dynamic parallelism).
    DevRuntimeSyncDepth,
    /// Pending device-side launches (dynamic parallelism).
    DevRuntimePendingLaunchCount,
    /// L2 fetch granularity, bytes.
    MaxL2FetchGranularity,
    /// L2 set aside for persisting accesses, bytes.
    PersistingL2CacheSize,
}

impl Limit {
    fn raw(self) -> CUlimit {
        CUlimit(match self {
            Limit::StackSize => 0,
            Limit::PrintfFifoSize => 1,
            Limit::MallocHeapSize => 2,
            Limit::DevRuntimeSyncDepth => 3,
            Limit::DevRuntimePendingLaunchCount => 4,
            Limit::MaxL2FetchGranularity => 5,
            Limit::PersistingL2CacheSize => 6,
        })
    }
}

/// Preferred split between L1 cache and shared memory (PyCUDA's `func_cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheConfig {
    /// No preference.
    PreferNone,
    /// More shared memory.
    PreferShared,
    /// More L1 cache.
    PreferL1,
    /// Equal L1 and shared memory.
    PreferEqual,
}

impl CacheConfig {
    pub(crate) fn raw(self) -> CUfunc_cache {
        CUfunc_cache(match self {
            CacheConfig::PreferNone => 0,
            CacheConfig::PreferShared => 1,
            CacheConfig::PreferL1 => 2,
            CacheConfig::PreferEqual => 3,
        })
    }

    pub(crate) fn from_raw(raw: CUfunc_cache) -> Result<Self> {
        Ok(match raw.0 {
            0 => CacheConfig::PreferNone,
            1 => CacheConfig::PreferShared,
            2 => CacheConfig::PreferL1,
            3 => CacheConfig::PreferEqual,
            v => return Err(Error::invalid(format!("unknown cache configuration {v}"))),
        })
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The id of the context rucuda last made current on this thread (0: none).
    static CURRENT_ID: Cell<u64> = const { Cell::new(0) };
}

/// Live contexts by raw handle, so [`Context::current`] can hand back the owning object.
static REGISTRY: Mutex<Vec<(usize, Weak<ContextInner>)>> = Mutex::new(Vec::new());
/// The primary context of each device while someone holds it.
static PRIMARY: Mutex<Option<HashMap<i32, Weak<ContextInner>>>> = Mutex::new(None);

pub(crate) struct ContextInner {
    raw: CUcontext,
    device: Device,
    primary: bool,
    id: u64,
    pools_supported: bool,
    has_deferred: AtomicBool,
    deferred: Mutex<Vec<Error>>,
}

// SAFETY: a CUcontext is a handle the driver lets any thread use; our mutable state is
// behind a Mutex and atomics.
unsafe impl Send for ContextInner {}
// SAFETY: as above.
unsafe impl Sync for ContextInner {}

impl Drop for ContextInner {
    fn drop(&mut self) {
        if let Ok(mut reg) = REGISTRY.lock() {
            reg.retain(|(raw, w)| *raw != self.raw as usize && w.strong_count() > 0);
        }
        let result = if self.primary {
            // SAFETY: releases the one retain this object made.
            unsafe { call_release_primary(self.device) }
        } else {
            // SAFETY: destroys the context this object created; no rucuda object uses it
            // any more (they all hold this Arc).
            unsafe { call_destroy(self.raw) }
        };
        if CURRENT_ID.try_with(|c| c.get() == self.id).unwrap_or(false) {
            let _ = CURRENT_ID.try_with(|c| c.set(0));
        }
        if let Err(e) = result {
            // Nothing is left to report to: the context is gone. Say so once.
            log::error!("rucuda: releasing a context failed: {e}");
        }
    }
}

unsafe fn call_release_primary(device: Device) -> Result<()> {
    // SAFETY: the caller retained this device's primary context once.
    unsafe { call!(cuDevicePrimaryCtxRelease_v2(device.raw())) }
}

unsafe fn call_destroy(raw: CUcontext) -> Result<()> {
    // SAFETY: the caller created `raw` and nothing uses it any more.
    unsafe { call!(cuCtxDestroy_v2(raw)) }
}

/// A CUDA context, cheap to clone (an `Arc`), usable from any thread.
///
/// ```no_run
/// use rucuda_driver::{Context, Device};
/// let ctx = Device::get(0)?.primary_context()?;
/// let (free, total) = ctx.mem_get_info()?;
/// println!("{free} of {total} bytes free");
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("device", &self.inner.device)
            .field("primary", &self.inner.primary)
            .field("id", &self.inner.id)
            .finish()
    }
}

/// A [`Context`] that does not keep it alive ([`Context::downgrade`]).
#[derive(Clone, Debug)]
pub struct WeakContext {
    inner: Weak<ContextInner>,
    id: u64,
}

impl WeakContext {
    /// The context, while any [`Context`] handle of it lives.
    pub fn upgrade(&self) -> Option<Context> {
        self.inner.upgrade().map(|inner| Context { inner })
    }

    /// The context's [`Context::id`] (known after the context is gone).
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl PartialEq for Context {
    fn eq(&self, other: &Self) -> bool {
        self.inner.raw == other.inner.raw
    }
}
impl Eq for Context {}

impl Device {
    /// The device's primary context, retained (PyCUDA's `retain_primary_context`). One
    /// object per device is shared while any clone lives; it is the context the CUDA
    /// runtime and its libraries use.
    pub fn primary_context(self) -> Result<Context> {
        init()?;
        let mut map = PRIMARY
            .lock()
            .map_err(|_| Error::invalid("primary context registry poisoned"))?;
        let map = map.get_or_insert_with(HashMap::new);
        if let Some(inner) = map.get(&self.raw()).and_then(Weak::upgrade) {
            return Ok(Context { inner });
        }
        let mut raw: CUcontext = std::ptr::null_mut();
        // SAFETY: writes one CUcontext; released in ContextInner::drop.
        unsafe { call!(cuDevicePrimaryCtxRetain(&mut raw, self.raw()))? };
        let ctx = Context::wrap(raw, self, true)?;
        map.insert(self.raw(), Arc::downgrade(&ctx.inner));
        Ok(ctx)
    }

    /// Same as [`Device::primary_context`], under PyCUDA's name.
    pub fn retain_primary_context(self) -> Result<Context> {
        self.primary_context()
    }

    /// Creates a new context with `flags` and makes it current on this thread (PyCUDA's
    /// `make_context`). Prefer [`Device::primary_context`] unless you need the flags or
    /// an isolated context.
    pub fn make_context(self, flags: ContextFlags) -> Result<Context> {
        init()?;
        let mut raw: CUcontext = std::ptr::null_mut();
        // SAFETY: writes one CUcontext; destroyed in ContextInner::drop.
        unsafe {
            call!(cuCtxCreate_v4(
                &mut raw,
                std::ptr::null_mut(),
                flags.bits(),
                self.raw()
            ))?
        };
        let ctx = Context::wrap(raw, self, false)?;
        CURRENT_ID.with(|c| c.set(ctx.inner.id));
        Ok(ctx)
    }
}

impl Context {
    fn wrap(raw: CUcontext, device: Device, primary: bool) -> Result<Context> {
        let pools_supported = device
            .attribute(DeviceAttribute::MemoryPoolsSupported)
            .unwrap_or(0)
            != 0;
        let inner = Arc::new(ContextInner {
            raw,
            device,
            primary,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            pools_supported,
            has_deferred: AtomicBool::new(false),
            deferred: Mutex::new(Vec::new()),
        });
        if let Ok(mut reg) = REGISTRY.lock() {
            reg.retain(|(_, w)| w.strong_count() > 0);
            reg.push((raw as usize, Arc::downgrade(&inner)));
        }
        Ok(Context { inner })
    }

    /// Makes this context current on the calling thread (a thread-local check; a driver
    /// call only when another context was current), and reports errors that destructors
    /// of its objects met since the last call.
    #[inline]
    pub fn bind(&self) -> Result<()> {
        self.make_current()?;
        if self.inner.has_deferred.load(Ordering::Relaxed) {
            return self.take_deferred();
        }
        Ok(())
    }

    /// [`Context::bind`] that also asks the driver which context is current, instead of
    /// trusting the thread-local cache: another library (the runtime API, NCCL, CuPy)
    /// may have called `cuCtxSetCurrent` behind rucuda's back. The paths that create
    /// objects belonging to a context (allocations, module loads) use it, so a foreign
    /// switch can never put memory or code into the wrong context; other calls take the
    /// object's context from the handle they pass.
    pub(crate) fn bind_verified(&self) -> Result<()> {
        let mut current: CUcontext = std::ptr::null_mut();
        // SAFETY: writes one context handle.
        unsafe { call!(cuCtxGetCurrent(&mut current))? };
        if current != self.inner.raw {
            if CURRENT_ID.with(|c| c.get()) == self.inner.id {
                log::debug!(
                    "rucuda: the current context was changed outside rucuda; making ours \
                     current again"
                );
            }
            CURRENT_ID.with(|c| c.set(0));
        }
        self.bind()
    }

    /// Makes this context current on the calling thread without taking queued errors:
    /// what destructors use, so that an earlier error never stops a release.
    #[inline]
    pub(crate) fn make_current(&self) -> Result<()> {
        if CURRENT_ID.with(|c| c.get()) != self.inner.id {
            // SAFETY: the handle is alive (we hold it).
            unsafe { call!(cuCtxSetCurrent(self.inner.raw))? };
            CURRENT_ID.with(|c| c.set(self.inner.id));
        }
        Ok(())
    }

    #[cold]
    fn take_deferred(&self) -> Result<()> {
        self.inner.has_deferred.store(false, Ordering::Relaxed);
        let errors = match self.inner.deferred.lock() {
            Ok(mut v) => std::mem::take(&mut *v),
            Err(_) => return Ok(()),
        };
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Error::Deferred(errors))
        }
    }

    /// Queues an error met in a destructor; the next call on this context returns it.
    pub(crate) fn defer_error(&self, e: Error) {
        if let Ok(mut v) = self.inner.deferred.lock() {
            v.push(e);
            self.inner.has_deferred.store(true, Ordering::Relaxed);
        }
    }

    /// Errors queued by destructors, taken now (empty `Ok` when none).
    pub fn check_deferred_errors(&self) -> Result<()> {
        self.take_deferred()
    }

    /// The context that is current on this thread, if rucuda owns it.
    pub fn current() -> Result<Option<Context>> {
        init()?;
        let mut raw: CUcontext = std::ptr::null_mut();
        // SAFETY: writes one CUcontext.
        unsafe { call!(cuCtxGetCurrent(&mut raw))? };
        if raw.is_null() {
            return Ok(None);
        }
        let reg = REGISTRY
            .lock()
            .map_err(|_| Error::invalid("context registry poisoned"))?;
        Ok(reg
            .iter()
            .rev()
            .filter(|(r, _)| *r == raw as usize)
            .find_map(|(_, w)| w.upgrade())
            .map(|inner| Context { inner }))
    }

    /// Pushes this context on the calling thread's context stack (PyCUDA's `push`).
    pub fn push(&self) -> Result<()> {
        // SAFETY: the handle is alive.
        unsafe { call!(cuCtxPushCurrent_v2(self.inner.raw))? };
        CURRENT_ID.with(|c| c.set(self.inner.id));
        Ok(())
    }

    /// Pops the current context off the calling thread's stack (PyCUDA's `Context.pop`).
    pub fn pop() -> Result<()> {
        let mut raw: CUcontext = std::ptr::null_mut();
        // SAFETY: writes one CUcontext.
        unsafe { call!(cuCtxPopCurrent_v2(&mut raw))? };
        // The context under it, if any, is now current; we do not know its id cheaply.
        CURRENT_ID.with(|c| c.set(0));
        Ok(())
    }

    /// Drops this handle as PyCUDA's `Context.detach()` does: when the context is the
    /// one current on the calling thread it is popped off the thread's context stack
    /// (the context under it, if any, becomes current), then the handle goes and the
    /// errors its objects' destructors met are returned. The context itself is destroyed
    /// (or the primary context released) when the last handle and the last object that
    /// holds it go; objects still holding it make it current again when used.
    ///
    /// ```no_run
    /// use rucuda_driver::{Context, ContextFlags, Device};
    /// let ctx = Device::get(0)?.make_context(ContextFlags::empty())?; // pushed, current
    /// // ... work in ctx ...
    /// ctx.detach()?;                       // popped and destroyed
    /// assert!(Context::current()?.is_none());
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn detach(self) -> Result<()> {
        let popped = self.pop_if_current();
        let deferred = self.take_deferred();
        popped.and(deferred)
    }

    /// Pops this context off the calling thread's stack when it is the current one.
    fn pop_if_current(&self) -> Result<()> {
        init()?;
        let mut current: CUcontext = std::ptr::null_mut();
        // SAFETY: writes one CUcontext.
        unsafe { call!(cuCtxGetCurrent(&mut current))? };
        if current != self.inner.raw {
            return Ok(());
        }
        let mut popped: CUcontext = std::ptr::null_mut();
        // SAFETY: writes one CUcontext; this context is current, so the stack is not
        // empty and the popped handle is ours (we hold it: it stays alive).
        let result = unsafe { call!(cuCtxPopCurrent_v2(&mut popped)) };
        // Whatever happened, the thread-local cache no longer knows what is current.
        CURRENT_ID.with(|c| c.set(0));
        result
    }

    /// The raw handle.
    pub fn raw(&self) -> CUcontext {
        self.inner.raw
    }

    /// A process-unique id (never reused), for per-context caches.
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// A handle that does not keep the context alive: for caches of things that die with
    /// the context (its memory, its modules), which must not prolong its life.
    ///
    /// ```no_run
    /// use rucuda_driver::Device;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let weak = ctx.downgrade();
    /// assert!(weak.upgrade().is_some_and(|c| c == ctx));
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn downgrade(&self) -> WeakContext {
        WeakContext {
            inner: Arc::downgrade(&self.inner),
            id: self.inner.id,
        }
    }

    /// The context's device.
    pub fn device(&self) -> Device {
        self.inner.device
    }

    /// Whether this is the device's primary context.
    pub fn is_primary(&self) -> bool {
        self.inner.primary
    }

    /// Whether the device supports stream-ordered allocation (`cuMemAllocAsync`).
    pub fn supports_memory_pools(&self) -> bool {
        self.inner.pools_supported
    }

    /// Waits for all work in this context.
    pub fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: no arguments.
        unsafe { call!(cuCtxSynchronize()) }
    }

    /// Sets a limit (PyCUDA's `set_limit`).
    pub fn set_limit(&self, limit: Limit, value: usize) -> Result<()> {
        self.bind()?;
        // SAFETY: plain values.
        unsafe { call!(cuCtxSetLimit(limit.raw(), value)) }
    }

    /// Reads a limit (PyCUDA's `get_limit`).
    pub fn limit(&self, limit: Limit) -> Result<usize> {
        self.bind()?;
        let mut v = 0usize;
        // SAFETY: writes one size_t.
        unsafe { call!(cuCtxGetLimit(&mut v, limit.raw()))? };
        Ok(v)
    }

    /// Sets the preferred L1/shared-memory split.
    pub fn set_cache_config(&self, config: CacheConfig) -> Result<()> {
        self.bind()?;
        // SAFETY: plain value.
        unsafe { call!(cuCtxSetCacheConfig(config.raw())) }
    }

    /// The preferred L1/shared-memory split.
    pub fn cache_config(&self) -> Result<CacheConfig> {
        self.bind()?;
        let mut raw = CUfunc_cache(0);
        // SAFETY: writes one value.
        unsafe { call!(cuCtxGetCacheConfig(&mut raw))? };
        CacheConfig::from_raw(raw)
    }

    /// The context's API version (`cuCtxGetApiVersion`).
    pub fn api_version(&self) -> Result<u32> {
        let mut v: std::ffi::c_uint = 0;
        // SAFETY: writes one uint; the handle is alive.
        unsafe { call!(cuCtxGetApiVersion(self.inner.raw, &mut v))? };
        Ok(v)
    }

    /// `(free, total)` device memory in bytes (PyCUDA's `mem_get_info`).
    pub fn mem_get_info(&self) -> Result<(usize, usize)> {
        self.bind()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: writes two size_t.
        unsafe { call!(cuMemGetInfo_v2(&mut free, &mut total))? };
        Ok((free, total))
    }

    /// The stream priority range `(least, greatest)`; greater priority is a smaller number.
    pub fn stream_priority_range(&self) -> Result<(i32, i32)> {
        self.bind()?;
        let (mut least, mut greatest) = (0, 0);
        // SAFETY: writes two ints.
        unsafe { call!(cuCtxGetStreamPriorityRange(&mut least, &mut greatest))? };
        Ok((least, greatest))
    }

    /// Lets kernels of this context access `peer`'s memory (PyCUDA's `enable_peer_access`).
    pub fn enable_peer_access(&self, peer: &Context) -> Result<()> {
        self.bind()?;
        // SAFETY: both handles are alive; flags must be 0.
        unsafe { call!(cuCtxEnablePeerAccess(peer.inner.raw, 0)) }
    }

    /// Stops this context's access to `peer`'s memory.
    pub fn disable_peer_access(&self, peer: &Context) -> Result<()> {
        self.bind()?;
        // SAFETY: both handles are alive.
        unsafe { call!(cuCtxDisablePeerAccess(peer.inner.raw)) }
    }
}
