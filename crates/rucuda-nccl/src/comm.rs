//! [`Communicator`]: one rank of an NCCL communicator, bound to one GPU's primary context:
//! what it is, waiting with a time limit, aborting and destroying. The `create` module
//! makes communicators; `collective` adds the operations.

use std::cell::Cell;
use std::ffi::c_int;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rucuda_driver::{Context, Device, Stream};

use crate::current::CurrentContextGuard;
use crate::error::{call, check, Error, Result};
use crate::group;
use crate::hold::{Hold, Holds};
use crate::sys::bindings::{ncclComm_t, ncclResult_t};

/// Environment variable that turns on [`Communicator::set_checked`] for every new
/// communicator (`1`).
pub const CHECK_ENV: &str = "RUCUDA_NCCL_CHECK";

/// Where a communicator stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Usable.
    Live,
    /// `ncclCommAbort` was called: the handle is gone, every call is an error.
    Aborted,
}

/// Errors that `Drop` met, for [`take_drop_errors`].
static DROP_ERRORS: Mutex<Vec<Error>> = Mutex::new(Vec::new());

/// Errors that dropping communicators met (a failed `ncclCommDestroy`), taken now.
/// [`Communicator::destroy`] returns its error directly instead.
pub fn take_drop_errors() -> Vec<Error> {
    DROP_ERRORS
        .lock()
        .map(|mut v| std::mem::take(&mut *v))
        .unwrap_or_default()
}

/// One rank of an NCCL communicator (`ncclComm_t`), on one GPU.
///
/// Made by [`init_rank`](Communicator::init_rank) (one rank in this thread; the usual
/// one-process-per-GPU layout), [`init_ranks`](Communicator::init_ranks) (several ranks
/// driven by this thread), [`init_all`](Communicator::init_all) (every GPU of this
/// process in one communicator) or [`split`](Communicator::split). Collectives are
/// methods (see the `collective` module); ranks driven by one thread must issue theirs
/// inside [`group`](crate::group()).
///
/// It may move to another thread (`Send`) but not be shared (`!Sync`): NCCL calls on one
/// communicator must not run concurrently. Dropping it destroys it (`ncclCommDestroy`,
/// which waits for its work), or aborts it when NCCL has reported an asynchronous error;
/// when a peer may be gone, [`wait`](Communicator::wait) with a time limit first (a wait
/// that times out aborts it). NCCL works in each device's primary context (the one the
/// CUDA runtime uses), so contexts given here must be primary.
///
/// ```no_run
/// use rucuda_driver::{Device, Stream};
/// use rucuda_nccl::{Communicator, ReduceOp, UniqueId};
/// // One process per GPU: rank 0 makes the id and sends it to the others.
/// let (rank, nranks) = (0, 1);
/// let id = UniqueId::new()?;
/// let ctx = Device::get(0)?.primary_context()?;
/// let comm = Communicator::init_rank(&ctx, nranks, &id, rank)?;
/// let stream = Stream::null(&ctx);
/// let mut x = rucuda_driver::DeviceBuffer::from_slice(&ctx, &[1.0f32, 2.0])?;
/// comm.all_reduce_in_place(&mut x, ReduceOp::Sum, &stream)?;
/// comm.wait(&stream, std::time::Duration::from_secs(60))?;
/// # Ok::<(), rucuda_nccl::Error>(())
/// ```
pub struct Communicator {
    raw: ncclComm_t,
    ctx: Context,
    rank: usize,
    size: usize,
    clique: u64,
    state: Cell<State>,
    checked: Cell<bool>,
    /// Calls recorded on it in unfinished groups, by thread.
    holds: Arc<Holds>,
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: an ncclComm_t may be used from any thread as long as calls do not overlap; the
// type is !Sync (PhantomData<Cell>), so only one thread at a time can reach it.
unsafe impl Send for Communicator {}

impl fmt::Debug for Communicator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Communicator")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("device", &self.ctx.device().ordinal())
            .field("state", &self.state.get())
            .finish()
    }
}

impl Communicator {
    /// A communicator over `raw`, rank `rank` of `size` on `ctx`'s device; `clique` names
    /// the communicator in this process (for the agreement check of groups).
    pub(crate) fn wrap(
        raw: ncclComm_t,
        ctx: &Context,
        rank: usize,
        size: usize,
        clique: u64,
    ) -> Self {
        let checked = std::env::var(CHECK_ENV).is_ok_and(|v| v == "1");
        Communicator {
            raw,
            ctx: ctx.clone(),
            rank,
            size,
            clique,
            state: Cell::new(State::Live),
            checked: Cell::new(checked),
            holds: Arc::default(),
            _not_sync: PhantomData,
        }
    }

    /// This rank's number, `0..size()`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The GPU this rank runs on.
    pub fn device(&self) -> Device {
        self.ctx.device()
    }

    /// The primary context of that GPU.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The raw handle (null after [`abort`](Communicator::abort)).
    pub fn raw(&self) -> ncclComm_t {
        match self.state.get() {
            State::Live => self.raw,
            State::Aborted => std::ptr::null_mut(),
        }
    }

