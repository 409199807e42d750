//! Group calls: several NCCL operations issued as one (`ncclGroupStart` /
//! `ncclGroupEnd`), which is how one thread drives several ranks and how send/recv pairs
//! are issued without deadlock.
//!
//! [`group`] records before it issues. Inside its closure every collective, send and
//! receive is checked in Rust as usual and, when valid, *recorded* (the NCCL call's
//! arguments: communicator, device pointers, count, type, reduction, root or peer,
//! stream) in a list of this thread; NCCL sees nothing yet. When the closure returns,
//! [`group`] decides:
//! - every call was valid and the closure returned `Ok`, and the ranks this thread drives
//!   agree: `ncclGroupStart`, the recorded calls in order, `ncclGroupEnd`;
//! - otherwise nothing at all reaches NCCL, and the error is returned: the closure's, or
//!   [`Error::GroupCancelled`] when a call failed but the closure ignored its error, or
//!   [`Error::RankMismatch`]; a panic in the closure is passed on, with nothing issued.
//!
//! So **all or nothing** does not depend on how NCCL treats a group with an error in it:
//! a failed group never had an NCCL group opened. Without this, the operations recorded
//! before the failure would launch alone and wait forever for their missing partners.
//!
//! **Agreement between the ranks this thread drives**: operations on ranks of one
//! communicator recorded in the group are compared before anything is issued (same
//! collectives in the same order with the same types, counts, reductions and roots; each
//! send matched by its receive).
//!
//! Groups nest by flattening: an inner [`group`] only records, and the outermost issues
//! everything; a failure anywhere inside cancels the whole outermost group.

use std::any::Any;
use std::cell::RefCell;
use std::collections::BTreeMap;

use rucuda_driver::{Context, InUse};

use crate::collective::{enqueue, Plan};
use crate::comm::Hold;
use crate::dtype::{DataType, ReduceOp};
use crate::error::{check, Error, Result};
use crate::sys::bindings::{cudaStream_t, ncclComm_t};

/// What kind of operation a [`Signature`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum OpKind {
    AllReduce,
    Broadcast,
    Reduce,
    AllGather,
    ReduceScatter,
    Send,
    Recv,
}

impl OpKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            OpKind::AllReduce => "all_reduce",
            OpKind::Broadcast => "broadcast",
            OpKind::Reduce => "reduce",
            OpKind::AllGather => "all_gather",
            OpKind::ReduceScatter => "reduce_scatter",
            OpKind::Send => "send",
            OpKind::Recv => "recv",
        }
    }
}

/// One operation as every rank must see it (what NCCL is told, not the Rust types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Signature {
    pub kind: OpKind,
    pub data_type: DataType,
    /// The count NCCL is given (per rank for all-gather and reduce-scatter).
    pub count: usize,
    pub op: Option<ReduceOp>,
    pub root: Option<usize>,
    /// The other rank of a send or receive.
    pub peer: Option<usize>,
}

impl Signature {
    pub(crate) fn describe(&self) -> String {
        let mut s = format!(
            "{} of {} x {:?}",
            self.kind.name(),
            self.count,
            self.data_type
        );
        if let Some(op) = self.op {
            s.push_str(&format!(" ({})", op.name()));
        }
        if let Some(root) = self.root {
            s.push_str(&format!(" root {root}"));
        }
        if let Some(peer) = self.peer {
            s.push_str(&format!(" peer {peer}"));
        }
        s
    }

    /// Four words that are equal on two ranks exactly when their collectives agree
    /// (peers excepted: they differ by design).
    pub(crate) fn encode(&self) -> [u64; 4] {
        let op = self.op.map_or(0xff, |o| u64::from(o.raw().0));
        let root = self.root.map_or(u64::MAX, |r| r as u64);
        [
            0x7275_6375_6461_0000 | (self.kind as u64) << 8 | op,
            u64::from(self.data_type.raw().0),
            self.count as u64,
            root,
        ]
    }
}

