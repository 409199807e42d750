//! [`Pending`]: one NCCL call recorded inside a group, with what keeps its memory, stream
//! and communicator alive until the group issues it.

use std::any::Any;

use rucuda_driver::{Context, InUse};

use crate::hold::Hold;
use crate::plan::Plan;
use crate::sys::bindings::{cudaStream_t, ncclComm_t};

/// One NCCL call recorded inside a group, issued when the outermost group ends: the
/// call's arguments, checked by [`plan`](crate::plan::plan) when it was recorded,
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

/// Records for the tests of the modules above.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::signature::Signature;

    /// A record of `sig` by `rank` of communicator `clique`, with nothing to issue it on.
    pub(crate) fn rec(clique: u64, rank: usize, sig: Signature) -> Pending {
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
}
