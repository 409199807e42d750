//! The collectives and point-to-point operations, on [`GpuArray`]s, [`DeviceBuffer`]s
//! and device views of every type NCCL can carry (see the `dtype` module's table).
//!
//! Every operation is checked before NCCL sees it: the communicator is live, the stream
//! and buffers are on its GPU, arrays are contiguous, input and output hold the same
//! type, sizes fit the operation (all-gather: output = ranks × input; reduce-scatter:
//! input = ranks × output; the others: equal), roots and peers are ranks. Like every
//! asynchronous copy in rucuda, an operation only queues work on the stream, and takes
//! its buffers' addresses through their use logs
//! ([`DeviceRange::use_on`](rucuda_driver::DeviceRange::use_on)): the stream first waits
//! for conflicting work on other streams, and dropping a buffer, host access and later
//! work on other streams wait for the collective. Inside a [`group`](crate::group()) the
//! use is recorded when the call is, and the group issues it on the same stream.

use std::any::Any;
use std::time::Duration;

use rucuda_driver::{Access, DeviceBuffer, DevicePtr, Stream};

use crate::buffers::{RecvBuffer, SendBuffer};
use crate::comm::Communicator;
use crate::dtype::{DataType, ReduceOp};
use crate::error::{Error, Result};
use crate::group;
use crate::pending::Pending;
use crate::plan::{enqueue, plan, Me, Plan};
use crate::signature::{describe_encoded, OpKind, Signature};
use crate::sys::bindings::cudaStream_t;

/// How long a checked collective waits for the other ranks' descriptions.
const CHECK_TIMEOUT: Duration = Duration::from_secs(300);

/// What keeps `buf` allocated until a group issues the call that uses it: its
/// [`keep_alive`](SendBuffer::keep_alive) handle inside a group (a buffer without one is
/// refused there with [`Error::NotInGroup`]), nothing outside a group (the call is
/// queued at once, and the caller's borrow covers it).
fn owner(
    buf: &dyn SendBuffer,
    call: &'static str,
    what: &'static str,
) -> Result<Option<Box<dyn Any>>> {
    if group::depth() == 0 {
        return Ok(None);
    }
    match buf.keep_alive() {
        Some(keep) => Ok(Some(keep)),
        None => Err(Error::NotInGroup { call, what }),
    }
}

/// Notes a failure in the current group (so it launches nothing) and passes it on.
fn in_group<T>(result: Result<T>) -> Result<T> {
    if result.is_err() {
        group::note_failure();
    }
    result
}

impl Communicator {
    fn me(&self) -> Me {
        Me {
            rank: self.rank(),
            size: self.size(),
            device: self.device().ordinal(),
        }
    }

    /// Checks everything, then queues the operation (and notes failures in a group).
    fn run(
        &self,
        kind: OpKind,
        op: Option<ReduceOp>,
        other: Option<usize>,
        send: Option<&dyn SendBuffer>,
        recv: &dyn SendBuffer,
        stream: &Stream,
    ) -> Result<()> {
        in_group((|| {
            let call = kind.name();
            self.ensure_live(call)?;
            let device = self.device().ordinal();
            let on = stream.context().device().ordinal();
            if on != device {
                return Err(Error::WrongDevice {
                    call,
                    what: "the stream",
                    expected: device,
                    got: on,
                });
            }
            let recv_what = if send.is_some() {
                "the output"
            } else {
                "the buffer"
            };
            // Inside a group the record keeps everything it points at alive until it is
            // issued: the memory (refused when it cannot be kept), the stream and the
            // communicator's handle.
            let mut keep: Vec<Box<dyn Any>> = Vec::new();
            if let Some(s) = send {
                keep.extend(owner(s, call, "the input")?);
            }
            keep.extend(owner(recv, call, recv_what)?);
            let (send, send_use) = match send {
                Some(s) => {
                    let (region, used) = s.region(call, "the input", stream, Access::Read)?;
                    (Some(region), Some(used))
                }
                None => (None, None),
            };
            // The output is written; a `send` only reads its buffer.
            let recv_access = match kind {
                OpKind::Send => Access::Read,
                _ => Access::Write,
            };
            let (recv, recv_use) = recv.region(call, recv_what, stream, recv_access)?;
            // SAFETY: the uses are dropped with the record: here, within this call, which
            // borrows the memory; inside a group, before `keep`, which owns the memory
            // (only buffers with a keep-alive handle are accepted there, above).
            let uses = send_use
                .into_iter()
                .chain(Some(recv_use))
                .map(|u| unsafe { u.extend() })
                .collect();
            let plan = plan(kind, op, other, send.as_ref(), &recv, self.me())?;
            let held = group::depth() > 0;
            if held {
                keep.push(Box::new(stream.clone()));
            }
            let pending = Pending {
                comm: self.handle(),
                clique: self.clique(),
                rank: self.rank(),
                plan,
                stream: stream.raw() as cudaStream_t,
                ctx: Some(self.context().clone()),
                uses,
                hold: held.then(|| self.hold()),
                keep,
            };
            // Inside a group the call is only recorded: the group issues it at its end,
            // or drops it when anything in the group failed.
            let Some(pending) = group::record(pending) else {
                return Ok(());
            };
            self.context().bind()?;
            if self.is_checked() && !matches!(kind, OpKind::Send | OpKind::Recv) {
                self.compare_with_peers(&plan.sig, stream)?;
            }
            // SAFETY: `plan` checked the pointers and count against the buffers, which
            // the caller keeps alive until the stream has run the operation.
            unsafe { enqueue(pending.comm, &pending.plan, pending.stream) }
        })())
    }
}

