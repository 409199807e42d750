//! The log of one piece of memory's uses ([`UseLog`]): the stream that last wrote it,
//! the readers since, their events, the uses pending until queued ([`InUse`]), and how
//! new work, the host and the free are ordered after them.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;

use rucuda_driver_sys::{CUdeviceptr, CUevent};

use super::pending::*;
use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::streams::stream::Stream;

/// The legacy per-thread default stream's handle: one handle, a different stream on
/// every host thread.
const PER_THREAD_STREAM: usize = 2;

/// Readers kept before the log waits for all of them on the host and forgets them (only
/// the per-thread stream, never "the same" as anything, adds an entry per use).
const MAX_READERS: usize = 64;

/// Events kept for reuse, one per stream that other work had to wait for.
const MAX_EVENTS: usize = 16;

fn is_per_thread(s: &Stream) -> bool {
    s.raw() as usize == PER_THREAD_STREAM
}

/// A stream that used the memory; for the per-thread default stream, with the thread
/// whose stream it is.
#[derive(Clone)]
struct User {
    stream: Stream,
    thread: Option<ThreadId>,
}

impl User {
    fn of(stream: &Stream) -> User {
        User {
            stream: stream.clone(),
            thread: is_per_thread(stream).then(|| std::thread::current().id()),
        }
    }

    fn key(&self) -> UserKey {
        UserKey {
            stream: self.stream.raw() as usize,
            thread: self.thread,
            ctx: self.stream.context().raw() as usize,
        }
    }

    /// True when both are one stream, whose order covers both uses.
    fn same(&self, other: &User) -> bool {
        self.stream.raw() == other.stream.raw()
            && self.thread == other.thread
            && self.stream.context() == other.stream.context()
    }

    /// True when this thread can queue work on the stream (everyone but another
    /// thread's per-thread stream).
    fn reachable_here(&self) -> bool {
        self.thread.is_none_or(|t| t == std::thread::current().id())
    }
}

/// An event owned by a log, created and recorded without taking the context's queued
/// errors.
struct LogEvent {
    raw: CUevent,
    ctx: Context,
}

impl LogEvent {
    fn new(ctx: &Context) -> Result<LogEvent> {
        ctx.make_current()?;
        let mut raw: CUevent = std::ptr::null_mut();
        // SAFETY: writes one event handle, destroyed in Drop. CU_EVENT_DISABLE_TIMING = 2.
        unsafe { call!(cuEventCreate(&mut raw, 2))? };
        Ok(LogEvent {
            raw,
            ctx: ctx.clone(),
        })
    }
}

impl Drop for LogEvent {
    fn drop(&mut self) {
        let destroyed = self.ctx.make_current().and_then(|()| {
            // SAFETY: created in `new`, destroyed once; the driver keeps a pending
            // record alive until it completes.
            unsafe { call!(cuEventDestroy_v2(self.raw)) }
        });
        if let Err(e) = destroyed {
            self.ctx.defer_error(e);
        }
    }
}

// SAFETY: an event handle may be used from any thread of its context's process.
unsafe impl Send for LogEvent {}
// SAFETY: as above; the log's mutex serializes its use.
unsafe impl Sync for LogEvent {}

#[derive(Default)]
struct UseState {
    /// The stream whose work last wrote the memory (the allocating stream of a
    /// stream-ordered allocation counts as a writer).
    writer: Option<User>,
    /// Streams that read it since that write (never the writer itself).
    readers: Vec<User>,
    /// Reusable events, one per stream that was waited for.
    events: Vec<(User, LogEvent)>,
    /// Uses handed out whose work is not queued yet.
    pending: Vec<Pending>,
    /// The next pending use's id.
    next_id: u64,
    /// Threads waiting on the condition variable for a pending use to go.
    waiters: usize,
}

/// Which streams use one piece of memory; see the module docs.
///
/// Owners of memory hold one (shared by `Arc` with the views and aliases that must see the
/// same uses) and hand it out only inside `DeviceRange`s.
#[derive(Default)]
pub struct UseLog(Mutex<UseState>, Condvar);

