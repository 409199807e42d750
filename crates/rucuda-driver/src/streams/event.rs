//! Events: markers in a stream, for waiting, ordering across streams, timing and IPC.

use std::sync::Arc;

use rucuda_driver_sys::{CUevent, CUipcEventHandle, CUresult};

use crate::context::Context;
use crate::error::{call, check, Error, Result};
use crate::streams::stream::Stream;

bitflags::bitflags! {
    /// Event creation flags (PyCUDA's `event_flags`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct EventFlags: u32 {
        /// Default: records timing.
        const DEFAULT = 0;
        /// The host blocks (rather than spins) in `synchronize`.
        const BLOCKING_SYNC = 1;
        /// No timing data: cheaper to record and wait on.
        const DISABLE_TIMING = 2;
        /// May be shared with other processes (needs `DISABLE_TIMING`).
        const INTERPROCESS = 4;
    }
}

struct EventInner {
    raw: CUevent,
    ctx: Context,
}

// SAFETY: a CUevent may be used from any thread of its context's process.
unsafe impl Send for EventInner {}
// SAFETY: as above.
unsafe impl Sync for EventInner {}

impl Drop for EventInner {
    fn drop(&mut self) {
        let r = self.ctx.make_current().and_then(|()| {
            // SAFETY: we created or opened this event.
            unsafe { call!(cuEventDestroy_v2(self.raw)) }
        });
        if let Err(e) = r {
            self.ctx.defer_error(e);
        }
    }
}

/// An event, cheap to clone.
///
/// ```no_run
/// use rucuda_driver::{Device, Event, EventFlags, Stream};
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::null(&ctx);
/// let (start, end) = (Event::new(&ctx, EventFlags::DEFAULT)?, Event::new(&ctx, EventFlags::DEFAULT)?);
/// start.record(&stream)?;
/// end.record(&stream)?;
/// end.synchronize()?;
/// println!("{} ms", end.time_since(&start)?);
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
#[derive(Clone)]
pub struct Event {
    inner: Arc<EventInner>,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event")
            .field("raw", &self.inner.raw)
            .finish()
    }
}

/// An event handle another process can open (PyCUDA's `Event.ipc_handle`); 64 opaque bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct IpcEventHandle(pub [u8; 64]);

impl std::fmt::Debug for IpcEventHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IpcEventHandle(..)")
    }
}

impl Event {
    /// A new event in `ctx`.
    pub fn new(ctx: &Context, flags: EventFlags) -> Result<Event> {
        ctx.bind()?;
        let mut raw: CUevent = std::ptr::null_mut();
        // SAFETY: writes one CUevent; destroyed on drop.
        unsafe { call!(cuEventCreate(&mut raw, flags.bits()))? };
        Ok(Event {
            inner: Arc::new(EventInner {
                raw,
                ctx: ctx.clone(),
            }),
        })
    }

    /// The raw handle.
    #[inline]
    pub fn raw(&self) -> CUevent {
        self.inner.raw
    }

    /// Records the event at the current end of `stream`.
    #[inline]
    pub fn record(&self, stream: &Stream) -> Result<()> {
        self.inner.ctx.bind()?;
        // SAFETY: both handles are alive.
        unsafe { call!(cuEventRecord(self.inner.raw, stream.raw())) }
    }

    /// Waits on the host until the event has completed.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.ctx.bind()?;
        // SAFETY: the handle is alive.
        unsafe { call!(cuEventSynchronize(self.inner.raw)) }
    }

    /// True when the event has completed (PyCUDA's `query`).
    pub fn query(&self) -> Result<bool> {
        self.inner.ctx.bind()?;
        let f = crate::error::driver()?.cuEventQuery()?;
        // SAFETY: the handle is alive.
        match unsafe { f(self.inner.raw) } {
            CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            code => check(code, "cuEventQuery").map(|()| true),
        }
    }

    /// Milliseconds from `earlier` to this event (PyCUDA's `time_since`).
    pub fn time_since(&self, earlier: &Event) -> Result<f32> {
        self.inner.ctx.bind()?;
        let mut ms = 0f32;
        // SAFETY: writes one float; both handles are alive.
        unsafe {
            call!(cuEventElapsedTime_v2(
                &mut ms,
                earlier.inner.raw,
                self.inner.raw
            ))?
        };
        Ok(ms)
    }

    /// Milliseconds from this event to `later` (PyCUDA's `time_till`).
    pub fn time_till(&self, later: &Event) -> Result<f32> {
        later.time_since(self)
    }

    /// A handle another process can open with [`Event::from_ipc_handle`]. The event must
    /// have been created with `INTERPROCESS | DISABLE_TIMING`.
    pub fn ipc_handle(&self) -> Result<IpcEventHandle> {
        self.inner.ctx.bind()?;
        let mut h = CUipcEventHandle::default();
        // SAFETY: writes one handle.
        unsafe { call!(cuIpcGetEventHandle(&mut h, self.inner.raw))? };
        Ok(IpcEventHandle(h.reserved.map(|b| b as u8)))
    }

    /// Opens an event another process shared.
    pub fn from_ipc_handle(ctx: &Context, handle: IpcEventHandle) -> Result<Event> {
        ctx.bind()?;
        let h = CUipcEventHandle {
            reserved: handle.0.map(|b| b as std::ffi::c_char),
        };
        let mut raw: CUevent = std::ptr::null_mut();
        // SAFETY: writes one CUevent.
        unsafe { call!(cuIpcOpenEventHandle(&mut raw, h))? };
        if raw.is_null() {
            return Err(Error::invalid("cuIpcOpenEventHandle returned no event"));
        }
        Ok(Event {
            inner: Arc::new(EventInner {
                raw,
                ctx: ctx.clone(),
            }),
        })
    }
}

impl Stream {
    /// Makes later work on this stream wait until `event` completes (PyCUDA's `wait_for_event`).
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.context().bind()?;
        // SAFETY: both handles are alive; flags must be 0.
        unsafe { call!(cuStreamWaitEvent(self.raw(), event.raw(), 0)) }
    }
}