impl Communicator {
    /// All-reduce (`ncclAllReduce`): every rank's `recv` becomes the reduction over the
    /// ranks of their `send`s, element by element. `send` and `recv` hold as many
    /// elements of one type.
    ///
    /// ```no_run
    /// # use rucuda_driver::{Device, Stream};
    /// # use rucuda_nccl::{Communicator, ReduceOp, UniqueId};
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// # let comm = Communicator::init_rank(&ctx, 1, &UniqueId::new()?, 0)?;
    /// let stream = Stream::null(&ctx);
    /// let x = rucuda_array::GpuArray::from_slice(&stream, &[1.0f32, 2.0, 3.0])?;
    /// let mut sum = rucuda_array::GpuArray::<f32>::zeros(&stream, &[3])?;
    /// comm.all_reduce(&x, &mut sum, ReduceOp::Sum, &stream)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn all_reduce<S, R>(
        &self,
        send: &S,
        recv: &mut R,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()>
    where
        S: SendBuffer,
        R: RecvBuffer,
    {
        self.run(
            OpKind::AllReduce,
            Some(op),
            None,
            Some(send),
            &*recv,
            stream,
        )
    }

    /// All-reduce in place: `buf` is both input and output.
    pub fn all_reduce_in_place<R: RecvBuffer>(
        &self,
        buf: &mut R,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        self.run(OpKind::AllReduce, Some(op), None, None, &*buf, stream)
    }

    /// Broadcast (`ncclBroadcast`): every rank's `recv` becomes `root`'s `send` (read on
    /// the root only). Ranks other than the root may call
    /// [`broadcast_in_place`](Communicator::broadcast_in_place) instead.
    pub fn broadcast<S, R>(
        &self,
        send: &S,
        recv: &mut R,
        root: usize,
        stream: &Stream,
    ) -> Result<()>
    where
        S: SendBuffer,
        R: RecvBuffer,
    {
        self.run(
            OpKind::Broadcast,
            None,
            Some(root),
            Some(send),
            &*recv,
            stream,
        )
    }

    /// Broadcast in place: `root`'s `buf` is copied into every other rank's `buf`.
    pub fn broadcast_in_place<R: RecvBuffer>(
        &self,
        buf: &mut R,
        root: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.run(OpKind::Broadcast, None, Some(root), None, &*buf, stream)
    }

    /// Reduce (`ncclReduce`): `root`'s `recv` becomes the reduction of every rank's
    /// `send`; other ranks' `recv` is not written (they may call
    /// [`reduce_in_place`](Communicator::reduce_in_place)).
    pub fn reduce<S, R>(
        &self,
        send: &S,
        recv: &mut R,
        op: ReduceOp,
        root: usize,
        stream: &Stream,
    ) -> Result<()>
    where
        S: SendBuffer,
        R: RecvBuffer,
    {
        self.run(
            OpKind::Reduce,
            Some(op),
            Some(root),
            Some(send),
            &*recv,
            stream,
        )
    }

    /// Reduce in place: `root`'s `buf` becomes the reduction of every rank's `buf`.
    pub fn reduce_in_place<R: RecvBuffer>(
        &self,
        buf: &mut R,
        op: ReduceOp,
        root: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.run(OpKind::Reduce, Some(op), Some(root), None, &*buf, stream)
    }

    /// All-gather (`ncclAllGather`): every rank's `recv` becomes the concatenation of
    /// the ranks' `send`s in rank order; `recv` holds `size() × send.len()` elements.
    pub fn all_gather<S, R>(&self, send: &S, recv: &mut R, stream: &Stream) -> Result<()>
    where
        S: SendBuffer,
        R: RecvBuffer,
    {
        self.run(OpKind::AllGather, None, None, Some(send), &*recv, stream)
    }

    /// All-gather in place: `buf` holds `size()` equal chunks; this rank's own chunk (at
    /// `rank() × chunk`) is the input, and every chunk is filled.
    pub fn all_gather_in_place<R: RecvBuffer>(&self, buf: &mut R, stream: &Stream) -> Result<()> {
        self.run(OpKind::AllGather, None, None, None, &*buf, stream)
    }