/// One NCCL call recorded inside a group, issued when the outermost group ends: the
/// call's arguments, checked by [`plan`](crate::collective::plan) when it was recorded,
/// and what keeps the memory, stream and communicator they point at alive until then.
pub(crate) struct Pending {
    /// The communicator's handle.
    pub comm: ncclComm_t,
    /// Which communicator it belongs to, and its rank there (for the agreement check).
    pub clique: u64,
    pub rank: usize,
    /// The operation and its device pointers.
    pub plan: Plan,
    /// The stream it is queued on.
    pub stream: cudaStream_t,
    /// The communicator's context, made current before the call (`None` in tests).
    pub ctx: Option<Context>,
    /// The uses of the memory in `plan`, pending until the call is issued (dropped
    /// before `keep`, which owns that memory inside a group).
    #[allow(dead_code)] // Kept for what its drop does.
    pub uses: Vec<InUse<'static>>,
    /// Keeps `comm` from being destroyed by a drop on another thread while recorded
    /// (`None` outside a group and in tests; see [`Hold`]).
    #[allow(dead_code)] // Kept for what its drop does.
    pub hold: Option<Hold>,
    /// Owners of the memory in `plan` and of the stream ([`GpuArray`] views, a
    /// [`Stream`] clone), dropped once the call was issued or the group cancelled.
    ///
    /// [`GpuArray`]: rucuda_array::GpuArray
    /// [`Stream`]: rucuda_driver::Stream
    #[allow(dead_code)] // Kept for what its drop does.
    pub keep: Vec<Box<dyn Any>>,
}

#[derive(Default)]
struct GroupState {
    depth: usize,
    ops: Vec<Pending>,
    failed: bool,
}

thread_local! {
    static STATE: RefCell<GroupState> = RefCell::new(GroupState::default());
}

/// How deep in [`group`] calls this thread is (0: outside any).
pub(crate) fn depth() -> usize {
    STATE.with(|s| s.borrow().depth)
}

/// Records a checked call in the current group, to be issued when the outermost group
/// ends. Returns the call back when this thread is outside any group (issue it now).
pub(crate) fn record(op: Pending) -> Option<Pending> {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.depth == 0 {
            return Some(op);
        }
        s.ops.push(op);
        None
    })
}

/// Notes that an operation of the current group failed (no-op outside a group): the
/// group will issue nothing even if the caller goes on.
pub(crate) fn note_failure() {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.depth > 0 {
            s.failed = true;
        }
    });
}

/// Called before a communicator's handle is destroyed or aborted: calls recorded on it in
/// this thread's group can no longer be issued, so they are dropped and the group is
/// cancelled (it issues nothing and returns [`Error::GroupCancelled`]).
pub(crate) fn comm_ending(comm: ncclComm_t) {
    // `try_with`: a communicator may be dropped while this thread's locals are torn down.
    let _ = STATE.try_with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return;
        };
        if s.ops.iter().any(|p| p.comm == comm) {
            s.ops.retain(|p| p.comm != comm);
            s.failed = true;
        }
    });
}

/// Runs `f` as one NCCL group: the operations it issues are recorded, and launched
/// together when it returns (`ncclGroupStart`, each call, `ncclGroupEnd`). One thread
/// driving several ranks must issue their collectives in a group, and a rank's sends and
/// receives with several peers go in one group.
///
/// When `f` returns an error or panics, or an operation inside it failed (even one whose
/// error `f` ignored: the result is then [`Error::GroupCancelled`]), or ranks of one
/// communicator that this thread drives disagree ([`Error::RankMismatch`]), nothing of
/// the group reaches NCCL. See the module's notes.
///
/// Groups nest by flattening: an inner `group` returns `Ok` once its closure succeeded,
/// having launched nothing yet; the outermost launches everything, or nothing when
/// anything inside it failed.
///
/// **What is allowed inside**: the operations' memory and streams are used when the
/// outermost group returns, not when the call is made, so every recorded call keeps what
/// it points at alive until it is issued: a clone of its [`Stream`](rucuda_driver::Stream)
/// (a cheap `Arc`), a handle to each [`GpuArray`](rucuda_array::GpuArray)'s storage
/// (shared through an `Arc`), and a hold on its communicator. Arrays and streams may thus
/// even be made and dropped inside the closure. Plain
/// [`DeviceBuffer`](rucuda_driver::DeviceBuffer)s and device views cannot be kept alive by
/// anyone but their owner, so inside a group they are refused with
/// [`Error::NotInGroup`] (which cancels the group); use `GpuArray`s there, or call outside
/// a group, where they work as usual. A communicator destroyed or aborted inside the
/// group cancels it; one moved to another thread from inside the closure cannot be used,
/// aborted or destroyed there until the group returned (an error; dropping it then leaves
/// its handle allocated).
///
/// As after any asynchronous call, the memory must still live until the stream has run
/// the work: wait on the stream before dropping arrays the group used.
///
/// ```no_run
/// use rucuda_array::GpuArray;
/// use rucuda_driver::{Device, Stream};
/// use rucuda_nccl::{group, Communicator, ReduceOp};
/// let ctxs: Vec<_> = Device::all()?.into_iter()
///     .map(Device::primary_context).collect::<Result<_, _>>()?;
/// let comms = Communicator::init_all(&ctxs)?;
/// let streams: Vec<_> = ctxs.iter().map(Stream::null).collect();
/// let mut bufs = streams.iter().map(|s| GpuArray::from_slice(s, &[1.0f32; 1024]))
///     .collect::<Result<Vec<_>, _>>()?;
/// group(|| {
///     for ((comm, buf), stream) in comms.iter().zip(&mut bufs).zip(&streams) {
///         comm.all_reduce_in_place(buf, ReduceOp::Sum, stream)?;
///     }
///     Ok(())
/// })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn group<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    group_with(&mut NcclIssuer::default(), f)
}

