//! Issuing recorded calls: the [`Issuer`] a group hands its calls to (NCCL, or a fake in
//! tests), [`issue_all`] for one group's calls, and [`nccl_group`] for NCCL calls made as
//! they come inside one NCCL group.

use crate::current::CurrentContextGuard;
use crate::error::{check, nccl, Result};
use crate::pending::Pending;
use crate::plan::enqueue;
use crate::sys::bindings::PFN_ncclGroupEnd;

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
pub(crate) struct NcclIssuer {
    end: Option<PFN_ncclGroupEnd>,
}

impl Issuer for NcclIssuer {
    fn start(&mut self) -> Result<()> {
        let nccl = nccl()?;
        let start = nccl.ncclGroupStart()?;
        // Fetch the end now: after a successful start, nothing may stop us from ending.
        let end = nccl.ncclGroupEnd()?;
        // SAFETY: no arguments; balanced by `end` (`issue_all` and `nccl_group` call it
        // after a start).
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

/// Issues `ops` as one NCCL group; the group is closed even when a call fails (NCCL's own
/// error, after our checks passed), and the first error is returned.
pub(crate) fn issue_all(issuer: &mut impl Issuer, ops: &[Pending]) -> Result<()> {
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

/// Runs `f` inside a plain NCCL group, issuing as it goes (`ncclGroupStart`, `f`,
/// `ncclGroupEnd`): for creating communicators several at a time, which is not done
/// inside [`group`](crate::group()) (callers refuse that first).
pub(crate) fn nccl_group(f: impl FnOnce() -> Result<()>) -> Result<()> {
    let mut issuer = NcclIssuer::default();
    issuer.start()?;
    let result = f();
    let ended = issuer.end();
    result.and(ended)
}