impl std::fmt::Debug for UseLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.lock();
        f.debug_struct("UseLog")
            .field("writer", &st.writer.as_ref().map(|w| w.stream.raw()))
            .field("readers", &st.readers.len())
            .finish()
    }
}

impl UseLog {
    /// An empty log: no work uses the memory yet.
    pub fn new() -> UseLog {
        UseLog::default()
    }

    /// The log of memory allocated stream-ordered on `stream`: work on other streams
    /// waits for the allocation.
    pub fn written_on(stream: &Stream) -> UseLog {
        UseLog(
            Mutex::new(UseState {
                writer: Some(User::of(stream)),
                ..UseState::default()
            }),
            Condvar::new(),
        )
    }

    fn lock(&self) -> MutexGuard<'_, UseState> {
        // A panic while the lock was held left a consistent state (each change is one
        // assignment after the waits succeeded), so a poisoned log is still usable.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// True when nothing is recorded (no stream other than the host may still use it).
    pub fn is_idle(&self) -> bool {
        let st = self.lock();
        st.writer.is_none() && st.readers.is_empty() && st.pending.is_empty()
    }

    /// Waits until no pending use that `conflicting` selects is left (the threads holding
    /// them queue their work and drop their [`InUse`]), and returns the lock. Fails
    /// instead when this thread holds a pending use itself: it could be one another
    /// waiter waits for, and waiting would close a cycle.
    fn wait_for_pending<'s>(
        &'s self,
        mut st: MutexGuard<'s, UseState>,
        what: &str,
        conflicting: impl Fn(&Pending) -> bool,
    ) -> Result<MutexGuard<'s, UseState>> {
        let me = thread_tag();
        while let Some(p) = st.pending.iter().find(|p| conflicting(p)) {
            let owner = p.thread;
            if owner == me {
                return Err(Error::invalid(format!(
                    "{what} conflicts with this thread's own use of the memory on another \
                     stream, whose work is not queued yet"
                )));
            }
            // A thread that holds no pending use cannot be waited for, so its wait closes
            // no cycle; one that does registers whom it waits for, and refuses a wait that
            // would close a cycle.
            let _edge = if HELD.with(Cell::get) > 0 {
                Some(WaitEdge::register(me, owner).ok_or_else(|| {
                    Error::invalid(format!(
                        "{what} conflicts with another thread's use of the memory whose \
                         work is being queued right now, while that thread waits for this \
                         one; order the two threads' work on this memory (they race)"
                    ))
                })?)
            } else {
                None
            };
            st.waiters += 1;
            st = self.1.wait(st).unwrap_or_else(PoisonError::into_inner);
            st.waiters -= 1;
        }
        Ok(st)
    }

    /// Orders `stream` after the conflicting uses recorded so far, records this one and
    /// hands it out as pending until the returned [`InUse`] is dropped.
    pub(crate) fn note(
        &self,
        stream: &Stream,
        access: Access,
        ptr: CUdeviceptr,
    ) -> Result<InUse<'_>> {
        super::capture::on_use(self as *const UseLog as usize, stream, access)?;
        let me = User::of(stream);
        let key = me.key();
        let st = self.lock();
        let mut st = self.wait_for_pending(st, "a use of memory by work on a stream", |p| {
            p.user != key && conflicts(p.access, access)
        })?;
        order(&mut st, me, stream, access)?;
        let id = st.next_id;
        st.next_id += 1;
        st.pending.push(Pending {
            id,
            user: key,
            access,
            thread: thread_tag(),
        });
        HELD.with(|h| h.set(h.get() + 1));
        Ok(InUse {
            ptr,
            log: Some(self),
            id,
            _thread_bound: PhantomData,
        })
    }

    /// Forgets a pending use: its work is queued (or was never queued).
    fn release(&self, id: u64) {
        let mut st = self.lock();
        if let Some(i) = st.pending.iter().position(|p| p.id == id) {
            st.pending.swap_remove(i);
            HELD.with(|h| h.set(h.get().saturating_sub(1)));
            // Waking costs a system call: only when someone waits.
            let wake = st.waiters > 0;
            drop(st);
            if wake {
                self.1.notify_all();
            }
        }
    }

    /// Waits on the host for the recorded work that conflicts with a host access: a read
    /// waits for the last write, a write (or a free) for everything.
    pub fn wait_on_host(&self, access: Access) -> Result<()> {
        let st = self.lock();
        let mut st = self.wait_for_pending(st, "a host access to memory", |p| {
            conflicts(p.access, access)
        })?;
        match access {
            Access::Read => {
                if let Some(w) = st.writer.clone() {
                    host_wait(&mut st, &w)?;
                    st.writer = None;
                }
                Ok(())
            }
            Access::Write => wait_all_on_host(&mut st),
        }
    }
}