/// What issues a group's recorded calls: NCCL, or a fake in tests.
pub(crate) trait Issuer {
    /// Opens the group (`ncclGroupStart`).
    fn start(&mut self) -> Result<()>;
    /// Issues one recorded call.
    fn issue(&mut self, op: &Pending) -> Result<()>;
    /// Closes the group (`ncclGroupEnd`); called whenever `start` succeeded.
    fn end(&mut self) -> Result<()>;
}

/// Issues through the loaded NCCL.
#[derive(Default)]
struct NcclIssuer {
    end: Option<crate::sys::bindings::PFN_ncclGroupEnd>,
}

impl Issuer for NcclIssuer {
    fn start(&mut self) -> Result<()> {
        let nccl = crate::error::nccl()?;
        let start = nccl.ncclGroupStart()?;
        // Fetch the end now: after a successful start, nothing may stop us from ending.
        let end = nccl.ncclGroupEnd()?;
        // SAFETY: no arguments; balanced by `end` (group_with calls it after a start).
        check(unsafe { start() }, "ncclGroupStart", std::ptr::null_mut())?;
        self.end = Some(end);
        Ok(())
    }

    fn issue(&mut self, op: &Pending) -> Result<()> {
        // Through rucuda's own binding, so that its record of the current context stays
        // true after the group.
        if let Some(ctx) = &op.ctx {
            ctx.bind()?;
        }
        // SAFETY: `plan` checked the pointers and count against the buffers when the
        // call was recorded; `op.keep` owns that memory (only arrays, whose storage is
        // shared through an `Arc`, are accepted in a group) and the stream; the
        // communicator's handle is live: destroying or aborting it on this thread took
        // its calls out of the list (`comm_ending`), and on another thread it is refused
        // or leaked while `op.hold` lives.
        unsafe { enqueue(op.comm, &op.plan, op.stream) }
    }

    fn end(&mut self) -> Result<()> {
        let Some(end) = self.end.take() else {
            return Ok(());
        };
        // NCCL may switch devices while ending; put back the context current before.
        let restore = CurrentContextGuard::new();
        // SAFETY: balances the successful ncclGroupStart of `start`.
        let code = unsafe { end() };
        drop(restore);
        check(code, "ncclGroupEnd", std::ptr::null_mut())
    }
}

/// What leaving one group level decided.
enum Leave {
    /// An inner level: the outermost decides.
    Inner,
    /// The outermost, with something failed: issue nothing.
    Cancelled,
    /// The outermost, with ranks that disagree: issue nothing.
    Mismatch(String),
    /// The outermost, all clean: issue these.
    Issue(Vec<Pending>),
}

