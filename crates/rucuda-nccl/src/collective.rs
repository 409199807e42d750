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

use std::time::Duration;

use rucuda_array::{Element, GpuArray};
use rucuda_driver::{
    Access, DeviceBuffer, DevicePtr, DeviceRepr, DeviceView, DeviceViewMut, InUse, Stream,
};
use rucuda_driver_sys::CUdeviceptr;

use crate::comm::Communicator;
use crate::dtype::{DataType, ElementLayout, ReduceOp};
use crate::error::{call, Error, Result};
use crate::group::{self, OpKind, Signature};
use crate::sys::bindings::{cudaStream_t, ncclComm_t};
use std::any::Any;
use std::ffi::c_void;

/// Where a buffer's elements are, for NCCL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Device address of the first element.
    pub ptr: CUdeviceptr,
    /// Number of elements.
    pub len: usize,
    /// How its elements travel.
    pub layout: ElementLayout,
    /// The device ordinal it lives on, where known (views do not say).
    pub device: Option<usize>,
}

/// Device memory a collective reads: [`DeviceBuffer`], [`DeviceView`], [`DeviceViewMut`]
/// and C-contiguous [`GpuArray`]s.
///
/// # Safety
/// NCCL reads (and for [`RecvBuffer`] writes) the [`Region`] an implementor reports:
/// it must be device memory of that many elements, alive as long as the implementor is;
/// a `keep_alive` handle must keep that memory allocated while it lives.
pub unsafe trait SendBuffer {
    /// Its elements for an operation queued on `stream` that uses them as `access` says
    /// (the address comes from the memory's use log, which records the use; keep the
    /// [`InUse`] until the operation is queued), or why NCCL cannot use it (a
    /// non-contiguous array).
    fn region(
        &self,
        call: &'static str,
        what: &'static str,
        stream: &Stream,
        access: Access,
    ) -> Result<(Region, InUse<'_>)>;

    /// A handle that keeps this memory allocated for as long as it lives, or `None`
    /// when there is none (plain buffers and views: only their owner frees them).
    ///
    /// Inside a [`group`](crate::group()) a call is issued when the outermost group
    /// returns, so its record holds this handle until then; a buffer without one is
    /// refused there ([`Error::NotInGroup`]). [`GpuArray`] shares its memory through an
    /// `Arc` and returns a handle to it.
    fn keep_alive(&self) -> Option<Box<dyn Any>> {
        None
    }
}

/// Device memory a collective writes: [`DeviceBuffer`], [`DeviceViewMut`] and
/// C-contiguous [`GpuArray`]s.
///
/// # Safety
/// As for [`SendBuffer`], and the region must be writable.
pub unsafe trait RecvBuffer: SendBuffer {}

// SAFETY: the region is the buffer's own device memory, alive while it is; a GpuArray's
// keep-alive handle shares its storage Arc.
unsafe impl<T: DeviceRepr> SendBuffer for DeviceBuffer<T> {
    fn region(
        &self,
        _: &'static str,
        _: &'static str,
        stream: &Stream,
        access: Access,
    ) -> Result<(Region, InUse<'_>)> {
        let used = self.device_range().use_on(stream, access)?;
        Ok((
            Region {
                ptr: used.ptr(),
                len: self.len(),
                layout: ElementLayout::of_repr::<T>(),
                device: Some(self.context().device().ordinal()),
            },
            used,
        ))
    }
}
// SAFETY: the region is the buffer's own device memory, alive while it is; a GpuArray's
// keep-alive handle shares its storage Arc.
unsafe impl<T: DeviceRepr> RecvBuffer for DeviceBuffer<T> {}

// SAFETY: the region is the buffer's own device memory, alive while it is; a GpuArray's
// keep-alive handle shares its storage Arc.
unsafe impl<T: DeviceRepr> SendBuffer for DeviceView<'_, T> {
    fn region(
        &self,
        _: &'static str,
        _: &'static str,
        stream: &Stream,
        access: Access,
    ) -> Result<(Region, InUse<'_>)> {
        let used = self.device_range().use_on(stream, access)?;
        Ok((
            Region {
                ptr: used.ptr(),
                len: self.len(),
                layout: ElementLayout::of_repr::<T>(),
                device: None,
            },
            used,
        ))
    }
}

