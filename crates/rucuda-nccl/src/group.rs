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
//! communicator recorded in the group are compared before anything is issued (the
//! `agreement` module).
//!
//! Groups nest by flattening: an inner [`group`] only records, and the outermost issues
//! everything; a failure anywhere inside cancels the whole outermost group.

use std::cell::RefCell;

use crate::agreement::disagreement;
use crate::error::{Error, Result};
use crate::issue::{issue_all, Issuer, NcclIssuer};
use crate::pending::Pending;
use crate::sys::bindings::ncclComm_t;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::ReduceOp;
    use crate::pending::testing::rec;
    use crate::signature::testing::sig;
    use crate::signature::{OpKind, Signature};

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
