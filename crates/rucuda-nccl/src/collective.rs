//! The collectives and point-to-point operations, on [`GpuArray`]s, [`DeviceBuffer`]s
//! and device views of every type NCCL can carry (see the `dtype` module's table).
//!
//! Every operation is checked before NCCL sees it: the communicator is live, the stream
//! and buffers are on its GPU, arrays are contiguous, input and output hold the same
//! type, sizes fit the operation (all-gather: output = ranks × input; reduce-scatter:
//! input = ranks × output; the others: equal), roots and peers are ranks. Like every
//! asynchronous copy in rucuda, an operation only queues work on the stream: the buffers
//! must stay alive until the stream has run it (wait on the stream, or
//! [`Communicator::wait`] with a time limit).

use std::time::Duration;

use cuda_driver_sys::CUdeviceptr;
use rucuda_array::{Element, GpuArray};
use rucuda_driver::{DeviceBuffer, DeviceRepr, DeviceView, DeviceViewMut, Stream};

use crate::comm::Communicator;
use crate::dtype::{DataType, ElementLayout, ReduceOp};
use crate::error::{call, Error, Result};
use crate::group::{self, OpKind, Signature};
use crate::sys::bindings::{cudaStream_t, ncclComm_t};

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
pub trait SendBuffer {
    /// Its elements, or why NCCL cannot use it (a non-contiguous array).
    fn region(&self, call: &'static str, what: &'static str) -> Result<Region>;
}

/// Device memory a collective writes: [`DeviceBuffer`], [`DeviceViewMut`] and
/// C-contiguous [`GpuArray`]s.
pub trait RecvBuffer: SendBuffer {}

impl<T: DeviceRepr> SendBuffer for DeviceBuffer<T> {
    fn region(&self, _: &'static str, _: &'static str) -> Result<Region> {
        Ok(Region {
            ptr: rucuda_driver::DevicePtr::device_ptr(self),
            len: self.len(),
            layout: ElementLayout::of_repr::<T>(),
            device: Some(self.context().device().ordinal()),
        })
    }
}
impl<T: DeviceRepr> RecvBuffer for DeviceBuffer<T> {}

impl<T: DeviceRepr> SendBuffer for DeviceView<'_, T> {
    fn region(&self, _: &'static str, _: &'static str) -> Result<Region> {
        Ok(Region {
            ptr: rucuda_driver::DevicePtr::device_ptr(self),
            len: self.len(),
            layout: ElementLayout::of_repr::<T>(),
            device: None,
        })
    }
}

impl<T: DeviceRepr> SendBuffer for DeviceViewMut<'_, T> {
    fn region(&self, _: &'static str, _: &'static str) -> Result<Region> {
        Ok(Region {
            ptr: rucuda_driver::DevicePtr::device_ptr(self),
            len: self.len(),
            layout: ElementLayout::of_repr::<T>(),
            device: None,
        })
    }
}
impl<T: DeviceRepr> RecvBuffer for DeviceViewMut<'_, T> {}

impl<E: Element> SendBuffer for GpuArray<E> {
    fn region(&self, call: &'static str, what: &'static str) -> Result<Region> {
        if !self.is_c_contiguous() {
            return Err(Error::NotContiguous {
                call,
                what,
                shape: self.shape().to_vec(),
                strides: self.strides().to_vec(),
            });
        }
        Ok(Region {
            ptr: self.device_ptr(),
            len: self.len(),
            layout: ElementLayout::of_dtype(E::DTYPE),
            device: Some(self.context().device().ordinal()),
        })
    }
}
impl<E: Element> RecvBuffer for GpuArray<E> {}

/// How long a checked collective waits for the other ranks' descriptions.
const CHECK_TIMEOUT: Duration = Duration::from_secs(300);

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