    /// True once [`abort`](Communicator::abort) ran (or a timed-out wait aborted it).
    pub fn is_aborted(&self) -> bool {
        self.state.get() == State::Aborted
    }

    /// Asks NCCL again for rank, size and device (`ncclCommUserRank`, `ncclCommCount`,
    /// `ncclCommCuDevice`): `(rank, size, device ordinal)`. The cached
    /// [`rank`](Communicator::rank) and [`size`](Communicator::size) say the same.
    pub fn query(&self) -> Result<(usize, usize, usize)> {
        self.ensure_live("query")?;
        let (rank, size) = query_rank_size(self.raw)?;
        let mut device: c_int = -1;
        // SAFETY: the handle is live; writes one int.
        unsafe { call!(self.raw, ncclCommCuDevice(self.raw, &mut device))? };
        let device = usize::try_from(device)
            .map_err(|_| Error::invalid(format!("NCCL reported device {device}")))?;
        Ok((rank, size, device))
    }

    /// NCCL's asynchronous error for this communicator (`ncclCommGetAsyncError`):
    /// `Ok(())` while none happened; an [`Error::Nccl`] naming `ncclCommGetAsyncError`
    /// with the code (a peer failed, the network broke) otherwise.
    pub fn async_error(&self) -> Result<()> {
        self.ensure_live("async_error")?;
        let mut code = ncclResult_t::ncclSuccess;
        // SAFETY: the handle is live; writes one result.
        unsafe { call!(self.raw, ncclCommGetAsyncError(self.raw, &mut code))? };
        if code == ncclResult_t::ncclInProgress {
            return Ok(());
        }
        check(code, "ncclCommGetAsyncError", self.raw)
    }

