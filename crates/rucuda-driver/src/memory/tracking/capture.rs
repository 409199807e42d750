//! Capture sessions: what the use logs do while rucuda captures a stream into a graph.
//!
//! Work queued on a capturing stream does not run; it runs each time the graph is
//! replayed. So a use noted during a capture orders nothing and records nothing in the
//! memory's log (see `log.rs`); instead, when the capture is one of rucuda's *sessions*
//! (`memory/graph_capture.rs`), the use is added to the session's list of the memory the
//! graph touches, so that every replay can note those uses on its own stream, exactly as
//! eager work would, and the graph can keep that memory alive:
//!
//! - a use on the capturing stream of memory the session keeps alive (an owner
//!   registered with [`keep_alive`], or a block of the session's pool) is listed;
//! - a use of memory the session cannot keep alive, a use on another stream that joined
//!   the capture, and eager work queued by the capturing thread on a stream that is not
//!   capturing all fail with [`Error::Uncapturable`] and mark the session failed, so
//!   the capture cannot produce a graph that replays work on freed or untracked memory.
//!
//! This file holds the registry of sessions and those checks; it knows the logs only by
//! address (it is called from the log itself, and a session holds what keeps each log
//! alive).

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rucuda_driver_sys::{CUstreamCaptureMode, CUstreamCaptureStatus};

use super::pending::Access;
use crate::error::{call, Error, Result};
use crate::streams::stream::Stream;

/// Sessions being captured in the process; while it is 0 a use costs one atomic load.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// The sessions being captured.
static SESSIONS: Mutex<Vec<Arc<Session>>> = Mutex::new(Vec::new());

thread_local! {
    /// Sessions begun on this thread and not yet ended, innermost last.
    static ON_THIS_THREAD: RefCell<Vec<Arc<Session>>> = const { RefCell::new(Vec::new()) };
    /// What this thread's eager work used and allocated while observed (`observe_*`).
    static OBSERVED: RefCell<Option<Observed>> = const { RefCell::new(None) };
}

/// The uses (log address, stream handle, access) and allocations (log address) of the
/// eager work one thread queued while observed, in order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Observed {
    /// Each use: the memory's log (by address), the stream (by handle), the access.
    pub uses: Vec<(usize, usize, Access)>,
    /// The logs (by address) of the device buffers allocated meanwhile, in order.
    pub allocated: Vec<usize>,
}

/// Starts recording this thread's uses and allocations (see [`Observed`]). While any
/// thread observes, every use in the process takes the slower path of a capture.
pub(crate) fn observe_begin() {
    OBSERVED.with(|o| {
        let mut o = o.borrow_mut();
        if o.is_none() {
            ACTIVE.fetch_add(1, Ordering::SeqCst);
        }
        *o = Some(Observed::default());
    });
}

/// Stops recording and returns what was recorded (empty when nothing was observed).
pub(crate) fn observe_end() -> Observed {
    OBSERVED.with(|o| match o.borrow_mut().take() {
        Some(seen) => {
            ACTIVE.fetch_sub(1, Ordering::SeqCst);
            seen
        }
        None => Observed::default(),
    })
}

/// Notes an allocation whose log is at `log`, for an observing thread.
#[inline]
pub(crate) fn on_allocation(log: usize) {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return;
    }
    OBSERVED.with(|o| {
        if let Some(seen) = o.borrow_mut().as_mut() {
            seen.allocated.push(log);
        }
    });
}

/// What keeps a piece of memory alive for as long as a graph may replay work on it.
pub(crate) type Keeper = Arc<dyn Send + Sync>;

/// One capture: its stream, the driver's capture id, the memory its work touches.
pub(crate) struct Session {
    /// The driver's id of the capture (`cuStreamGetCaptureInfo`).
    pub(crate) id: u64,
    /// The capturing stream.
    pub(crate) stream: Stream,
    /// The session's pool (`memory/graph_pool.rs`), type-erased so that this file does
    /// not depend on it.
    pub(crate) pool: Arc<dyn Any + Send + Sync>,
    state: Mutex<SessionState>,
}

