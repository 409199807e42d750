//! Group calls: several NCCL operations issued as one (`ncclGroupStart` /
//! `ncclGroupEnd`), which is how one thread drives several ranks and how send/recv pairs
//! are issued without deadlock.
//!
//! [`group`] adds two guarantees NCCL alone does not give:
//! - **all or nothing**: when the closure fails (a size check, a wrong device, an NCCL
//!   error) or panics, none of the group's operations is launched. NCCL drops a whole
//!   group when one of its calls returned an error, so we make it see one (a broadcast
//!   with an invalid root on a communicator of the group; NCCL prints a warning for it).
//!   Without this, the operations issued before the failure would launch alone and wait
//!   forever for their missing partners.
//! - **agreement between the ranks this thread drives**: operations on ranks of one
//!   communicator issued in the group are compared at its end (same collectives in the
//!   same order with the same types, counts, reductions and roots; each send matched by
//!   its receive). A disagreement is an [`Error::RankMismatch`] and nothing is launched.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::comm::Communicator;
use crate::dtype::{DataType, ReduceOp};
use crate::error::{check, Error, Result};
use crate::sys::bindings::{ncclComm_t, ncclDataType_t};

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

/// One operation issued inside the current group.
#[derive(Debug, Clone)]
struct OpRecord {
    clique: u64,
    rank: usize,
    sig: Signature,
}

#[derive(Default)]
struct GroupState {
    depth: usize,
    ops: Vec<OpRecord>,
    failed: bool,
    /// A communicator of the group, to make NCCL drop the group (as an address).
    target: Option<usize>,
}

thread_local! {
    static STATE: RefCell<GroupState> = RefCell::new(GroupState::default());
}

/// How deep in [`group`] calls this thread is (0: outside any).
pub(crate) fn depth() -> usize {
    STATE.with(|s| s.borrow().depth)
}

/// Notes an operation issued on `comm` (no-op outside a group).
pub(crate) fn record(comm: &Communicator, sig: Signature) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.depth == 0 {
            return;
        }
        s.ops.push(OpRecord {
            clique: comm.clique(),
            rank: comm.rank(),
            sig,
        });
        if s.target.is_none() {
            s.target = Some(comm.handle() as usize);
        }
    });
}

/// Notes that an operation of the current group failed (no-op outside a group): the
/// group will launch nothing even if the caller goes on.
pub(crate) fn note_failure() {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.depth > 0 {
            s.failed = true;
        }
    });
}

/// Runs `f` as one NCCL group: the operations it issues are launched together when it
/// returns (`ncclGroupStart` before, `ncclGroupEnd` after). Groups nest; the outermost
/// launches. One thread driving several ranks must issue their collectives in a group,
/// and a rank's sends and receives with several peers go in one group.
///
/// When `f` fails or panics nothing of the group is launched, and ranks of one
/// communicator that this thread drives are checked to agree (see the module's notes).
/// When an operation inside failed but `f` ignored its error and returned `Ok`, nothing
/// was launched either, and the result is [`Error::GroupCancelled`].
///
/// ```no_run
/// use rucuda_driver::{Device, DeviceBuffer, Stream};
/// use rucuda_nccl::{group, Communicator, ReduceOp};
/// let ctxs: Vec<_> = Device::all()?.into_iter()
///     .map(Device::primary_context).collect::<Result<_, _>>()?;
/// let comms = Communicator::init_all(&ctxs)?;
/// let streams: Vec<_> = ctxs.iter().map(Stream::null).collect();
/// let mut bufs = ctxs.iter().map(|c| DeviceBuffer::from_slice(c, &[1.0f32; 1024]))
///     .collect::<Result<Vec<_>, _>>()?;
/// group(|| {
///     for ((comm, buf), stream) in comms.iter().zip(&mut bufs).zip(&streams) {
///         comm.all_reduce_in_place(buf, ReduceOp::Sum, stream)?;
///     }
///     Ok(())
/// })?;
/// # Ok::<(), rucuda_nccl::Error>(())
/// ```
pub fn group<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    let start = crate::error::nccl()?.ncclGroupStart()?;
    // Fetch the end now: after a successful start, nothing may stop us from ending.
    let end = crate::error::nccl()?.ncclGroupEnd()?;
    // SAFETY: no arguments; balanced by the ncclGroupEnd in `finish`.
    check(unsafe { start() }, "ncclGroupStart", std::ptr::null_mut())?;
    STATE.with(|s| s.borrow_mut().depth += 1);
    let mut guard = EndOnPanic { end, armed: true };
    let result = f();
    guard.armed = false;
    let ended = finish(end, result.is_err());
    match (result, ended) {
        (Err(e), _) => Err(e),
        (Ok(_), Err(e)) => Err(e),
        (Ok(r), Ok(())) => Ok(r),
    }
}