// SAFETY: the region is the buffer's own device memory, alive while it is; a GpuArray's
// keep-alive handle shares its storage Arc.
unsafe impl<T: DeviceRepr> SendBuffer for DeviceViewMut<'_, T> {
    fn region(
        &self,
        _: &'static str,
        _: &'static str,
        stream: &Stream,
        access: Access,
    ) -> Result<(Region, InUse<'_>)> {
        let used = self.device_range().use_on(stream, access)?;
        Ok((
            Region {
                ptr: used.ptr(),
                len: self.len(),
                layout: ElementLayout::of_repr::<T>(),
                device: None,
            },
            used,
        ))
    }
}
// SAFETY: the region is the buffer's own device memory, alive while it is; a GpuArray's
// keep-alive handle shares its storage Arc.
unsafe impl<T: DeviceRepr> RecvBuffer for DeviceViewMut<'_, T> {}

// SAFETY: the region is the buffer's own device memory, alive while it is; a GpuArray's
// keep-alive handle shares its storage Arc.
unsafe impl<E: Element> SendBuffer for GpuArray<E> {
    fn region(
        &self,
        call: &'static str,
        what: &'static str,
        stream: &Stream,
        access: Access,
    ) -> Result<(Region, InUse<'_>)> {
        if !self.is_c_contiguous() {
            return Err(Error::NotContiguous {
                call,
                what,
                shape: self.shape().to_vec(),
                strides: self.strides().to_vec(),
            });
        }
        let used = self.use_on(stream, access).map_err(|e| match e {
            rucuda_array::ArrayError::Driver(d) => Error::Driver(d),
            other => Error::invalid(format!("{call}: {what}: {other}")),
        })?;
        Ok((
            Region {
                ptr: used.ptr(),
                len: self.len(),
                layout: ElementLayout::of_dtype(E::DTYPE),
                device: Some(self.context().device().ordinal()),
            },
            used,
        ))
    }

    fn keep_alive(&self) -> Option<Box<dyn Any>> {
        // Another view of the same storage: its `Arc` keeps the memory allocated.
        Some(Box::new(self.squeeze()))
    }
}
// SAFETY: the region is the buffer's own device memory, alive while it is; a GpuArray's
// keep-alive handle shares its storage Arc.
unsafe impl<E: Element> RecvBuffer for GpuArray<E> {}

/// How long a checked collective waits for the other ranks' descriptions.
const CHECK_TIMEOUT: Duration = Duration::from_secs(300);

/// What keeps `buf` allocated until a group issues the call that uses it: its
/// [`keep_alive`](SendBuffer::keep_alive) handle inside a group (a buffer without one is
/// refused there with [`Error::NotInGroup`]), nothing outside a group (the call is
/// queued at once, and the caller's borrow covers it).
pub(crate) fn owner(
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

fn same_size(call: &'static str, what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::SizeMismatch {
            call,
            what,
            expected,
            got,
        })
    }
}

fn same_type(call: &'static str, send: &Region, recv: &Region) -> Result<()> {
    let (a, b) = (send.layout, recv.layout);
    if a.scalar == b.scalar && a.size == b.size && a.reductions == b.reductions {
        Ok(())
    } else {
        Err(Error::TypeMismatch {
            call,
            send: a.name.to_string(),
            recv: b.name.to_string(),
        })
    }
}

fn byte_offset(region: &Region, elements: usize) -> CUdeviceptr {
    region.ptr + (elements * region.layout.size) as CUdeviceptr
}

/// The rank asking, for [`plan`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Me {
    pub rank: usize,
    pub size: usize,
    pub device: usize,
}

/// What NCCL will be asked, once every check passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Plan {
    pub sig: Signature,
    pub send: CUdeviceptr,
    pub recv: CUdeviceptr,
}