/// What a session collected.
#[derive(Default)]
pub(crate) struct SessionState {
    /// The logs (by address) of the memory the captured work uses, and how.
    pub(crate) uses: HashMap<usize, Access>,
    /// The logs (by address) the session may list, with what keeps each alive (`None`
    /// for the pool's blocks, which the pool keeps).
    pub(crate) kept: HashMap<usize, Option<Keeper>>,
    /// The first refusal: the operation and why.
    pub(crate) failure: Option<(String, String)>,
    /// What keeps the code of the captured kernels loaded (their functions, by address).
    pub(crate) code: HashMap<usize, Keeper>,
}

impl Session {
    /// The session's state.
    pub(crate) fn state(&self) -> MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a refusal (the first one wins) and returns it as an error.
    fn refuse(&self, operation: &str, problem: String) -> Error {
        let mut st = self.state();
        if st.failure.is_none() {
            st.failure = Some((operation.to_owned(), problem.clone()));
        }
        Error::Uncapturable {
            operation: operation.to_owned(),
            problem,
        }
    }
}

/// True while any session captures (one atomic load).
#[inline]
pub(crate) fn any_active() -> bool {
    ACTIVE.load(Ordering::Relaxed) != 0
}

/// Registers a session whose capture has begun on `stream` (on this thread).
pub(crate) fn register(stream: &Stream, pool: Arc<dyn Any + Send + Sync>) -> Result<Arc<Session>> {
    let (status, id) = capture_info(stream)?;
    if status != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE {
        return Err(Error::invalid("the stream is not capturing"));
    }
    let session = Arc::new(Session {
        id,
        stream: stream.clone(),
        pool,
        state: Mutex::new(SessionState::default()),
    });
    SESSIONS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Arc::clone(&session));
    ACTIVE.fetch_add(1, Ordering::SeqCst);
    ON_THIS_THREAD.with(|t| t.borrow_mut().push(Arc::clone(&session)));
    Ok(session)
}

/// Removes a session from the registry (its capture ended or was abandoned).
pub(crate) fn unregister(session: &Arc<Session>) {
    let mut all = SESSIONS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(i) = all.iter().position(|s| Arc::ptr_eq(s, session)) {
        all.swap_remove(i);
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
    drop(all);
    ON_THIS_THREAD.with(|t| t.borrow_mut().retain(|s| !Arc::ptr_eq(s, session)));
}

/// The session capturing on `stream` itself (for allocations made on it), if any.
pub(crate) fn session_on(stream: &Stream) -> Option<Arc<Session>> {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let all = SESSIONS.lock().unwrap_or_else(PoisonError::into_inner);
    all.iter()
        .find(|s| s.stream.raw() == stream.raw() && s.stream.context() == stream.context())
        .cloned()
}

/// Lets the innermost session of this thread list uses of the memory whose log is at
/// `log` (a [`DeviceRange`](super::DeviceRange)'s log), keeping it alive with `keeper`
/// for as long as the graph lives. Does nothing when this thread captures nothing.
pub(crate) fn keep_alive(log: usize, keeper: impl FnOnce() -> Keeper) {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return;
    }
    ON_THIS_THREAD.with(|t| {
        if let Some(s) = t.borrow().last() {
            s.state().kept.entry(log).or_insert_with(|| Some(keeper()));
        }
    });
}

/// Keeps the code of a kernel launched while this thread captures (its function, which
/// holds its module) alive for as long as the innermost session's graph lives: a graph's
/// kernel nodes point into the module. Does nothing when this thread captures nothing.
#[inline]
pub(crate) fn keep_code(key: usize, keeper: impl FnOnce() -> Keeper) {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return;
    }
    ON_THIS_THREAD.with(|t| {
        if let Some(s) = t.borrow().last() {
            s.state().code.entry(key).or_insert_with(keeper);
        }
    });
}

/// Called by the log at `log` before it notes a use on `stream`: lists the use in the
/// session capturing `stream`, or refuses it (see the module docs). Costs one atomic
/// load while nothing captures.
#[inline]
pub(crate) fn on_use(log: usize, stream: &Stream, access: Access) -> Result<()> {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return Ok(());
    }
    on_use_while_capturing(log, stream, access)
}