/// Orders `stream` after the conflicting uses recorded so far and records this one.
fn order(st: &mut UseState, me: User, stream: &Stream, access: Access) -> Result<()> {
    let covered = match access {
        Access::Read => {
            st.writer.as_ref().is_some_and(|w| w.same(&me))
                || st.readers.iter().any(|r| r.same(&me))
        }
        Access::Write => st.writer.as_ref().is_some_and(|w| w.same(&me)) && st.readers.is_empty(),
    };
    if covered {
        return Ok(());
    }
    if is_capturing(stream)? {
        return Ok(());
    }
    match access {
        Access::Read => {
            if let Some(w) = st.writer.clone() {
                order_after(st, stream, &w)?;
            }
            if st.readers.len() >= MAX_READERS {
                wait_all_on_host(st)?;
            }
            st.readers.push(me);
        }
        Access::Write => {
            let earlier: Vec<User> = st
                .writer
                .iter()
                .chain(st.readers.iter())
                .filter(|x| !x.same(&me))
                .cloned()
                .collect();
            for x in &earlier {
                order_after(st, stream, x)?;
            }
            st.writer = Some(me);
            st.readers.clear();
        }
    }
    // Waiting for another context's stream made that context current; the caller
    // queues its work on `stream` next.
    stream.context().make_current()
}

/// Waits on the host for every recorded use and forgets them.
fn wait_all_on_host(st: &mut UseState) -> Result<()> {
    let all: Vec<User> = st.writer.iter().chain(st.readers.iter()).cloned().collect();
    for x in &all {
        host_wait(st, x)?;
    }
    st.writer = None;
    st.readers.clear();
    Ok(())
}

fn is_capturing(stream: &Stream) -> Result<bool> {
    if stream.raw().is_null() || is_per_thread(stream) {
        // The legacy streams cannot capture.
        return Ok(false);
    }
    stream.context().make_current()?;
    let mut status = rucuda_driver_sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: the stream is alive (we hold it); writes one status.
    unsafe { call!(cuStreamIsCapturing(stream.raw(), &mut status))? };
    Ok(status != rucuda_driver_sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
}

/// The log's event for `x` (a stream this thread can reach), recorded now at its end.
fn recorded_on<'s>(st: &'s mut UseState, x: &User) -> Result<&'s LogEvent> {
    if is_capturing(&x.stream)? {
        return Err(Error::Uncapturable {
            operation: "a wait for work queued on a capturing stream".into(),
            problem: "memory used by work on a stream that is now capturing a graph \
                      cannot be ordered before other work or a host access until the \
                      capture ends (a host read of such memory inside a capture, or its \
                      use on another stream)"
                .into(),
        });
    }
    let i = match st.events.iter().position(|(s, _)| s.same(x)) {
        Some(i) => i,
        None => {
            if st.events.len() >= MAX_EVENTS {
                st.events.remove(0);
            }
            let ev = LogEvent::new(x.stream.context())?;
            st.events.push((x.clone(), ev));
            st.events.len() - 1
        }
    };
    let ev = &st.events[i].1;
    ev.ctx.make_current()?;
    // SAFETY: event and stream are alive and of the same context; a per-thread stream
    // is only recorded on from its own thread (`reachable_here`).
    unsafe { call!(cuEventRecord(ev.raw, x.stream.raw()))? };
    Ok(ev)
}

