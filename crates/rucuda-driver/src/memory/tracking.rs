//! GPU use tracking: the one structure through which every device address reaches queued
//! work.
//!
//! Each piece of memory that work can use (a [`DeviceBuffer`](crate::DeviceBuffer), page-
//! locked or registered host memory, managed, pitched and IPC memory, a pool block) owns
//! one [`UseLog`]: the stream whose work last wrote it, and the streams that read it since.
//! A [`DeviceRange`] is a range of such memory together with its log, and
//! [`DeviceRange::use_on`] is the only way to the range's address for work about to be
//! queued. It
//!
//! - orders the stream after earlier conflicting work on other streams (a read waits for
//!   the last write; a write waits for the last write and every read since), by recording
//!   an event on the earlier stream and making the new stream wait for it;
//! - notes the stream in the log, so that later conflicting work, host access
//!   ([`DeviceRange::wait_on_host`]) and the free wait for it in the same way.
//!
//! Nothing is recorded while work stays on one stream: stream order already covers it,
//! and the fast path is one uncontended lock and a comparison. Events are recorded
//! lazily, when another stream (or the host, or the free) needs to wait: an event recorded
//! on a stream *now* follows every use queued there before, so it is as good as one
//! recorded right after the use. The per-thread default stream's handle names another
//! stream on every host thread, so its uses are kept with their thread: waiting for one
//! from another thread synchronizes their context instead.
//!
//! Work queued on a stream that captures a graph is not tracked: it runs when the graph is
//! launched, and keeping its memory alive until then is the (unsafe) graph launch's
//! contract.
//!
//! Recording and waiting never go through [`Context::bind`](crate::Context::bind), so an
//! unrelated error queued by a destructor cannot make them skip their work.
//!
//! A use is *pending* from [`DeviceRange::use_on`] until the [`InUse`] it returned is
//! dropped, which the caller does after queueing the work. Until then no event can cover
//! the work, so conflicting uses from other threads wait for the drop (a wait that would
//! close a cycle of threads waiting for each other fails with an error instead of
//! deadlocking), and a conflicting use on another stream by the same thread fails. This
//! closes the window between noting a use and queueing its work, in which another thread
//! could otherwise order its work after an event that does not yet cover it.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;

use rucuda_driver_sys::{CUdeviceptr, CUevent};

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::streams::stream::Stream;

/// How queued work uses memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// The work only reads it.
    Read,
    /// The work may write it (and read it).
    Write,
}

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

/// A use handed out by [`DeviceRange::use_on`] whose work is not queued yet.
struct Pending {
    id: u64,
    user: UserKey,
    access: Access,
    thread: u64,
}

/// What tells two users apart ([`User::same`]), without holding the stream.
#[derive(Clone, Copy, PartialEq, Eq)]
struct UserKey {
    stream: usize,
    thread: Option<ThreadId>,
    ctx: usize,
}

thread_local! {
    /// This thread's tag in pending uses (cheaper than `thread::current().id()`).
    static THREAD_TAG: u64 = {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
    };
    /// Pending uses this thread holds (across all logs).
    static HELD: Cell<usize> = const { Cell::new(0) };
}

fn thread_tag() -> u64 {
    THREAD_TAG.with(|t| *t)
}

/// Which thread waits for which (by tag): the threads that hold pending uses and wait
/// for another thread's. Each thread waits for one at a time.
static WAITS: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// A registered wait of one thread for another, removed on drop.
struct WaitEdge(u64);

impl WaitEdge {
    /// Registers that `me` waits for `owner`, or `None` when `owner` waits (through
    /// others) for `me`: the wait would never end.
    fn register(me: u64, owner: u64) -> Option<WaitEdge> {
        let mut waits = WAITS.lock().unwrap_or_else(PoisonError::into_inner);
        let mut at = owner;
        for _ in 0..=waits.len() {
            if at == me {
                return None;
            }
            match waits.iter().find(|(w, _)| *w == at) {
                Some(&(_, next)) => at = next,
                None => break,
            }
        }
        waits.push((me, owner));
        Some(WaitEdge(me))
    }
}

impl Drop for WaitEdge {
    fn drop(&mut self) {
        let mut waits = WAITS.lock().unwrap_or_else(PoisonError::into_inner);
        waits.retain(|(w, _)| *w != self.0);
    }
}