#[cold]
fn on_use_while_capturing(log: usize, stream: &Stream, access: Access) -> Result<()> {
    let (status, id) = capture_info(stream)?;
    if status == CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
        OBSERVED.with(|o| {
            if let Some(seen) = o.borrow_mut().as_mut() {
                seen.uses.push((log, stream.raw() as usize, access));
            }
        });
        let mine = ON_THIS_THREAD.with(|t| t.borrow().last().cloned());
        return match mine {
            Some(s) => Err(s.refuse(
                "eager work on another stream",
                format!(
                    "while this thread captures stream {:?}, it queued work on stream {:?}, \
                     which is not capturing (make the arrays the captured code works on \
                     with the capturing stream as their stream)",
                    s.stream.raw(),
                    stream.raw()
                ),
            )),
            None => Ok(()),
        };
    }
    let session = {
        let all = SESSIONS.lock().unwrap_or_else(PoisonError::into_inner);
        all.iter().find(|s| s.id == id).cloned()
    };
    // A capture rucuda does not manage (`Stream::capture`): its launch is unsafe and
    // nothing is recorded, as before.
    let Some(session) = session else {
        return Ok(());
    };
    if session.stream.raw() != stream.raw() {
        return Err(session.refuse(
            "work on a second stream",
            "another stream joined the capture (through an event); rucuda's graphs capture \
             the work of one stream"
                .into(),
        ));
    }
    let mut st = session.state();
    if !st.kept.contains_key(&log) {
        drop(st);
        return Err(session.refuse(
            "work on memory the graph cannot keep alive",
            "captured work uses memory that has no shared owner registered with the \
             capture (use arrays, or register the buffer with the capture's `keep`)"
                .into(),
        ));
    }
    let entry = st.uses.entry(log).or_insert(access);
    if access == Access::Write {
        *entry = Access::Write;
    }
    Ok(())
}

/// Runs `f` (which must queue no work on any stream) with this thread's capture mode
/// relaxed: a capture in the thread-local or global mode refuses, and invalidates itself
/// over, the calls that may synchronize or allocate (`cuMemAlloc`, `cuModuleLoadData`),
/// even where they touch no captured stream. Allocating a capture pool's block and
/// loading the module of a kernel first used inside a capture are such calls. The
/// previous mode is restored whatever `f` returns.
pub(crate) fn with_relaxed_mode<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    let mut mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    // SAFETY: exchanges this thread's mode (no other effect); restored below.
    unsafe { call!(cuThreadExchangeStreamCaptureMode(&mut mode))? };
    let r = f();
    // SAFETY: puts back the mode the exchange returned.
    let restored = unsafe { call!(cuThreadExchangeStreamCaptureMode(&mut mode)) };
    let r = r?;
    restored?;
    Ok(r)
}

/// Whether the capture on `session`'s stream may be ended by the session: the
/// session's own capture (begun by it, neither ended nor replaced through the raw
/// `Stream::begin_capture` / `Stream::end_capture` since, so every use of its work is
/// listed), or an invalidated capture, whose end hands over no graph, only the error.
pub(crate) fn may_end_capture(session: &Session) -> Result<bool> {
    let (status, id) = capture_info(&session.stream)?;
    Ok(match status {
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE => id == session.id,
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_INVALIDATED => true,
        _ => false,
    })
}

/// The capture status and id of `stream` (`cuStreamGetCaptureInfo`); the legacy streams
/// never capture.
fn capture_info(stream: &Stream) -> Result<(CUstreamCaptureStatus, u64)> {
    let raw = stream.raw();
    if raw.is_null() || raw as usize == 1 || raw as usize == 2 {
        return Ok((CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE, 0));
    }
    stream.context().make_current()?;
    let mut status = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    let mut id: u64 = 0;
    // SAFETY: the stream is alive; writes a status and an id, the other outputs are
    // null (allowed: the driver skips them).
    unsafe {
        call!(cuStreamGetCaptureInfo(
            raw,
            &mut status,
            &mut id,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut()
        ))?
    };
    Ok((status, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_checked_while_nothing_captures() {
        // No session is registered in this test binary's unit tests.
        assert_eq!(ACTIVE.load(Ordering::Relaxed), 0);
        keep_alive(0x10, || Arc::new(()) as Keeper);
        ON_THIS_THREAD.with(|t| assert!(t.borrow().is_empty()));
    }
}