/// [`group`] with the issuer given.
pub(crate) fn group_with<R>(issuer: &mut impl Issuer, f: impl FnOnce() -> Result<R>) -> Result<R> {
    STATE.with(|s| s.borrow_mut().depth += 1);
    let mut guard = LeaveOnPanic { armed: true };
    let result = f();
    guard.armed = false;
    let (leave, cancelled) = leave(result.is_err());
    let r = result?;
    if cancelled {
        return Err(Error::GroupCancelled);
    }
    match leave {
        Leave::Inner => Ok(r),
        Leave::Cancelled => Err(Error::GroupCancelled),
        Leave::Mismatch(m) => Err(Error::RankMismatch(m)),
        Leave::Issue(ops) => {
            issue_all(issuer, &ops)?;
            Ok(r)
        }
    }
}

/// Issues `ops` as one NCCL group; the group is closed even when a call fails (NCCL's own
/// error, after our checks passed), and the first error is returned.
fn issue_all(issuer: &mut impl Issuer, ops: &[Pending]) -> Result<()> {
    if ops.is_empty() {
        return Ok(());
    }
    issuer.start()?;
    let mut first = Ok(());
    for op in ops {
        first = issuer.issue(op);
        if first.is_err() {
            break;
        }
    }
    let ended = issuer.end();
    first.and(ended)
}

/// Leaves the group level if the closure panicked, issuing nothing.
struct LeaveOnPanic {
    armed: bool,
}

impl Drop for LeaveOnPanic {
    fn drop(&mut self) {
        if self.armed {
            let _ = leave(true);
        }
    }
}

/// Leaves one group level (`failed`: the closure of this level failed or panicked).
/// Returns what to do, and whether this level's closure succeeded although a call
/// inside the group had failed.
fn leave(failed: bool) -> (Leave, bool) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let cancelled = s.failed && !failed;
        s.failed |= failed;
        s.depth = s.depth.saturating_sub(1);
        if s.depth > 0 {
            return (Leave::Inner, cancelled);
        }
        let state = std::mem::take(&mut *s);
        let leave = if state.failed {
            Leave::Cancelled
        } else if let Some(m) = disagreement(&state.ops) {
            Leave::Mismatch(m)
        } else {
            Leave::Issue(state.ops)
        };
        (leave, cancelled)
    })
}

/// Runs `f` inside a plain NCCL group, issuing as it goes (`ncclGroupStart`, `f`,
/// `ncclGroupEnd`): for creating communicators several at a time, which is not done
/// inside [`group`] (callers refuse that first).
pub(crate) fn nccl_group(f: impl FnOnce() -> Result<()>) -> Result<()> {
    let mut issuer = NcclIssuer::default();
    issuer.start()?;
    let result = f();
    let ended = issuer.end();
    result.and(ended)
}

/// The first disagreement between ranks of one communicator in `ops`, described.
fn disagreement(ops: &[Pending]) -> Option<String> {
    let mut by_clique: BTreeMap<u64, BTreeMap<usize, Vec<Signature>>> = BTreeMap::new();
    for op in ops {
        by_clique
            .entry(op.clique)
            .or_default()
            .entry(op.rank)
            .or_default()
            .push(op.plan.sig);
    }
    for ranks in by_clique.values() {
        if ranks.len() < 2 {
            continue;
        }
        // Collectives: the same sequence on every rank.
        let collectives: Vec<(usize, Vec<Signature>)> = ranks
            .iter()
            .map(|(r, sigs)| {
                let c = sigs
                    .iter()
                    .filter(|s| !matches!(s.kind, OpKind::Send | OpKind::Recv))
                    .copied()
                    .collect();
                (*r, c)
            })
            .collect();
        let (r0, first) = &collectives[0];
        for (r, sigs) in &collectives[1..] {
            for (i, (a, b)) in first.iter().zip(sigs).enumerate() {
                if a.encode() != b.encode() {
                    return Some(format!(
                        "collective {i}: rank {r0} issued {}, rank {r} {}",
                        a.describe(),
                        b.describe()
                    ));
                }
            }
            if first.len() != sigs.len() {
                return Some(format!(
                    "rank {r0} issued {} collectives, rank {r} {}",
                    first.len(),
                    sigs.len()
                ));
            }
        }
        // Point to point: sends from a to b match receives on b from a, in order.
        for (a, sigs) in ranks {
            for (b, other) in ranks {
                let sends: Vec<&Signature> = sigs
                    .iter()
                    .filter(|s| s.kind == OpKind::Send && s.peer == Some(*b))
                    .collect();
                let recvs: Vec<&Signature> = other
                    .iter()
                    .filter(|s| s.kind == OpKind::Recv && s.peer == Some(*a))
                    .collect();
                if sends.len() != recvs.len() {
                    return Some(format!(
                        "rank {a} sends {} time(s) to rank {b}, which receives {} time(s) from it",
                        sends.len(),
                        recvs.len()
                    ));
                }
                for (s, r) in sends.iter().zip(&recvs) {
                    if s.count * s.data_type.size_bytes() != r.count * r.data_type.size_bytes()
                        || s.data_type != r.data_type
                    {
                        return Some(format!(
                            "rank {a} issued {}, rank {b} {}",
                            s.describe(),
                            r.describe()
                        ));
                    }
                }
            }
        }
    }
    None
}