/// Checks one operation and works out its NCCL arguments. `send` is `None` for the
/// in-place forms (and for `recv`); `recv` is the buffer written (for `send`: read).
/// `other` is the root (broadcast, reduce) or the peer (send, recv).
pub(crate) fn plan(
    kind: OpKind,
    op: Option<ReduceOp>,
    other: Option<usize>,
    send: Option<&Region>,
    recv: &Region,
    me: Me,
) -> Result<Plan> {
    let call = kind.name();
    for (what, region) in [("the input", send), ("the output", Some(recv))] {
        if let Some(got) = region.and_then(|r| r.device).filter(|&d| d != me.device) {
            return Err(Error::WrongDevice {
                call,
                what,
                expected: me.device,
                got,
            });
        }
    }
    if let Some(r) = other {
        if r >= me.size || i32::try_from(r).is_err() {
            let what = if matches!(kind, OpKind::Send | OpKind::Recv) {
                "peer"
            } else {
                "root"
            };
            return Err(Error::invalid(format!(
                "{call}: {what} {r} is not a rank of this communicator of {}",
                me.size
            )));
        }
    }
    if let Some(s) = send {
        same_type(call, s, recv)?;
    }
    let (send_ptr, recv_ptr, counted) = match (kind, send) {
        (OpKind::AllGather, Some(s)) => {
            same_size(call, "the output", s.len * me.size, recv.len)?;
            (s.ptr, recv.ptr, s.len)
        }
        (OpKind::AllGather, None) => {
            let chunk = recv.len / me.size;
            same_size(call, "the buffer", chunk * me.size, recv.len)?;
            (byte_offset(recv, me.rank * chunk), recv.ptr, chunk)
        }
        (OpKind::ReduceScatter, Some(s)) => {
            same_size(call, "the input", recv.len * me.size, s.len)?;
            (s.ptr, recv.ptr, recv.len)
        }
        (OpKind::ReduceScatter, None) => {
            let chunk = recv.len / me.size;
            same_size(call, "the buffer", chunk * me.size, recv.len)?;
            (recv.ptr, byte_offset(recv, me.rank * chunk), chunk)
        }
        (_, Some(s)) => {
            same_size(call, "the output", s.len, recv.len)?;
            (s.ptr, recv.ptr, s.len)
        }
        (_, None) => (recv.ptr, recv.ptr, recv.len),
    };
    let (data_type, count) = recv.layout.wire(call, op, counted)?;
    Ok(Plan {
        sig: Signature {
            kind,
            data_type,
            count,
            op,
            root: other.filter(|_| matches!(kind, OpKind::Broadcast | OpKind::Reduce)),
            peer: other.filter(|_| matches!(kind, OpKind::Send | OpKind::Recv)),
        },
        send: send_ptr,
        recv: recv_ptr,
    })
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
            let pending = group::Pending {
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

/// The NCCL call of a checked plan, queued on `s` now.
///
/// # Safety
/// `comm` is a live communicator; `plan` was made by [`plan`] for buffers that are still
/// alive (and stay so until the stream has run the operation) on `comm`'s device, and
/// `s` is a live stream of that device.
pub(crate) unsafe fn enqueue(comm: ncclComm_t, plan: &Plan, s: cudaStream_t) -> Result<()> {
    let Signature {
        kind,
        data_type,
        count,
        op,
        root,
        peer,
    } = plan.sig;
    let (send, recv) = (plan.send as *const c_void, plan.recv as *mut c_void);
    let dtype = data_type.raw();
    let op = op.map_or(ReduceOp::Sum.raw(), ReduceOp::raw);
    // Ranks were checked to fit in an i32 by `plan`.
    let root = root.or(peer).unwrap_or(0) as i32;
    // SAFETY: (every arm) `plan` checked that the buffers hold what NCCL reads and
    // writes for this operation (`count` elements of `dtype`, times the ranks where
    // the operation gathers or scatters) on the communicator's device; the caller
    // keeps them alive until the stream has run the operation, as for every
    // asynchronous copy.
    unsafe {
        match kind {
            OpKind::AllReduce => {
                call!(comm, ncclAllReduce(send, recv, count, dtype, op, comm, s))
            }
            OpKind::Broadcast => {
                call!(comm, ncclBroadcast(send, recv, count, dtype, root, comm, s))
            }
            OpKind::Reduce => {
                call!(
                    comm,
                    ncclReduce(send, recv, count, dtype, op, root, comm, s)
                )
            }
            OpKind::AllGather => {
                call!(comm, ncclAllGather(send, recv, count, dtype, comm, s))
            }
            OpKind::ReduceScatter => {
                call!(
                    comm,
                    ncclReduceScatter(send, recv, count, dtype, op, comm, s)
                )
            }
            OpKind::Send => call!(comm, ncclSend(send, count, dtype, root, comm, s)),
            OpKind::Recv => call!(comm, ncclRecv(recv, count, dtype, root, comm, s)),
        }
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

/// Reads back what [`Signature::encode`] wrote, for messages.
fn describe_encoded(words: &[u64]) -> String {
    let kinds = [
        "all_reduce",
        "broadcast",
        "reduce",
        "all_gather",
        "reduce_scatter",
        "send",
        "recv",
    ];
    let kind = kinds
        .get(((words[0] >> 8) & 0xff) as usize)
        .copied()
        .unwrap_or("an unknown operation");
    let op = match words[0] & 0xff {
        0xff => String::new(),
        o => ReduceOp::ALL
            .get(o as usize)
            .map_or(String::new(), |op| format!(" ({})", op.name())),
    };
    let root = if words[3] == u64::MAX {
        String::new()
    } else {
        format!(" root {}", words[3])
    };
    format!(
        "{kind} of {} elements of NCCL type {}{op}{root}",
        words[2], words[1]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rucuda_array::DType;

    fn region(layout: ElementLayout, len: usize) -> Region {
        Region {
            ptr: 0x1000,
            len,
            layout,
            device: Some(0),
        }
    }

    fn f32s(len: usize) -> Region {
        region(ElementLayout::of_repr::<f32>(), len)
    }

    const ME: Me = Me {
        rank: 1,
        size: 4,
        device: 0,
    };

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

    #[test]
    fn encoded_descriptions_read_back() {
        let sig = Signature {
            kind: OpKind::Reduce,
            data_type: DataType::Float32,
            count: 12,
            op: Some(ReduceOp::Max),
            root: Some(1),
            peer: None,
        };
        assert_eq!(
            describe_encoded(&sig.encode()),
            "reduce of 12 elements of NCCL type 7 (max) root 1"
        );
        let sig = Signature {
            kind: OpKind::AllGather,
            op: None,
            root: None,
            ..sig
        };
        assert_eq!(
            describe_encoded(&sig.encode()),
            "all_gather of 12 elements of NCCL type 7"
        );
    }

    #[test]
    fn equal_sizes_for_the_elementwise_collectives() {
        for (kind, op) in [
            (OpKind::AllReduce, Some(ReduceOp::Sum)),
            (OpKind::Broadcast, None),
            (OpKind::Reduce, Some(ReduceOp::Max)),
        ] {
            let root = (kind != OpKind::AllReduce).then_some(2);
            let p = plan(kind, op, root, Some(&f32s(10)), &f32s(10), ME).unwrap();
            assert_eq!((p.sig.count, p.sig.data_type), (10, DataType::Float32));
            assert_eq!(p.sig.root, root);
            let e = plan(kind, op, root, Some(&f32s(10)), &f32s(9), ME).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::SizeMismatch {
                        expected: 10,
                        got: 9,
                        ..
                    }
                ),
                "{kind:?}: {e}"
            );
        }
    }

    #[test]
    fn gathers_and_scatters_count_the_ranks() {
        let p = plan(OpKind::AllGather, None, None, Some(&f32s(3)), &f32s(12), ME).unwrap();
        assert_eq!(p.sig.count, 3);
        let e = plan(OpKind::AllGather, None, None, Some(&f32s(3)), &f32s(9), ME).unwrap_err();
        assert_eq!(
            e.to_string(),
            "all_gather: the output has 9 elements, it needs 12"
        );
        let op = Some(ReduceOp::Sum);
        let p = plan(
            OpKind::ReduceScatter,
            op,
            None,
            Some(&f32s(12)),
            &f32s(3),
            ME,
        )
        .unwrap();
        assert_eq!(p.sig.count, 3);
        let e = plan(
            OpKind::ReduceScatter,
            op,
            None,
            Some(&f32s(10)),
            &f32s(3),
            ME,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "reduce_scatter: the input has 10 elements, it needs 12"
        );
        // In place: this rank's chunk is at rank × chunk.
        let p = plan(OpKind::AllGather, None, None, None, &f32s(12), ME).unwrap();
        assert_eq!((p.send, p.recv, p.sig.count), (0x1000 + 12, 0x1000, 3));
        let p = plan(OpKind::ReduceScatter, op, None, None, &f32s(12), ME).unwrap();
        assert_eq!((p.send, p.recv, p.sig.count), (0x1000, 0x1000 + 12, 3));
        assert!(plan(OpKind::AllGather, None, None, None, &f32s(10), ME).is_err());
    }

    #[test]
    fn roots_peers_types_and_devices_are_checked() {
        let e = plan(OpKind::Broadcast, None, Some(4), None, &f32s(4), ME).unwrap_err();
        assert!(e.to_string().contains("root 4 is not a rank"), "{e}");
        let e = plan(OpKind::Send, None, Some(7), None, &f32s(4), ME).unwrap_err();
        assert!(e.to_string().contains("peer 7 is not a rank"), "{e}");
        let p = plan(OpKind::Recv, None, Some(3), None, &f32s(4), ME).unwrap();
        assert_eq!((p.sig.peer, p.sig.root), (Some(3), None));
        let ints = region(ElementLayout::of_repr::<i32>(), 4);
        let e = plan(
            OpKind::AllReduce,
            Some(ReduceOp::Sum),
            None,
            Some(&f32s(4)),
            &ints,
            ME,
        );
        assert!(matches!(e, Err(Error::TypeMismatch { .. })));
        let mut elsewhere = f32s(4);
        elsewhere.device = Some(3);
        let e = plan(
            OpKind::AllReduce,
            Some(ReduceOp::Sum),
            None,
            Some(&elsewhere),
            &f32s(4),
            ME,
        );
        assert!(matches!(
            e,
            Err(Error::WrongDevice {
                expected: 0,
                got: 3,
                ..
            })
        ));
        // An f32 array and an f32 device buffer are the same type.
        let array = region(ElementLayout::of_dtype(DType::F32), 4);
        assert!(plan(
            OpKind::AllReduce,
            Some(ReduceOp::Min),
            None,
            Some(&array),
            &f32s(4),
            ME
        )
        .is_ok());
    }

    #[test]
    fn unsupported_reductions_are_refused_before_nccl() {
        let c = region(ElementLayout::of_dtype(DType::C64), 4);
        let p = plan(OpKind::AllReduce, Some(ReduceOp::Sum), None, None, &c, ME).unwrap();
        assert_eq!((p.sig.data_type, p.sig.count), (DataType::Float32, 8));
        let e = plan(OpKind::AllReduce, Some(ReduceOp::Prod), None, None, &c, ME).unwrap_err();
        assert!(
            matches!(
                e,
                Error::UnsupportedType {
                    call: "all_reduce",
                    ..
                }
            ),
            "{e}"
        );
        let h = region(ElementLayout::of_dtype(DType::I16), 4);
        assert!(plan(
            OpKind::ReduceScatter,
            Some(ReduceOp::Sum),
            None,
            None,
            &h,
            ME
        )
        .is_err());
        let p = plan(OpKind::AllGather, None, None, None, &h, ME).unwrap();
        assert_eq!((p.sig.data_type, p.sig.count), (DataType::Uint8, 2));
    }
}