/// Makes later work on `s` wait for the work queued so far on `x`.
fn order_after(st: &mut UseState, s: &Stream, x: &User) -> Result<()> {
    if !x.reachable_here() {
        return synchronize_context(x.stream.context());
    }
    let ev = recorded_on(st, x)?.raw;
    s.context().make_current()?;
    // SAFETY: both handles are alive; an event of another context may be waited for.
    unsafe { call!(cuStreamWaitEvent(s.raw(), ev, 0)) }
}

/// Waits on the host for the work queued so far on `x`.
fn host_wait(st: &mut UseState, x: &User) -> Result<()> {
    if !x.reachable_here() {
        return synchronize_context(x.stream.context());
    }
    let ev = recorded_on(st, x)?.raw;
    // SAFETY: the event is alive.
    unsafe { call!(cuEventSynchronize(ev)) }
}

fn synchronize_context(ctx: &Context) -> Result<()> {
    ctx.make_current()?;
    // SAFETY: synchronizes the current context, which we just made current.
    unsafe { call!(cuCtxSynchronize()) }
}

/// Finishes the legacy default stream of `ctx` (what the synchronous driver calls queue
/// on), so that a synchronous call has run when it returns.
pub(crate) fn finish_legacy_stream(ctx: &Context) -> Result<()> {
    ctx.make_current()?;
    // SAFETY: the null handle names the legacy default stream of the current context.
    unsafe { call!(cuStreamSynchronize(std::ptr::null_mut())) }
}

/// A use of memory by work about to be queued: the address the work takes, pending in the
/// memory's log until this is dropped. Keep it until the work is queued (a launch, copy or
/// memset call has returned), then let it go: conflicting uses by other threads wait for
/// the drop, since until then no event can cover the work.
///
/// It stays on the thread that made it.
#[must_use = "keep the use until the work that takes its address is queued"]
pub struct InUse<'a> {
    ptr: CUdeviceptr,
    log: Option<&'a UseLog>,
    id: u64,
    _thread_bound: PhantomData<*const ()>,
}

impl InUse<'_> {
    /// A use of untracked memory: nothing is pending.
    pub(super) fn untracked(ptr: CUdeviceptr) -> InUse<'static> {
        InUse {
            ptr,
            log: None,
            id: 0,
            _thread_bound: PhantomData,
        }
    }

    /// No memory: address 0, for an optional pointer argument left out.
    pub fn null() -> InUse<'static> {
        InUse::untracked(0)
    }

    /// The address for the work.
    #[inline]
    pub fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    /// The address as it lies in this value (what a kernel's pointer parameter reads).
    #[inline]
    pub(crate) fn ptr_word(&self) -> *const CUdeviceptr {
        &self.ptr
    }

    /// The same use, its address moved `bytes` further (an element inside the range).
    #[inline]
    pub fn offset(mut self, bytes: u64) -> Self {
        self.ptr += bytes;
        self
    }

    /// The same use with its borrow of the log widened to `'static`, for records that
    /// queue their work later and hold what keeps the memory alive.
    ///
    /// # Safety
    /// The memory's owner (and with it its log) must outlive the returned value.
    pub unsafe fn extend<'b>(self) -> InUse<'b> {
        let this = std::mem::ManuallyDrop::new(self);
        InUse {
            ptr: this.ptr,
            // SAFETY: the caller keeps the log alive for 'b.
            log: this.log.map(|l| unsafe { &*(l as *const UseLog) }),
            id: this.id,
            _thread_bound: PhantomData,
        }
    }
}

impl std::fmt::Debug for InUse<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InUse({:#x})", self.ptr)
    }
}

impl Drop for InUse<'_> {
    fn drop(&mut self) {
        if let Some(log) = self.log {
            log.release(self.id);
        }
    }
}