fn conflicts(a: Access, b: Access) -> bool {
    a == Access::Write || b == Access::Write
}

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

/// Which streams use one piece of memory; see the [module docs](self).
///
/// Owners of memory hold one (shared by `Arc` with the views and aliases that must see the
/// same uses) and hand it out only inside [`DeviceRange`]s.
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
        return Err(Error::invalid(
            "memory used by work on a stream that is now capturing a graph cannot be \
             ordered before other work until the capture ends",
        ));
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
    /// No memory: address 0, for an optional pointer argument left out.
    pub fn null() -> InUse<'static> {
        InUse {
            ptr: 0,
            log: None,
            id: 0,
            _thread_bound: PhantomData,
        }
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

/// A range of memory together with the log of its uses: what work receives memory as.
/// [`DeviceRange::use_on`] is the one way to its address for queued work.
///
/// Safe code gets ranges from memory owners ([`DevicePtr::device_range`]), never from an
/// address; [`DeviceRange::untracked`] is `unsafe`.
#[derive(Clone, Copy)]
pub struct DeviceRange<'a> {
    ptr: CUdeviceptr,
    bytes: usize,
    log: Option<&'a UseLog>,
}

impl std::fmt::Debug for DeviceRange<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceRange")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("bytes", &self.bytes)
            .field("tracked", &self.log.is_some())
            .finish()
    }
}

impl<'a> DeviceRange<'a> {
    /// `bytes` bytes at `ptr` whose uses `log` records.
    ///
    /// # Safety
    /// The range must be memory that stays valid for `'a` and for all work queued through
    /// [`DeviceRange::use_on`] until `log` has seen it finish (the owner's free waits on
    /// the log), and `log` must be the one log every user of that memory goes through.
    pub unsafe fn new(ptr: CUdeviceptr, bytes: usize, log: &'a UseLog) -> DeviceRange<'a> {
        DeviceRange {
            ptr,
            bytes,
            log: Some(log),
        }
    }

    /// A range nobody tracks (memory from another library).
    ///
    /// # Safety
    /// The memory must stay valid until all work queued with it has finished, and nobody
    /// may write it (on the host or the device) while work that uses it is queued.
    pub unsafe fn untracked(ptr: CUdeviceptr, bytes: usize) -> DeviceRange<'a> {
        DeviceRange {
            ptr,
            bytes,
            log: None,
        }
    }

    /// Size in bytes.
    #[inline]
    pub fn byte_len(&self) -> usize {
        self.bytes
    }

    /// The address for work about to be queued on `stream`, which uses the range as
    /// `access` says: orders `stream` after conflicting earlier work on other streams and
    /// records the use, so that later conflicting work, host access and the free wait for
    /// it. Call it right before queueing the work, on the thread that queues it, and keep
    /// the returned [`InUse`] until the work is queued.
    #[inline]
    pub fn use_on(&self, stream: &Stream, access: Access) -> Result<InUse<'a>> {
        match self.log {
            Some(log) => log.note(stream, access, self.ptr),
            None => Ok(InUse {
                ptr: self.ptr,
                log: None,
                id: 0,
                _thread_bound: PhantomData,
            }),
        }
    }

    /// Waits on the host until no queued work conflicts with a host access of this kind
    /// (a read waits for writes; a write for every use).
    pub fn wait_on_host(&self, access: Access) -> Result<()> {
        match self.log {
            Some(log) => log.wait_on_host(access),
            None => Ok(()),
        }
    }

    /// `bytes` bytes from `offset` on, with the same log.
    pub fn sub(&self, offset: usize, bytes: usize) -> Result<DeviceRange<'a>> {
        match offset.checked_add(bytes) {
            Some(end) if end <= self.bytes => Ok(DeviceRange {
                ptr: self.ptr + offset as u64,
                bytes,
                log: self.log,
            }),
            _ => Err(Error::invalid(format!(
                "bytes {offset}..{offset}+{bytes} lie outside a range of {} bytes",
                self.bytes
            ))),
        }
    }

    /// True when the two ranges share a byte.
    pub fn overlaps(&self, other: &DeviceRange<'_>) -> bool {
        let (a0, a1) = (self.ptr, self.ptr + self.bytes as u64);
        let (b0, b1) = (other.ptr, other.ptr + other.bytes as u64);
        a0 < b1 && b0 < a1
    }

    /// True when both ranges start at the same address.
    pub fn same_start(&self, other: &DeviceRange<'_>) -> bool {
        self.ptr == other.ptr
    }

    /// True when both ranges record their uses in one log (views of one allocation).
    pub fn same_log(&self, other: &DeviceRange<'_>) -> bool {
        match (self.log, other.log) {
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            _ => false,
        }
    }

    /// True when the start address is a multiple of `align` bytes (for choosing vector
    /// loads; not an address for work).
    pub fn is_aligned(&self, align: usize) -> bool {
        align == 0 || self.ptr % align as u64 == 0
    }

    /// The log (`None` for untracked memory), for builders that record the use when
    /// their work is queued.
    #[inline]
    pub(crate) fn log(&self) -> Option<&'a UseLog> {
        self.log
    }

    /// The start address for calls that queue no work: pointer attributes, IPC handles,
    /// identity and alignment checks. Work takes its address from
    /// [`DeviceRange::use_on`]; only `unsafe` code could queue work with this one.
    #[inline]
    pub fn address(&self) -> CUdeviceptr {
        self.ptr
    }
}