/// Runs NCCL calls that may make another GPU current (group ends, communicator creation
/// and destruction) without changing which context is current on this thread: rucuda's
/// driver layer remembers the current context per thread, so NCCL's switches must not
/// outlive the call.
pub(crate) struct CurrentContextGuard {
    saved: Option<rucuda_driver_sys::CUcontext>,
}

impl CurrentContextGuard {
    pub(crate) fn new() -> Result<CurrentContextGuard> {
        let driver = rucuda_driver::driver()?;
        let get = driver
            .cuCtxGetCurrent()
            .map_err(rucuda_driver::Error::from)?;
        let mut saved: rucuda_driver_sys::CUcontext = std::ptr::null_mut();
        // SAFETY: writes one handle.
        let code = unsafe { get(&mut saved) };
        rucuda_driver::check(code, "cuCtxGetCurrent")?;
        Ok(CurrentContextGuard { saved: Some(saved) })
    }

    /// Makes `ctx` current until the guard drops, then puts back what was current, with
    /// plain driver calls: no queued errors of the context can stop a release or an abort.
    pub(crate) fn switch_to(ctx: &rucuda_driver::Context) -> Result<CurrentContextGuard> {
        let guard = CurrentContextGuard::new()?;
        if guard.saved != Some(ctx.raw()) {
            let set = rucuda_driver::driver()?
                .cuCtxSetCurrent()
                .map_err(rucuda_driver::Error::from)?;
            // SAFETY: the context is alive (the communicator holds it).
            rucuda_driver::check(unsafe { set(ctx.raw()) }, "cuCtxSetCurrent")?;
        }
        Ok(guard)
    }
}