impl Communicator {
    /// Checks shared by every operation, then makes the communicator's context current.
    fn prepare(
        &self,
        call: &'static str,
        stream: &Stream,
        regions: &[(&'static str, &Region)],
    ) -> Result<()> {
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
        for (what, region) in regions {
            if let Some(got) = region.device.filter(|&d| d != device) {
                return Err(Error::WrongDevice {
                    call,
                    what,
                    expected: device,
                    got,
                });
            }
        }
        self.ctx_bind()
    }

    fn ctx_bind(&self) -> Result<()> {
        Ok(self.context().bind()?)
    }

    fn check_rank(&self, call: &'static str, what: &str, rank: usize) -> Result<i32> {
        if rank < self.size() {
            i32::try_from(rank)
                .map_err(|_| Error::invalid(format!("{call}: {what} {rank} is too large")))
        } else {
            Err(Error::invalid(format!(
                "{call}: {what} {rank} is not a rank of this communicator of {}",
                self.size()
            )))
        }
    }

    /// After the checks: the cross-rank check when on, then the NCCL call, then the
    /// group's record.
    fn issue(
        &self,
        sig: Signature,
        stream: &Stream,
        enqueue: impl FnOnce(ncclComm_t, cudaStream_t) -> Result<()>,
    ) -> Result<()> {
        if self.is_checked()
            && group::depth() == 0
            && !matches!(sig.kind, OpKind::Send | OpKind::Recv)
        {
            self.compare_with_peers(&sig, stream)?;
        }
        enqueue(self.handle(), stream.raw() as cudaStream_t)?;
        group::record(self, sig);
        Ok(())
    }

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
        S: SendBuffer + ?Sized,
        R: RecvBuffer + ?Sized,
    {
        const CALL: &str = "all_reduce";
        in_group((|| {
            let (s, r) = (
                send.region(CALL, "the input")?,
                recv.region(CALL, "the output")?,
            );
            self.prepare(CALL, stream, &[("the input", &s), ("the output", &r)])?;
            same_type(CALL, &s, &r)?;
            same_size(CALL, "the output", s.len, r.len)?;
            let (dtype, count) = s.layout.wire(CALL, Some(op), s.len)?;
            self.all_reduce_raw(s.ptr, r.ptr, dtype, count, op, stream)
        })())
    }

    /// All-reduce in place: `buf` is both input and output.
    pub fn all_reduce_in_place<R>(&self, buf: &mut R, op: ReduceOp, stream: &Stream) -> Result<()>
    where
        R: RecvBuffer + ?Sized,
    {
        const CALL: &str = "all_reduce";
        in_group((|| {
            let b = buf.region(CALL, "the buffer")?;
            self.prepare(CALL, stream, &[("the buffer", &b)])?;
            let (dtype, count) = b.layout.wire(CALL, Some(op), b.len)?;
            self.all_reduce_raw(b.ptr, b.ptr, dtype, count, op, stream)
        })())
    }

    fn all_reduce_raw(
        &self,
        send: CUdeviceptr,
        recv: CUdeviceptr,
        dtype: DataType,
        count: usize,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        let sig = Signature {
            kind: OpKind::AllReduce,
            data_type: dtype,
            count,
            op: Some(op),
            root: None,
            peer: None,
        };
        self.issue(sig, stream, |comm, s| {
            // SAFETY: both regions hold `count` elements of `dtype` on the communicator's
            // device (checked); the caller keeps them alive until the stream ran this.
            unsafe {
                call!(
                    comm,
                    ncclAllReduce(send as _, recv as _, count, dtype.raw(), op.raw(), comm, s)
                )
            }
        })
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
        S: SendBuffer + ?Sized,
        R: RecvBuffer + ?Sized,
    {
        const CALL: &str = "broadcast";
        in_group((|| {
            let (s, r) = (
                send.region(CALL, "the input")?,
                recv.region(CALL, "the output")?,
            );
            self.prepare(CALL, stream, &[("the input", &s), ("the output", &r)])?;
            same_type(CALL, &s, &r)?;
            same_size(CALL, "the output", s.len, r.len)?;
            self.broadcast_raw(s.ptr, &r, root, stream)
        })())
    }

    /// Broadcast in place: `root`'s `buf` is copied into every other rank's `buf`.
    pub fn broadcast_in_place<R>(&self, buf: &mut R, root: usize, stream: &Stream) -> Result<()>
    where
        R: RecvBuffer + ?Sized,
    {
        const CALL: &str = "broadcast";
        in_group((|| {
            let b = buf.region(CALL, "the buffer")?;
            self.prepare(CALL, stream, &[("the buffer", &b)])?;
            self.broadcast_raw(b.ptr, &b, root, stream)
        })())
    }

    fn broadcast_raw(
        &self,
        send: CUdeviceptr,
        recv: &Region,
        root: usize,
        stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "broadcast";
        let root_c = self.check_rank(CALL, "root", root)?;
        let (dtype, count) = recv.layout.wire(CALL, None, recv.len)?;
        let sig = Signature {
            kind: OpKind::Broadcast,
            data_type: dtype,
            count,
            op: None,
            root: Some(root),
            peer: None,
        };
        let recv = recv.ptr;
        self.issue(sig, stream, |comm, s| {
            // SAFETY: both regions hold `count` elements of `dtype` on the communicator's
            // device (checked); the caller keeps them alive until the stream ran this.
            unsafe {
                call!(
                    comm,
                    ncclBroadcast(send as _, recv as _, count, dtype.raw(), root_c, comm, s)
                )
            }
        })
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
        S: SendBuffer + ?Sized,
        R: RecvBuffer + ?Sized,
    {
        const CALL: &str = "reduce";
        in_group((|| {
            let (s, r) = (
                send.region(CALL, "the input")?,
                recv.region(CALL, "the output")?,
            );
            self.prepare(CALL, stream, &[("the input", &s), ("the output", &r)])?;
            same_type(CALL, &s, &r)?;
            same_size(CALL, "the output", s.len, r.len)?;
            self.reduce_raw(&s, r.ptr, op, root, stream)
        })())
    }

    /// Reduce in place: `root`'s `buf` becomes the reduction of every rank's `buf`.
    pub fn reduce_in_place<R>(
        &self,
        buf: &mut R,
        op: ReduceOp,
        root: usize,
        stream: &Stream,
    ) -> Result<()>
    where
        R: RecvBuffer + ?Sized,
    {
        const CALL: &str = "reduce";
        in_group((|| {
            let b = buf.region(CALL, "the buffer")?;
            self.prepare(CALL, stream, &[("the buffer", &b)])?;
            self.reduce_raw(&b, b.ptr, op, root, stream)
        })())
    }

    fn reduce_raw(
        &self,
        send: &Region,
        recv: CUdeviceptr,
        op: ReduceOp,
        root: usize,
        stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "reduce";
        let root_c = self.check_rank(CALL, "root", root)?;
        let (dtype, count) = send.layout.wire(CALL, Some(op), send.len)?;
        let sig = Signature {
            kind: OpKind::Reduce,
            data_type: dtype,
            count,
            op: Some(op),
            root: Some(root),
            peer: None,
        };
        let send = send.ptr;
        self.issue(sig, stream, |comm, s| {
            // SAFETY: both regions hold `count` elements of `dtype` on the communicator's
            // device (checked); the caller keeps them alive until the stream ran this.
            unsafe {
                call!(
                    comm,
                    ncclReduce(
                        send as _,
                        recv as _,
                        count,
                        dtype.raw(),
                        op.raw(),
                        root_c,
                        comm,
                        s
                    )
                )
            }
        })
    }

    /// All-gather (`ncclAllGather`): every rank's `recv` becomes the concatenation of
    /// the ranks' `send`s in rank order; `recv` holds `size() × send.len()` elements.
    pub fn all_gather<S, R>(&self, send: &S, recv: &mut R, stream: &Stream) -> Result<()>
    where
        S: SendBuffer + ?Sized,
        R: RecvBuffer + ?Sized,
    {
        const CALL: &str = "all_gather";
        in_group((|| {
            let (s, r) = (
                send.region(CALL, "the input")?,
                recv.region(CALL, "the output")?,
            );
            self.prepare(CALL, stream, &[("the input", &s), ("the output", &r)])?;
            same_type(CALL, &s, &r)?;
            same_size(CALL, "the output", s.len * self.size(), r.len)?;
            self.all_gather_raw(s.ptr, &s, r.ptr, stream)
        })())
    }

    /// All-gather in place: `buf` holds `size()` equal chunks; this rank's own chunk (at
    /// `rank() × chunk`) is the input, and every chunk is filled.
    pub fn all_gather_in_place<R>(&self, buf: &mut R, stream: &Stream) -> Result<()>
    where
        R: RecvBuffer + ?Sized,
    {
        const CALL: &str = "all_gather";
        in_group((|| {
            let b = buf.region(CALL, "the buffer")?;
            self.prepare(CALL, stream, &[("the buffer", &b)])?;
            let chunk = b.len / self.size();
            same_size(CALL, "the buffer", chunk * self.size(), b.len)?;
            let own = Region { len: chunk, ..b };
            self.all_gather_raw(byte_offset(&b, self.rank() * chunk), &own, b.ptr, stream)
        })())
    }

    fn all_gather_raw(
        &self,
        send: CUdeviceptr,
        chunk: &Region,
        recv: CUdeviceptr,
        stream: &Stream,
    ) -> Result<()> {
        let (dtype, count) = chunk.layout.wire("all_gather", None, chunk.len)?;
        let sig = Signature {
            kind: OpKind::AllGather,
            data_type: dtype,
            count,
            op: None,
            root: None,
            peer: None,
        };
        self.issue(sig, stream, |comm, s| {
            // SAFETY: the input holds `count` and the output `size × count` elements of
            // `dtype` on the communicator's device (checked); the caller keeps them alive.
            unsafe {
                call!(
                    comm,
                    ncclAllGather(send as _, recv as _, count, dtype.raw(), comm, s)
                )
            }
        })
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
        S: SendBuffer + ?Sized,
        R: RecvBuffer + ?Sized,
    {
        const CALL: &str = "reduce_scatter";
        in_group((|| {
            let (s, r) = (
                send.region(CALL, "the input")?,
                recv.region(CALL, "the output")?,
            );
            self.prepare(CALL, stream, &[("the input", &s), ("the output", &r)])?;
            same_type(CALL, &s, &r)?;
            same_size(CALL, "the input", r.len * self.size(), s.len)?;
            self.reduce_scatter_raw(s.ptr, &r, r.ptr, op, stream)
        })())
    }

    /// Reduce-scatter in place: `buf` holds `size()` equal chunks; this rank's chunk (at
    /// `rank() × chunk`) receives its part of the reduction.
    pub fn reduce_scatter_in_place<R>(
        &self,
        buf: &mut R,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()>
    where
        R: RecvBuffer + ?Sized,
    {
        const CALL: &str = "reduce_scatter";
        in_group((|| {
            let b = buf.region(CALL, "the buffer")?;
            self.prepare(CALL, stream, &[("the buffer", &b)])?;
            let chunk = b.len / self.size();
            same_size(CALL, "the buffer", chunk * self.size(), b.len)?;
            let own = Region { len: chunk, ..b };
            self.reduce_scatter_raw(
                b.ptr,
                &own,
                byte_offset(&b, self.rank() * chunk),
                op,
                stream,
            )
        })())
    }

    fn reduce_scatter_raw(
        &self,
        send: CUdeviceptr,
        chunk: &Region,
        recv: CUdeviceptr,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        let (dtype, count) = chunk.layout.wire("reduce_scatter", Some(op), chunk.len)?;
        let sig = Signature {
            kind: OpKind::ReduceScatter,
            data_type: dtype,
            count,
            op: Some(op),
            root: None,
            peer: None,
        };
        self.issue(sig, stream, |comm, s| {
            // SAFETY: the input holds `size × count` and the output `count` elements of
            // `dtype` on the communicator's device (checked); the caller keeps them alive.
            unsafe {
                call!(
                    comm,
                    ncclReduceScatter(send as _, recv as _, count, dtype.raw(), op.raw(), comm, s)
                )
            }
        })
    }

    /// Sends `buf` to rank `peer` (`ncclSend`), which must [`recv`](Communicator::recv)
    /// as many bytes from this rank. Several sends and receives of one rank go in one
    /// [`group`](crate::group()) (an exchange with two peers otherwise deadlocks).
    pub fn send<S>(&self, buf: &S, peer: usize, stream: &Stream) -> Result<()>
    where
        S: SendBuffer + ?Sized,
    {
        const CALL: &str = "send";
        in_group((|| {
            let b = buf.region(CALL, "the buffer")?;
            self.prepare(CALL, stream, &[("the buffer", &b)])?;
            let peer_c = self.check_rank(CALL, "peer", peer)?;
            let (dtype, count) = b.layout.wire(CALL, None, b.len)?;
            let sig = Signature {
                kind: OpKind::Send,
                data_type: dtype,
                count,
                op: None,
                root: None,
                peer: Some(peer),
            };
            self.issue(sig, stream, |comm, s| {
                // SAFETY: the buffer holds `count` elements of `dtype` on the
                // communicator's device (checked); the caller keeps it alive.
                unsafe {
                    call!(
                        comm,
                        ncclSend(b.ptr as _, count, dtype.raw(), peer_c, comm, s)
                    )
                }
            })
        })())
    }

    /// Receives into `buf` from rank `peer` (`ncclRecv`), which must
    /// [`send`](Communicator::send) as many bytes to this rank.
    pub fn recv<R>(&self, buf: &mut R, peer: usize, stream: &Stream) -> Result<()>
    where
        R: RecvBuffer + ?Sized,
    {
        const CALL: &str = "recv";
        in_group((|| {
            let b = buf.region(CALL, "the buffer")?;
            self.prepare(CALL, stream, &[("the buffer", &b)])?;
            let peer_c = self.check_rank(CALL, "peer", peer)?;
            let (dtype, count) = b.layout.wire(CALL, None, b.len)?;
            let sig = Signature {
                kind: OpKind::Recv,
                data_type: dtype,
                count,
                op: None,
                root: None,
                peer: Some(peer),
            };
            self.issue(sig, stream, |comm, s| {
                // SAFETY: the buffer holds `count` elements of `dtype` on the
                // communicator's device (checked); the caller keeps it alive.
                unsafe {
                    call!(
                        comm,
                        ncclRecv(b.ptr as _, count, dtype.raw(), peer_c, comm, s)
                    )
                }
            })
        })())
    }

    /// The cross-rank check ([`Communicator::set_checked`]): all-gathers every rank's
    /// description of this collective and compares them.
    fn compare_with_peers(&self, sig: &Signature, stream: &Stream) -> Result<()> {
        let mine = sig.encode();
        let send = DeviceBuffer::from_slice(self.context(), &mine)?;
        let all = DeviceBuffer::<u64>::zeros(self.context(), 4 * self.size())?;
        let (send_ptr, recv_ptr) = (
            rucuda_driver::DevicePtr::device_ptr(&send),
            rucuda_driver::DevicePtr::device_ptr(&all),
        );
        let raw_stream = stream.raw() as cudaStream_t;
        let comm = self.handle();
        // SAFETY: 4 u64 in, 4 × size u64 out, both allocated above on this device and
        // kept until the stream was waited for below.
        unsafe {
            call!(
                comm,
                ncclAllGather(
                    send_ptr as _,
                    recv_ptr as _,
                    4,
                    DataType::Uint64.raw(),
                    comm,
                    raw_stream
                )
            )?
        };
        self.wait(stream, CHECK_TIMEOUT)?;
        let words = all.to_vec()?;
        drop(send);
        all.free()?;
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
    fn type_and_size_checks() {
        let region = |layout, len| Region {
            ptr: 0,
            len,
            layout,
            device: None,
        };
        let f = region(ElementLayout::of_repr::<f32>(), 4);
        let i = region(ElementLayout::of_repr::<i32>(), 4);
        let e = same_type("all_reduce", &f, &i).unwrap_err().to_string();
        assert_eq!(
            e,
            "all_reduce: the input holds float, the output int; they must be the same type"
        );
        // An f32 array and an f32 device buffer are the same type.
        let a = region(ElementLayout::of_dtype(rucuda_array::DType::F32), 4);
        assert!(same_type("all_reduce", &f, &a).is_ok());
        assert!(same_size("all_gather", "the output", 8, 8).is_ok());
        assert!(matches!(
            same_size("all_gather", "the output", 8, 6),
            Err(Error::SizeMismatch {
                expected: 8,
                got: 6,
                ..
            })
        ));
        assert_eq!(byte_offset(&f, 3), 12);
    }
}