/// Anything that names device memory: buffers, views, and the other memory kinds. Work
/// receives it as a [`DeviceRange`], whose [`use_on`](DeviceRange::use_on) records the
/// use.
pub trait DevicePtr {
    /// The memory with the log of its uses.
    fn device_range(&self) -> DeviceRange<'_>;

    /// The size in bytes.
    #[inline]
    fn byte_len(&self) -> usize {
        self.device_range().byte_len()
    }
}

impl<P: DevicePtr + ?Sized> DevicePtr for &P {
    fn device_range(&self) -> DeviceRange<'_> {
        (**self).device_range()
    }
}

impl<P: DevicePtr + ?Sized> DevicePtr for &mut P {
    fn device_range(&self) -> DeviceRange<'_> {
        (**self).device_range()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_check_their_bounds_and_overlaps() {
        let log = UseLog::new();
        // SAFETY: no work is queued with these ranges.
        let r = unsafe { DeviceRange::new(0x1000, 256, &log) };
        assert_eq!(r.sub(16, 240).unwrap().byte_len(), 240);
        assert!(r.sub(16, 241).is_err());
        assert!(r.sub(usize::MAX, 2).is_err());
        let a = r.sub(0, 16).unwrap();
        let b = r.sub(16, 16).unwrap();
        assert!(!a.overlaps(&b));
        assert!(r.overlaps(&b));
        assert!(a.same_log(&b));
        // SAFETY: as above.
        let other = unsafe { DeviceRange::untracked(0x1000, 4) };
        assert!(!other.same_log(&a) && other.overlaps(&a));
        assert!(r.is_aligned(256) && !b.is_aligned(32));
        assert!(log.is_idle());
    }

    #[test]
    fn a_wait_that_would_close_a_cycle_is_refused() {
        // Tags far from the ones real threads get.
        let (t1, t2, t3) = (u64::MAX - 3, u64::MAX - 2, u64::MAX - 1);
        let e12 = WaitEdge::register(t1, t2).expect("t1 may wait for t2");
        let e23 = WaitEdge::register(t2, t3).expect("t2 may wait for t3");
        assert!(WaitEdge::register(t3, t1).is_none(), "t3 -> t1 -> t2 -> t3");
        assert!(
            WaitEdge::register(t3, t3).is_none(),
            "a thread never waits for itself"
        );
        drop(e12);
        let e31 = WaitEdge::register(t3, t1).expect("t1 waits for nobody now");
        drop((e23, e31));
        let waits = WAITS.lock().unwrap();
        assert!(!waits.iter().any(|(w, _)| [t1, t2, t3].contains(w)));
    }

    #[test]
    fn an_untracked_use_is_never_pending() {
        // SAFETY: no work is queued with this range.
        let r = unsafe { DeviceRange::untracked(0x2000, 8) };
        let held_before = HELD.with(Cell::get);
        let null = InUse::null();
        assert_eq!((null.ptr(), HELD.with(Cell::get)), (0, held_before));
        assert_eq!(r.address(), 0x2000);
    }
}
