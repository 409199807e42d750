//! Streams: ordered queues of device work, with priorities, waits on events and host
//! callbacks.

use std::ffi::c_void;
use std::sync::Arc;

use rucuda_driver_sys::{CUresult, CUstream};

use crate::context::Context;
use crate::error::{call, check, Result};

bitflags::bitflags! {
    /// Stream creation flags.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct StreamFlags: u32 {
        /// Synchronises with the legacy default stream (the driver's default).
        const DEFAULT = 0;
        /// Does not synchronise with the legacy default stream.
        const NON_BLOCKING = 1;
    }
}

pub(crate) struct StreamInner {
    raw: CUstream,
    ctx: Context,
    owned: bool,
}

// SAFETY: a CUstream may be used from any thread of its context's process.
unsafe impl Send for StreamInner {}
// SAFETY: as above; the handle is immutable.
unsafe impl Sync for StreamInner {}

impl Drop for StreamInner {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let r = self.ctx.make_current().and_then(|()| {
            // SAFETY: we created this stream; the driver finishes its pending work first.
            unsafe { call!(cuStreamDestroy_v2(self.raw)) }
        });
        if let Err(e) = r {
            self.ctx.defer_error(e);
        }
    }
}

/// A stream, cheap to clone (an `Arc`); destroyed when the last clone and the last
/// object ordered on it are gone.
///
/// ```no_run
/// use rucuda_driver::{Device, Stream, StreamFlags};
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
/// stream.synchronize()?;
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
#[derive(Clone)]
pub struct Stream {
    pub(crate) inner: Arc<StreamInner>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("raw", &self.inner.raw)
            .finish()
    }
}

impl Stream {
    /// A new stream in `ctx`.
    pub fn new(ctx: &Context, flags: StreamFlags) -> Result<Stream> {
        ctx.bind()?;
        let mut raw: CUstream = std::ptr::null_mut();
        // SAFETY: writes one CUstream; destroyed on drop.
        unsafe { call!(cuStreamCreate(&mut raw, flags.bits()))? };
        Ok(Stream::wrap(ctx, raw, true))
    }

    /// A new stream with a priority (see [`Context::stream_priority_range`]).
    pub fn with_priority(ctx: &Context, flags: StreamFlags, priority: i32) -> Result<Stream> {
        ctx.bind()?;
        let mut raw: CUstream = std::ptr::null_mut();
        // SAFETY: writes one CUstream; destroyed on drop.
        unsafe { call!(cuStreamCreateWithPriority(&mut raw, flags.bits(), priority))? };
        Ok(Stream::wrap(ctx, raw, true))
    }

    /// The legacy default stream (handle 0) of `ctx`.
    pub fn null(ctx: &Context) -> Stream {
        Stream::wrap(ctx, std::ptr::null_mut(), false)
    }

    /// The per-thread default stream of `ctx`.
    pub fn per_thread(ctx: &Context) -> Stream {
        Stream::wrap(ctx, 2usize as CUstream, false)
    }

    /// Wraps a stream another library created.
    ///
    /// # Safety
    /// `raw` must be a stream of `ctx` that outlives the returned object; it is not destroyed.
    pub unsafe fn from_raw(ctx: &Context, raw: CUstream) -> Stream {
        Stream::wrap(ctx, raw, false)
    }

    fn wrap(ctx: &Context, raw: CUstream, owned: bool) -> Stream {
        Stream {
            inner: Arc::new(StreamInner {
                raw,
                ctx: ctx.clone(),
                owned,
            }),
        }
    }

    /// The raw handle.
    #[inline]
    pub fn raw(&self) -> CUstream {
        self.inner.raw
    }

    /// The stream's context.
    #[inline]
    pub fn context(&self) -> &Context {
        &self.inner.ctx
    }

    /// Waits for all work queued so far.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.ctx.bind()?;
        // SAFETY: the handle is alive.
        unsafe { call!(cuStreamSynchronize(self.inner.raw)) }
    }

    /// True when all queued work has finished (PyCUDA's `is_done`).
    pub fn is_done(&self) -> Result<bool> {
        self.inner.ctx.bind()?;
        let f = crate::error::driver()?.cuStreamQuery()?;
        // SAFETY: the handle is alive.
        match unsafe { f(self.inner.raw) } {
            CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            code => check(code, "cuStreamQuery").map(|()| true),
        }
    }

    /// The stream's priority.
    pub fn priority(&self) -> Result<i32> {
        self.inner.ctx.bind()?;
        let mut p = 0;
        // SAFETY: writes one int.
        unsafe { call!(cuStreamGetPriority(self.inner.raw, &mut p))? };
        Ok(p)
    }

    /// The stream's flags.
    pub fn flags(&self) -> Result<StreamFlags> {
        self.inner.ctx.bind()?;
        let mut f = 0u32;
        // SAFETY: writes one uint.
        unsafe { call!(cuStreamGetFlags(self.inner.raw, &mut f))? };
        Ok(StreamFlags::from_bits_truncate(f))
    }

    /// Runs `callback` on a driver thread once all work queued before it has finished
    /// (`cuLaunchHostFunc`). The callback must not call CUDA.
    pub fn add_callback<F: FnOnce() + Send + 'static>(&self, callback: F) -> Result<()> {
        unsafe extern "C" fn trampoline(data: *mut c_void) {
            // SAFETY: `data` is the Box leaked below, taken back exactly once.
            let cb: Box<Box<dyn FnOnce() + Send>> = unsafe { Box::from_raw(data.cast()) };
            // A panic must not unwind into the driver.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(cb));
        }
        self.inner.ctx.bind()?;
        let boxed: Box<Box<dyn FnOnce() + Send>> = Box::new(Box::new(callback));
        let data = Box::into_raw(boxed).cast::<c_void>();
        // SAFETY: the trampoline matches CUhostFn; `data` stays valid until it runs.
        let r = unsafe { call!(cuLaunchHostFunc(self.inner.raw, Some(trampoline), data)) };
        if r.is_err() {
            // SAFETY: the driver refused the callback, so it will never run: reclaim it.
            drop(unsafe { Box::from_raw(data.cast::<Box<dyn FnOnce() + Send>>()) });
        }
        r
    }
}