impl Drop for CurrentContextGuard {
    fn drop(&mut self) {
        let Some(saved) = self.saved else { return };
        let Ok(driver) = rucuda_driver::driver() else {
            return;
        };
        let (Ok(get), Ok(set)) = (driver.cuCtxGetCurrent(), driver.cuCtxSetCurrent()) else {
            return;
        };
        let mut now: rucuda_driver_sys::CUcontext = std::ptr::null_mut();
        // SAFETY: writes one handle.
        unsafe { get(&mut now) };
        if now != saved {
            // SAFETY: `saved` was current when the guard was made, and is still alive:
            // every context rucuda hands out is held by the objects using it.
            unsafe { set(saved) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(kind: OpKind, count: usize, op: Option<ReduceOp>, root: Option<usize>) -> Signature {
        Signature {
            kind,
            data_type: DataType::Float32,
            count,
            op,
            root,
            peer: None,
        }
    }

    fn rec(clique: u64, rank: usize, sig: Signature) -> Pending {
        Pending {
            // Never dereferenced: only compared.
            comm: (clique as usize * 64 + rank * 8) as ncclComm_t,
            clique,
            rank,
            plan: Plan {
                sig,
                send: 0x1000,
                recv: 0x2000,
            },
            stream: std::ptr::null_mut(),
            ctx: None,
            uses: Vec::new(),
            hold: None,
            keep: Vec::new(),
        }
    }

    #[test]
    fn agreeing_ranks_pass() {
        let s = sig(OpKind::AllReduce, 100, Some(ReduceOp::Sum), None);
        let ops = vec![
            rec(1, 0, s),
            rec(1, 1, s),
            rec(2, 0, sig(OpKind::AllGather, 3, None, None)),
        ];
        assert_eq!(disagreement(&ops), None);
    }

    #[test]
    fn counts_ops_and_roots_must_agree() {
        let a = sig(OpKind::AllReduce, 100, Some(ReduceOp::Sum), None);
        let b = sig(OpKind::AllReduce, 200, Some(ReduceOp::Sum), None);
        let m = disagreement(&[rec(1, 0, a), rec(1, 1, b)]).unwrap();
        assert!(m.contains("rank 0 issued all_reduce of 100"), "{m}");
        assert!(m.contains("rank 1 all_reduce of 200"), "{m}");
        let c = sig(OpKind::AllReduce, 100, Some(ReduceOp::Max), None);
        assert!(disagreement(&[rec(1, 0, a), rec(1, 1, c)]).is_some());
        let r0 = sig(OpKind::Broadcast, 8, None, Some(0));
        let r1 = sig(OpKind::Broadcast, 8, None, Some(1));
        assert!(disagreement(&[rec(1, 0, r0), rec(1, 1, r1)]).is_some());
        let m = disagreement(&[rec(1, 0, a), rec(1, 0, a), rec(1, 1, a)]).unwrap();
        assert!(m.contains("rank 0 issued 2 collectives, rank 1 1"), "{m}");
    }

    #[test]
    fn sends_need_matching_receives() {
        let send = |count, peer| Signature {
            kind: OpKind::Send,
            data_type: DataType::Int32,
            count,
            op: None,
            root: None,
            peer: Some(peer),
        };
        let recv = |count, peer| Signature {
            kind: OpKind::Recv,
            ..send(count, peer)
        };
        let ok = [rec(1, 0, send(5, 1)), rec(1, 1, recv(5, 0))];
        assert_eq!(disagreement(&ok), None);
        let short = [rec(1, 0, send(5, 1)), rec(1, 1, recv(4, 0))];
        assert!(disagreement(&short).is_some());
        let missing = [rec(1, 0, send(5, 1)), rec(1, 1, send(5, 0))];
        let m = disagreement(&missing).unwrap();
        assert!(m.contains("receives 0 time(s)"), "{m}");
    }

    #[test]
    fn one_rank_per_clique_is_not_compared() {
        let a = sig(OpKind::AllReduce, 100, Some(ReduceOp::Sum), None);
        let b = sig(OpKind::AllReduce, 7, Some(ReduceOp::Sum), None);
        assert_eq!(disagreement(&[rec(1, 0, a), rec(2, 1, b)]), None);
    }

    #[test]
    fn encodings_differ_where_signatures_do() {
        let a = sig(OpKind::Reduce, 10, Some(ReduceOp::Sum), Some(0));
        let mut b = a;
        b.root = Some(1);
        assert_ne!(a.encode(), b.encode());
        let mut c = a;
        c.peer = Some(3);
        assert_eq!(a.encode(), c.encode());
    }

    /// Issues into a log instead of NCCL; fails the call numbered `fail_at` if set.
    #[derive(Default)]
    struct Fake {
        log: Vec<String>,
        fail_at: Option<usize>,
        issued: usize,
    }

    impl Issuer for Fake {
        fn start(&mut self) -> Result<()> {
            self.log.push("start".into());
            Ok(())
        }
        fn issue(&mut self, op: &Pending) -> Result<()> {
            if self.fail_at == Some(self.issued) {
                return Err(Error::invalid("NCCL refused it"));
            }
            self.issued += 1;
            self.log
                .push(format!("rank {} {}", op.rank, op.plan.sig.describe()));
            Ok(())
        }
        fn end(&mut self) -> Result<()> {
            self.log.push("end".into());
            Ok(())
        }
    }

    fn all_reduce(count: usize) -> Signature {
        sig(OpKind::AllReduce, count, Some(ReduceOp::Sum), None)
    }

    /// What a valid collective does: record inside a group (outside, it would issue).
    fn valid(clique: u64, rank: usize, s: Signature) -> Result<()> {
        match record(rec(clique, rank, s)) {
            None => Ok(()),
            Some(_) => Err(Error::invalid("outside a group: issued directly")),
        }
    }

    /// What a refused collective does (see `collective::in_group`).
    fn refused() -> Result<()> {
        note_failure();
        Err(Error::invalid("refused in Rust"))
    }

    #[test]
    fn a_clean_group_issues_its_calls_in_order_between_start_and_end() {
        let mut fake = Fake::default();
        let r = group_with(&mut fake, || {
            valid(1, 0, all_reduce(10))?;
            valid(1, 0, sig(OpKind::Broadcast, 4, None, Some(0)))?;
            assert_eq!(depth(), 1);
            Ok(7)
        });
        assert_eq!(r.unwrap(), 7);
        assert_eq!(
            fake.log,
            [
                "start",
                "rank 0 all_reduce of 10 x Float32 (sum)",
                "rank 0 broadcast of 4 x Float32 root 0",
                "end"
            ]
        );
        assert_eq!(depth(), 0);
        // Outside a group a call is handed back to be issued at once.
        assert!(valid(1, 0, all_reduce(1)).is_err());
    }

    #[test]
    fn a_refused_call_issues_nothing_even_when_its_error_is_ignored() {
        let mut fake = Fake::default();
        let e = group_with(&mut fake, || {
            valid(1, 0, all_reduce(10))?;
            refused()
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "invalid argument: refused in Rust");
        let swallowed = group_with(&mut fake, || {
            valid(1, 0, all_reduce(10))?;
            let _ = refused();
            valid(1, 0, all_reduce(10))
        });
        assert!(
            matches!(swallowed, Err(Error::GroupCancelled)),
            "{swallowed:?}"
        );
        assert!(fake.log.is_empty(), "{:?}", fake.log);
        // The next group starts clean.
        group_with(&mut fake, || valid(1, 0, all_reduce(3))).unwrap();
        assert_eq!(fake.log.len(), 3);
    }

    #[test]
    fn a_closure_error_issues_nothing() {
        let mut fake = Fake::default();
        let e = group_with(&mut fake, || -> Result<()> {
            valid(1, 0, all_reduce(10))?;
            Err(Error::invalid("the caller's own error"))
        });
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("the caller's own error"));
        assert!(fake.log.is_empty());
    }

    #[test]
    fn a_panic_issues_nothing_and_leaves_the_thread_outside_any_group() {
        let mut fake = Fake::default();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = group_with(&mut fake, || -> Result<()> {
                valid(1, 0, all_reduce(10))?;
                group_with(&mut Fake::default(), || -> Result<()> {
                    valid(1, 0, all_reduce(5))?;
                    panic!("inside a nested group")
                })
            });
        }));
        assert!(panicked.is_err());
        assert_eq!(depth(), 0);
        assert!(fake.log.is_empty());
        group_with(&mut fake, || valid(1, 0, all_reduce(2))).unwrap();
        assert_eq!(
            fake.log,
            ["start", "rank 0 all_reduce of 2 x Float32 (sum)", "end"]
        );
    }