/// Ends the group if the closure panicked, launching nothing.
struct EndOnPanic {
    end: crate::sys::bindings::PFN_ncclGroupEnd,
    armed: bool,
}

impl Drop for EndOnPanic {
    fn drop(&mut self) {
        if self.armed {
            let _ = finish(self.end, true);
        }
    }
}

/// Leaves one group level; at the outermost, checks agreement and makes NCCL drop the
/// group when something failed.
fn finish(end: crate::sys::bindings::PFN_ncclGroupEnd, failed: bool) -> Result<()> {
    let (outermost, cancelled, mismatch, poison) = STATE.with(|s| {
        let mut s = s.borrow_mut();
        // An operation failed in a closure that went on and succeeded.
        let cancelled = s.failed && !failed;
        s.failed |= failed;
        s.depth = s.depth.saturating_sub(1);
        if s.depth > 0 {
            return (false, cancelled, None, None);
        }
        let state = std::mem::take(&mut *s);
        let mismatch = if state.failed {
            None
        } else {
            disagreement(&state.ops)
        };
        let poison = if state.failed || mismatch.is_some() {
            state.target
        } else {
            None
        };
        (true, cancelled, mismatch, poison)
    });
    if let Some(target) = poison {
        // SAFETY: the address is a communicator issued on in this group; NCCL keeps it
        // alive until the group ends (even one destroyed in it).
        unsafe { poison_group(target as ncclComm_t) };
    }
    let restore = CurrentContextGuard::new();
    // SAFETY: balances the ncclGroupStart of this level.
    let code = unsafe { end() };
    drop(restore);
    if outermost {
        if let Some(m) = mismatch {
            return Err(Error::RankMismatch(m));
        }
    }
    if cancelled {
        return Err(Error::GroupCancelled);
    }
    if poison.is_some() {
        // The end reports the error we caused; the caller has the real one.
        return Ok(());
    }
    check(code, "ncclGroupEnd", std::ptr::null_mut())
}

/// Makes NCCL record an error in the current group, so that `ncclGroupEnd` launches
/// none of it: a broadcast with root -1, which NCCL's argument check refuses before
/// queueing anything.
///
/// # Safety
/// `comm` must be a communicator that is alive until the group ends.
unsafe fn poison_group(comm: ncclComm_t) {
    let Ok(broadcast) = crate::error::nccl().and_then(|n| Ok(n.ncclBroadcast()?)) else {
        return;
    };
    // SAFETY: count 0 and an invalid root: NCCL refuses the call in its argument check
    // (ncclInvalidArgument) and touches no memory.
    let _ = unsafe {
        broadcast(
            std::ptr::null(),
            std::ptr::null_mut(),
            0,
            ncclDataType_t::ncclUint8,
            -1,
            comm,
            std::ptr::null_mut(),
        )
    };
}

/// The first disagreement between ranks of one communicator in `ops`, described.
fn disagreement(ops: &[OpRecord]) -> Option<String> {
    let mut by_clique: BTreeMap<u64, BTreeMap<usize, Vec<Signature>>> = BTreeMap::new();
    for op in ops {
        by_clique
            .entry(op.clique)
            .or_default()
            .entry(op.rank)
            .or_default()
            .push(op.sig);
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
    saved: Option<cuda_driver_sys::CUcontext>,
}

impl CurrentContextGuard {
    pub(crate) fn new() -> Result<CurrentContextGuard> {
        let driver = rucuda_driver::driver()?;
        let get = driver
            .cuCtxGetCurrent()
            .map_err(rucuda_driver::Error::from)?;
        let mut saved: cuda_driver_sys::CUcontext = std::ptr::null_mut();
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
        let mut now: cuda_driver_sys::CUcontext = std::ptr::null_mut();
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

    fn rec(clique: u64, rank: usize, sig: Signature) -> OpRecord {
        OpRecord { clique, rank, sig }
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
}
