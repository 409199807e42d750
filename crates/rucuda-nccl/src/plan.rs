//! [`plan`]: the checks of one operation against its buffers and communicator, and the
//! NCCL arguments they give ([`Plan`]); [`enqueue`] makes the NCCL call of a plan.

use std::ffi::c_void;

use rucuda_driver_sys::CUdeviceptr;

use crate::buffers::Region;
use crate::dtype::ReduceOp;
use crate::error::{call, Error, Result};
use crate::signature::{OpKind, Signature};
use crate::sys::bindings::{cudaStream_t, ncclComm_t};

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
            let (mine, chunk) = own_chunk(call, recv, me)?;
            (mine, recv.ptr, chunk)
        }
        (OpKind::ReduceScatter, Some(s)) => {
            same_size(call, "the input", recv.len * me.size, s.len)?;
            (s.ptr, recv.ptr, recv.len)
        }
        (OpKind::ReduceScatter, None) => {
            let (mine, chunk) = own_chunk(call, recv, me)?;
            (recv.ptr, mine, chunk)
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

/// For the in-place all-gather and reduce-scatter: `buf` holds one equal chunk per
/// rank; the address of this rank's chunk and the chunk's length.
fn own_chunk(call: &'static str, buf: &Region, me: Me) -> Result<(CUdeviceptr, usize)> {
    let chunk = buf.len / me.size;
    same_size(call, "the buffer", chunk * me.size, buf.len)?;
    let offset = me.rank * chunk * buf.layout.size;
    Ok((buf.ptr + offset as CUdeviceptr, chunk))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffers::testing::{f32s, region};
    use crate::dtype::{DataType, ElementLayout};
    use rucuda_array::DType;

    const ME: Me = Me {
        rank: 1,
        size: 4,
        device: 0,
    };

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