    #[test]
    fn nested_groups_flatten_into_the_outermost() {
        let mut outer = Fake::default();
        let mut inner = Fake::default();
        group_with(&mut outer, || {
            valid(1, 0, all_reduce(1))?;
            group_with(&mut inner, || valid(1, 0, all_reduce(2)))?;
            assert_eq!(depth(), 1);
            valid(1, 0, all_reduce(3))
        })
        .unwrap();
        assert!(inner.log.is_empty(), "an inner group issues nothing itself");
        assert_eq!(outer.log.len(), 5);
        assert!(outer.log[2].contains("all_reduce of 2"), "{:?}", outer.log);
        // A failure inside an inner group cancels the outer one, even when swallowed.
        let mut outer = Fake::default();
        let r = group_with(&mut outer, || {
            valid(1, 0, all_reduce(1))?;
            let _ = group_with(&mut Fake::default(), refused);
            Ok(())
        });
        assert!(matches!(r, Err(Error::GroupCancelled)), "{r:?}");
        let r = group_with(&mut outer, || {
            valid(1, 0, all_reduce(1))?;
            let _ = group_with(&mut Fake::default(), || -> Result<()> {
                Err(Error::invalid("inner closure"))
            });
            Ok(())
        });
        assert!(matches!(r, Err(Error::GroupCancelled)), "{r:?}");
        assert!(outer.log.is_empty());
    }