    /// Reduce-scatter (`ncclReduceScatter`): the ranks' `send`s are reduced element by
    /// element and rank `i`'s `recv` gets chunk `i` of the result; `send` holds
    /// `size() × recv.len()` elements.
    pub fn reduce_scatter<S, R>(
        &self,
        send: &S,
        recv: &mut R,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()>
    where
        S: SendBuffer,
        R: RecvBuffer,
    {
        self.run(
            OpKind::ReduceScatter,
            Some(op),
            None,
            Some(send),
            &*recv,
            stream,
        )
    }

    /// Reduce-scatter in place: `buf` holds `size()` equal chunks; this rank's chunk (at
    /// `rank() × chunk`) receives its part of the reduction.
    pub fn reduce_scatter_in_place<R: RecvBuffer>(
        &self,
        buf: &mut R,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        self.run(OpKind::ReduceScatter, Some(op), None, None, &*buf, stream)
    }

    /// Sends `buf` to rank `peer` (`ncclSend`), which must [`recv`](Communicator::recv)
    /// as many bytes from this rank. Several sends and receives of one rank go in one
    /// [`group`](crate::group()) (an exchange with two peers otherwise deadlocks).
    pub fn send<S: SendBuffer>(&self, buf: &S, peer: usize, stream: &Stream) -> Result<()> {
        self.run(OpKind::Send, None, Some(peer), None, buf, stream)
    }

    /// Receives into `buf` from rank `peer` (`ncclRecv`), which must
    /// [`send`](Communicator::send) as many bytes to this rank.
    pub fn recv<R: RecvBuffer>(&self, buf: &mut R, peer: usize, stream: &Stream) -> Result<()> {
        self.run(OpKind::Recv, None, Some(peer), None, &*buf, stream)
    }

    /// The cross-rank check ([`Communicator::set_checked`]): all-gathers every rank's
    /// description of this collective and compares them.
    fn compare_with_peers(&self, sig: &Signature, stream: &Stream) -> Result<()> {
        let mine = sig.encode();
        let send = DeviceBuffer::from_slice(self.context(), &mine)?;
        let all = DeviceBuffer::<u64>::zeros(self.context(), 4 * self.size())?;
        let plan = Plan {
            sig: Signature {
                kind: OpKind::AllGather,
                data_type: DataType::Uint64,
                count: 4,
                op: None,
                root: None,
                peer: None,
            },
            send: 0,
            recv: 0,
        };
        let send_use = send.device_range().use_on(stream, Access::Read)?;
        let recv_use = all.device_range().use_on(stream, Access::Write)?;
        let plan = Plan {
            send: send_use.ptr(),
            recv: recv_use.ptr(),
            ..plan
        };
        // SAFETY: 4 u64 in, 4 × size u64 out, both allocated above on this device and
        // kept until the stream was waited for below; the communicator is live.
        unsafe { enqueue(self.handle(), &plan, stream.raw() as cudaStream_t)? };
        // Queued: the uses may go (the read-back below uses `all` on another stream).
        drop((send_use, recv_use));
        self.wait(stream, CHECK_TIMEOUT)?;
        let words = all.to_vec()?;
        for (rank, theirs) in words.chunks_exact(4).enumerate() {
            if theirs != mine {
                return Err(Error::RankMismatch(format!(
                    "rank {} issued {} but rank {rank} {}",
                    self.rank(),
                    sig.describe(),
                    describe_encoded(theirs)
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffers::testing::f32s;
    use crate::buffers::Region;
    use rucuda_driver::InUse;

    /// A plain buffer (like `DeviceBuffer` and device views: no `keep_alive`).
    struct Plain;

    // SAFETY: a test stand-in; its region is never handed to NCCL.
    unsafe impl SendBuffer for Plain {
        fn region(
            &self,
            _: &'static str,
            _: &'static str,
            _: &Stream,
            _: Access,
        ) -> Result<(Region, InUse<'_>)> {
            Ok((f32s(4), InUse::null()))
        }
    }

    /// A buffer whose memory a handle keeps alive (like `GpuArray`).
    struct Shared;

    // SAFETY: a test stand-in; its region is never handed to NCCL.
    unsafe impl SendBuffer for Shared {
        fn region(
            &self,
            _: &'static str,
            _: &'static str,
            _: &Stream,
            _: Access,
        ) -> Result<(Region, InUse<'_>)> {
            Ok((f32s(4), InUse::null()))
        }
        fn keep_alive(&self) -> Option<Box<dyn Any>> {
            Some(Box::new(7u8))
        }
    }

    #[test]
    fn plain_buffers_are_refused_in_a_group_and_accepted_outside() {
        assert!(matches!(owner(&Plain, "all_reduce", "the input"), Ok(None)));
        assert!(matches!(
            owner(&Shared, "all_reduce", "the input"),
            Ok(None)
        ));
        let e = crate::group(|| owner(&Plain, "all_reduce", "the input").map(drop)).unwrap_err();
        assert!(
            matches!(
                e,
                Error::NotInGroup {
                    call: "all_reduce",
                    what: "the input"
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("use GpuArray"), "{e}");
        let kept = crate::group(|| owner(&Shared, "all_reduce", "the output")).unwrap();
        let kept = kept.expect("an owner inside a group");
        assert_eq!(kept.downcast_ref::<u8>(), Some(&7));
        assert_eq!(group::depth(), 0);
    }
}