    /// Waits until `stream` has run its work, checking NCCL's asynchronous error while it
    /// waits. When an asynchronous error appears, or the work is not done after `timeout`
    /// (a peer died or never called the same collective), the communicator is aborted
    /// and the error (or [`Error::Timeout`]) returned: a failure elsewhere is then an
    /// error here, not a hang.
    pub fn wait(&self, stream: &Stream, timeout: Duration) -> Result<()> {
        self.ensure_live("wait")?;
        let start = Instant::now();
        let mut pause = Duration::from_micros(20);
        loop {
            if stream.is_done()? {
                return self.async_error();
            }
            if let Err(e) = self.async_error() {
                let _ = self.abort();
                return Err(e);
            }
            if start.elapsed() >= timeout {
                self.abort()?;
                return Err(Error::Timeout {
                    waited: start.elapsed(),
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(2));
        }
    }

    /// Aborts the communicator (`ncclCommAbort`): stops its pending operations and frees
    /// it. Every later call on it returns [`Error::Aborted`]; calling `abort` again does
    /// nothing. The other ranks must abort theirs too (their operations with this rank
    /// can no longer finish): [`wait`](Communicator::wait) with a time limit does that.
    ///
    /// Refused ([`Error::InvalidArgument`], nothing done) while an unfinished
    /// [`group`](crate::group()) on another thread holds calls recorded on it (the
    /// communicator was moved here from inside that group's closure).
    pub fn abort(&self) -> Result<()> {
        if self.state.get() == State::Aborted {
            return Ok(());
        }
        self.not_held_elsewhere("abort")?;
        self.state.set(State::Aborted);
        // Calls recorded on it in an unfinished group can no longer be issued.
        group::comm_ending(self.raw);
        self.not_held_at_all("abort")?;
        let _current = CurrentContextGuard::switch_to(&self.ctx)?;
        // SAFETY: the handle was live and is not used again (the state says aborted).
        unsafe { call!(std::ptr::null_mut(), ncclCommAbort(self.raw)) }
    }

    /// Finishes this rank's pending operations and releases its network resources
    /// (`ncclCommFinalize`), before [`destroy`](Communicator::destroy). Optional:
    /// destroying finalizes too.
    pub fn finalize(&self) -> Result<()> {
        self.ensure_live("finalize")?;
        self.ctx.bind()?;
        let _restore = CurrentContextGuard::new()?;
        // SAFETY: the handle is live.
        unsafe { call!(self.raw, ncclCommFinalize(self.raw)) }
    }

    /// Destroys the communicator now (`ncclCommDestroy`) and returns its error, which a
    /// plain drop can only queue (see [`take_drop_errors`]). An aborted communicator has
    /// nothing left to destroy. While an unfinished [`group`](crate::group()) on another
    /// thread holds calls recorded on it, its handle is left to that group (not destroyed:
    /// it stays allocated for the rest of the process) and an error says so.
    pub fn destroy(self) -> Result<()> {
        let result = self.release();
        self.state.set(State::Aborted);
        result
    }

    fn release(&self) -> Result<()> {
        if self.state.get() == State::Aborted {
            return Ok(());
        }
        // Calls recorded on it in an unfinished group can no longer be issued.
        group::comm_ending(self.raw);
        if let Err(e) = self.not_held_at_all("destroy") {
            self.state.set(State::Aborted);
            return Err(e);
        }
        let _current = CurrentContextGuard::switch_to(&self.ctx)?;
        // Destroying waits for the communicator's operations, which never end when a
        // peer failed: abort instead when NCCL reports an error.
        let mut code = ncclResult_t::ncclSuccess;
        // SAFETY: the handle is live; writes one result.
        let query = unsafe { call!(self.raw, ncclCommGetAsyncError(self.raw, &mut code)) };
        if query.is_err()
            || (code != ncclResult_t::ncclSuccess && code != ncclResult_t::ncclInProgress)
        {
            self.state.set(State::Aborted);
            // SAFETY: the handle is live and not used again.
            return unsafe { call!(std::ptr::null_mut(), ncclCommAbort(self.raw)) };
        }
        // SAFETY: the handle is live and not used again.
        unsafe { call!(std::ptr::null_mut(), ncclCommDestroy(self.raw)) }
    }

    /// Turns the cross-rank check on or off. When on, every collective issued outside a
    /// group first all-gathers a 32-byte description of itself (kind, type, count,
    /// reduction, root) and compares them on the host: ranks that disagree get
    /// [`Error::RankMismatch`] on every rank instead of a hang or wrong data. It costs a
    /// small all-gather and a stream synchronisation per collective, so it is a debugging
    /// aid; `RUCUDA_NCCL_CHECK=1` turns it on for every new communicator.
    pub fn set_checked(&self, on: bool) {
        self.checked.set(on);
    }

    /// Whether the cross-rank check is on (see [`set_checked`](Communicator::set_checked)).
    pub fn is_checked(&self) -> bool {
        self.checked.get()
    }

    /// Gives up the handle: NCCL cleans it up itself (a failed creation), so no later
    /// call or drop touches it.
    pub(crate) fn mark_aborted(&self) {
        self.state.set(State::Aborted);
    }

    /// The number that names this communicator in this process.
    pub(crate) fn clique(&self) -> u64 {
        self.clique
    }

    /// Fails with [`Error::Aborted`] once the communicator was aborted, and while a
    /// group on another thread holds calls recorded on it (NCCL calls on one communicator
    /// must not overlap; see [`Hold`]).
    #[inline]
    pub(crate) fn ensure_live(&self, call: &'static str) -> Result<()> {
        match self.state.get() {
            State::Live => self.not_held_elsewhere(call),
            State::Aborted => Err(Error::Aborted { call }),
        }
    }

    fn not_held_elsewhere(&self, call: &str) -> Result<()> {
        if self.holds.elsewhere() {
            return Err(Error::invalid(format!(
                "{call}: an unfinished group on another thread holds calls recorded on this \
                 communicator (it was moved out of that group's closure); use it there, or \
                 after that group returned"
            )));
        }
        Ok(())
    }

    /// After `group::comm_ending` dropped this thread's recorded calls: fails when any
    /// call recorded on the communicator is still held (by a group on another thread, or
    /// one this thread could not reach), in which case the handle must be left allocated
    /// (leaked) for that group to issue on.
    fn not_held_at_all(&self, call: &str) -> Result<()> {
        if self.holds.is_empty() {
            return Ok(());
        }
        Err(Error::invalid(format!(
            "{call}: a group that has not returned yet holds calls recorded on this \
             communicator; its handle is left allocated (not freed) for that group"
        )))
    }

    /// A [`Hold`] for a call recorded on this communicator by this thread's group.
    pub(crate) fn hold(&self) -> Hold {
        self.holds.hold()
    }

    /// The live handle, for the collectives.
    #[inline]
    pub(crate) fn handle(&self) -> ncclComm_t {
        self.raw
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            if let Ok(mut v) = DROP_ERRORS.lock() {
                v.push(e);
            }
        }
    }
}

/// Rank and size as NCCL reports them for a live handle.
pub(crate) fn query_rank_size(raw: ncclComm_t) -> Result<(usize, usize)> {
    let (mut rank, mut size): (c_int, c_int) = (-1, -1);
    // SAFETY: the handle is live; each writes one int.
    unsafe {
        call!(raw, ncclCommUserRank(raw, &mut rank))?;
        call!(raw, ncclCommCount(raw, &mut size))?;
    }
    match (usize::try_from(rank), usize::try_from(size)) {
        (Ok(r), Ok(s)) => Ok((r, s)),
        _ => Err(Error::invalid(format!(
            "NCCL reported rank {rank} of {size}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn communicators_are_send_not_sync() {
        fn send<T: Send>() {}
        send::<Communicator>();
        // `Communicator: !Sync` holds through PhantomData<Cell<()>>; a compile-fail test
        // would say so more loudly, but the type's fields make it plain.
    }

    #[test]
    fn drop_errors_start_empty() {
        assert!(take_drop_errors().is_empty());
    }
}