    #[test]
    fn ranks_that_disagree_issue_nothing() {
        let mut fake = Fake::default();
        let r = group_with(&mut fake, || {
            valid(1, 0, all_reduce(10))?;
            valid(1, 1, all_reduce(11))
        });
        assert!(matches!(r, Err(Error::RankMismatch(_))), "{r:?}");
        assert!(fake.log.is_empty());
    }

    #[test]
    fn a_communicator_ending_inside_a_group_cancels_it() {
        let mut fake = Fake::default();
        let r = group_with(&mut fake, || {
            valid(1, 0, all_reduce(10))?;
            valid(2, 0, all_reduce(10))?;
            comm_ending(rec(2, 0, all_reduce(10)).comm);
            Ok(())
        });
        assert!(matches!(r, Err(Error::GroupCancelled)), "{r:?}");
        assert!(fake.log.is_empty());
        // A communicator with nothing recorded does not disturb the group.
        group_with(&mut fake, || {
            valid(1, 0, all_reduce(10))?;
            comm_ending(rec(3, 0, all_reduce(10)).comm);
            Ok(())
        })
        .unwrap();
        assert_eq!(fake.log.len(), 3);
    }

    #[test]
    fn an_nccl_error_while_issuing_still_ends_the_group() {
        let mut fake = Fake {
            fail_at: Some(1),
            ..Fake::default()
        };
        let r = group_with(&mut fake, || {
            valid(1, 0, all_reduce(1))?;
            valid(1, 0, all_reduce(2))?;
            valid(1, 0, all_reduce(3))
        });
        assert!(r.unwrap_err().to_string().contains("NCCL refused it"));
        assert_eq!(
            fake.log,
            ["start", "rank 0 all_reduce of 1 x Float32 (sum)", "end"]
        );
    }

    /// Notes in a shared flag when it is dropped: stands for the memory a record owns.
    struct Owner(std::rc::Rc<std::cell::Cell<bool>>);

    impl Drop for Owner {
        fn drop(&mut self) {
            self.0.set(true);
        }
    }

    /// Checks at each issue that the call's owner was not dropped yet.
    struct CheckAlive {
        dropped: std::rc::Rc<std::cell::Cell<bool>>,
        alive_at_issue: Vec<bool>,
    }

    impl Issuer for CheckAlive {
        fn start(&mut self) -> Result<()> {
            Ok(())
        }
        fn issue(&mut self, _: &Pending) -> Result<()> {
            self.alive_at_issue.push(!self.dropped.get());
            Ok(())
        }
        fn end(&mut self) -> Result<()> {
            Ok(())
        }
    }

    /// A valid call whose record owns `owner` (as it owns a `GpuArray`'s storage).
    fn valid_owning(owner: Owner) -> Result<()> {
        let mut op = rec(1, 0, all_reduce(10));
        op.keep.push(Box::new(owner));
        match record(op) {
            None => Ok(()),
            Some(_) => Err(Error::invalid("outside a group: issued directly")),
        }
    }

    #[test]
    fn a_record_keeps_what_it_owns_alive_until_issued() {
        let dropped = std::rc::Rc::new(std::cell::Cell::new(false));
        let mut issuer = CheckAlive {
            dropped: dropped.clone(),
            alive_at_issue: Vec::new(),
        };
        group_with(&mut issuer, || {
            // The caller's handle goes inside the closure (an array made and dropped
            // there); the record's keeps the memory.
            group_with(&mut Fake::default(), || {
                valid_owning(Owner(dropped.clone()))
            })?;
            assert!(!dropped.get(), "dropped before the group issued");
            Ok(())
        })
        .unwrap();
        assert_eq!(issuer.alive_at_issue, [true]);
        assert!(dropped.get(), "released once issued");
        // A cancelled group releases what its records owned, issuing nothing.
        dropped.set(false);
        let r = group_with(&mut issuer, || {
            valid_owning(Owner(dropped.clone()))?;
            refused()
        });
        assert!(r.is_err());
        assert!(dropped.get());
        assert_eq!(issuer.alive_at_issue, [true]);
    }

    #[test]
    fn an_empty_group_does_not_touch_nccl() {
        let mut fake = Fake::default();
        assert_eq!(group_with(&mut fake, || Ok(1)).unwrap(), 1);
        assert!(fake.log.is_empty());
    }
}
