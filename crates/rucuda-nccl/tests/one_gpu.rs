//! GPU tests that need one GPU: a one-rank communicator (every collective is then the
//! identity or a copy, checked against the CPU for every element type), the refusals,
//! abort, groups that launch nothing when a call fails (nested or not, or when a
//! communicator is dropped inside), groups that refuse plain device buffers and keep
//! arrays and streams made inside them alive, and NCCL's refusal of a second rank on the same GPU.
//! Every test sets `NCCL_NVLS_ENABLE=0` and skips (with the marker) where NCCL is missing.

mod common;

use std::time::Duration;

use common::{ctx, setup, CHILD_ENV, WAIT};
use rucuda_array::{GpuArray, SliceArg};
use rucuda_driver::{DeviceBuffer, Stream, StreamFlags};
use rucuda_nccl::sys::ncclResult_t;
use rucuda_nccl::{group, Communicator, Error, ReduceOp, UniqueId};

fn one_rank() -> (Communicator, Stream) {
    let ctx = ctx(0);
    let id = UniqueId::new().expect("a unique id");
    let comm = Communicator::init_rank(&ctx, 1, &id, 0).expect("a one-rank communicator");
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING).expect("a stream");
    (comm, stream)
}

#[test]
#[ignore = "needs a CUDA device"]
fn one_rank_every_collective_of_every_type_matches_the_cpu() {
    if setup().is_none() {
        return;
    }
    let (comm, stream) = one_rank();
    assert_eq!(
        (comm.rank(), comm.size(), comm.device().ordinal()),
        (0, 1, 0)
    );
    assert_eq!(comm.query().expect("query"), (0, 1, 0));
    let cases = common::every_type_one_rank(&comm, &stream, common::seed());
    common::device_buffers_one_rank(&comm, &stream, common::seed());
    comm.async_error().expect("no asynchronous error");
    println!("{cases} cases checked on one rank");
    comm.destroy().expect("destroy");
    assert!(rucuda_nccl::take_drop_errors().is_empty());
}

#[test]
#[ignore = "needs a CUDA device"]
fn one_rank_from_init_all_in_groups_and_split() {
    if setup().is_none() {
        return;
    }
    let ctx = ctx(0);
    let comms = Communicator::init_all(std::slice::from_ref(&ctx)).expect("init_all");
    assert_eq!((comms.len(), comms[0].size()), (1, 1));
    let streams = vec![Stream::null(&ctx)];
    let cases = common::suite_grouped::<f32>(&comms, &streams, common::seed())
        + common::suite_grouped::<i64>(&comms, &streams, common::seed());
    println!("{cases} grouped cases on one rank");

    let part = comms[0].split(Some(7), 0).expect("split").expect("a color");
    assert_eq!((part.rank(), part.size()), (0, 1));
    common::suite_one_rank::<u8>(&part, &streams[0], common::seed());
    assert!(comms[0]
        .split(None, 0)
        .expect("split without color")
        .is_none());
    let again = Communicator::split_all(&[(&comms[0], Some(1), 0)]).expect("split_all");
    assert_eq!(again[0].as_ref().map(Communicator::size), Some(1));

    // The driver layer's idea of the current context survived NCCL's device switches.
    let x = GpuArray::from_slice(&streams[0], &[1.0f32, 2.0]).expect("an array");
    assert_eq!(x.to_vec().expect("back"), vec![1.0, 2.0]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn after_abort_every_call_is_an_error_not_a_hang() {
    if setup().is_none() {
        return;
    }
    let (comm, stream) = one_rank();
    let mut x = GpuArray::from_slice(&stream, &[1.0f32; 64]).expect("an array");
    comm.all_reduce_in_place(&mut x, ReduceOp::Sum, &stream)
        .expect("before abort");
    comm.wait(&stream, WAIT).expect("wait");
    comm.abort().expect("abort");
    assert!(comm.is_aborted());
    assert!(comm.raw().is_null());
    let e = comm
        .all_reduce_in_place(&mut x, ReduceOp::Sum, &stream)
        .expect_err("aborted");
    assert!(matches!(e, Error::Aborted { call: "all_reduce" }), "{e}");
    assert!(matches!(
        comm.broadcast_in_place(&mut x, 0, &stream),
        Err(Error::Aborted { .. })
    ));
    assert!(matches!(
        comm.send(&x, 0, &stream),
        Err(Error::Aborted { .. })
    ));
    assert!(matches!(comm.async_error(), Err(Error::Aborted { .. })));
    assert!(matches!(
        comm.wait(&stream, WAIT),
        Err(Error::Aborted { .. })
    ));
    assert!(matches!(comm.split(Some(0), 0), Err(Error::Aborted { .. })));
    comm.abort().expect("aborting twice does nothing");
    comm.destroy()
        .expect("an aborted communicator has nothing to destroy");
    // The context is still fine.
    assert_eq!(x.to_vec().expect("back"), vec![1.0f32; 64]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_group_with_a_failing_call_launches_nothing() {
    if setup().is_none() {
        return;
    }
    let (comm, stream) = one_rank();
    let input = GpuArray::from_slice(&stream, &[3.0f32; 1000]).expect("input");
    let mut out = GpuArray::<f32>::full(&stream, &[1000], -1.0).expect("output");
    let mut short = GpuArray::<f32>::zeros(&stream, &[999]).expect("short output");
    stream.synchronize().expect("sync");
    let e = group(|| {
        comm.all_reduce(&input, &mut out, ReduceOp::Sum, &stream)?;
        comm.all_reduce(&input, &mut short, ReduceOp::Sum, &stream)
    })
    .expect_err("the second call is refused");
    assert!(
        matches!(
            e,
            Error::SizeMismatch {
                call: "all_reduce",
                expected: 1000,
                got: 999,
                ..
            }
        ),
        "{e}"
    );
    comm.wait(&stream, WAIT).expect("nothing pending");
    assert!(
        out.to_vec().expect("back").iter().all(|&v| v == -1.0),
        "the first all-reduce of the failed group must not have run"
    );
    // An error the closure swallows still cancels the group.
    let swallowed = group(|| {
        comm.all_reduce(&input, &mut out, ReduceOp::Sum, &stream)?;
        let _ = comm.reduce(&input, &mut short, ReduceOp::Max, 5, &stream);
        Ok(())
    });
    assert!(
        matches!(swallowed, Err(Error::GroupCancelled)),
        "the closure returned Ok, the group launched nothing: {swallowed:?}"
    );
    comm.wait(&stream, WAIT).expect("nothing pending");
    assert!(
        out.to_vec().expect("back").iter().all(|&v| v == -1.0),
        "a group with a failed call launches nothing, even when the error was ignored"
    );
    // The communicator is fine afterwards, and a clean group runs.
    group(|| comm.all_reduce(&input, &mut out, ReduceOp::Sum, &stream)).expect("a clean group");
    comm.wait(&stream, WAIT).expect("wait");
    assert!(out.to_vec().expect("back").iter().all(|&v| v == 3.0));
    // A panic inside a group ends it too; the next group works.
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = group(|| -> rucuda_nccl::Result<()> {
            comm.all_reduce_in_place(&mut out, ReduceOp::Sum, &stream)?;
            panic!("inside a group")
        });
    }));
    assert!(panicked.is_err());
    group(|| comm.all_reduce_in_place(&mut out, ReduceOp::Prod, &stream)).expect("after a panic");
    comm.wait(&stream, WAIT).expect("wait");
}

#[test]
#[ignore = "needs a CUDA device"]
fn nested_groups_join_the_outermost_and_a_communicator_dropped_inside_cancels() {
    if setup().is_none() {
        return;
    }
    let (comm, stream) = one_rank();
    let five = GpuArray::from_slice(&stream, &[5.0f32; 1000]).expect("input");
    let mut out = GpuArray::<f32>::full(&stream, &[1000], -1.0).expect("output");
    stream.synchronize().expect("sync");
    let untouched = |out: &GpuArray<f32>, why: &str| {
        comm.wait(&stream, WAIT).expect("nothing pending");
        assert!(
            out.to_vec().expect("back").iter().all(|&v| v == -1.0),
            "{why}"
        );
    };
    // An inner group that succeeded launches nothing by itself: the outer closure's
    // error cancels it too.
    let e = group(|| {
        group(|| comm.all_reduce(&five, &mut out, ReduceOp::Sum, &stream))?;
        Err::<(), _>(Error::InvalidArgument("the caller gives up".into()))
    })
    .expect_err("the outer closure failed");
    assert!(e.to_string().contains("the caller gives up"), "{e}");
    untouched(&out, "the inner group's all-reduce must not have run");
    // A communicator dropped inside a group takes its recorded calls with it, and the
    // group launches nothing.
    let (other, _other_stream) = one_rank();
    let r = group(|| {
        comm.all_reduce(&five, &mut out, ReduceOp::Sum, &stream)?;
        other.all_reduce_in_place(&mut out, ReduceOp::Sum, &stream)?;
        drop(other);
        Ok(())
    });
    assert!(matches!(r, Err(Error::GroupCancelled)), "{r:?}");
    untouched(&out, "nothing of a group that lost a communicator may run");
    // Nested and clean: the outermost launches the inner group's call.
    group(|| {
        group(|| comm.all_reduce(&five, &mut out, ReduceOp::Sum, &stream))?;
        Ok(())
    })
    .expect("a clean nested group");
    comm.wait(&stream, WAIT).expect("wait");
    assert!(out.to_vec().expect("back").iter().all(|&v| v == 5.0));
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_group_refuses_plain_buffers_and_keeps_its_arrays_and_streams_alive() {
    if setup().is_none() {
        return;
    }
    let (comm, stream) = one_rank();
    let ctx = ctx(0);
    // A plain DeviceBuffer or view cannot be kept alive by the group: refused inside it
    // (the group launches nothing), accepted outside.
    let mut plain = DeviceBuffer::from_slice(&ctx, &[2.0f32; 64]).expect("buffer");
    let e = group(|| comm.all_reduce_in_place(&mut plain, ReduceOp::Sum, &stream))
        .expect_err("a DeviceBuffer in a group");
    assert!(
        matches!(
            e,
            Error::NotInGroup {
                call: "all_reduce",
                what: "the buffer"
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("use GpuArray"), "{e}");
    let array = GpuArray::from_slice(&stream, &[2.0f32; 64]).expect("array");
    let mut view = plain.slice_mut(..).expect("a view");
    let e = group(|| comm.all_reduce(&array, &mut view, ReduceOp::Sum, &stream))
        .expect_err("a device view in a group");
    assert!(
        matches!(
            e,
            Error::NotInGroup {
                what: "the output",
                ..
            }
        ),
        "{e}"
    );
    comm.all_reduce_in_place(&mut plain, ReduceOp::Sum, &stream)
        .expect("outside a group");
    comm.wait(&stream, WAIT).expect("wait");
    assert_eq!(plain.to_vec().expect("back"), vec![2.0f32; 64]);
    // Arrays and a stream made and dropped inside the closure: the records keep them
    // alive until the group issues, and the work runs.
    let mut out = GpuArray::<f32>::full(&stream, &[64], -1.0).expect("output");
    stream.synchronize().expect("sync");
    group(|| {
        let inner = Stream::new(&ctx, StreamFlags::NON_BLOCKING).expect("a stream");
        let tmp = GpuArray::from_slice(&inner, &[4.0f32; 64]).expect("array");
        inner.synchronize().expect("sync");
        comm.all_reduce(&tmp, &mut out, ReduceOp::Sum, &inner)?;
        drop(tmp);
        drop(inner);
        Ok(())
    })
    .expect("a group with arrays and a stream made inside");
    stream.synchronize().expect("sync");
    ctx.synchronize().expect("the group's work ran");
    assert_eq!(out.to_vec().expect("back"), vec![4.0f32; 64]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn refusals_come_before_nccl() {
    if setup().is_none() {
        return;
    }
    let (comm, stream) = one_rank();
    let a = GpuArray::<f32>::zeros(&stream, &[4, 6]).expect("array");
    let mut t = a.transpose();
    let e = comm
        .all_reduce_in_place(&mut t, ReduceOp::Sum, &stream)
        .expect_err("strided");
    assert!(
        matches!(
            e,
            Error::NotContiguous {
                call: "all_reduce",
                ..
            }
        ),
        "{e}"
    );
    let mut column = a
        .slice(&[SliceArg::All, SliceArg::index(1)])
        .expect("a column");
    assert!(matches!(
        comm.broadcast_in_place(&mut column, 0, &stream),
        Err(Error::NotContiguous { .. })
    ));
    // A contiguous slice is fine.
    let mut rows = a
        .slice(&[SliceArg::range(1, 3), SliceArg::All])
        .expect("rows");
    comm.all_reduce_in_place(&mut rows, ReduceOp::Max, &stream)
        .expect("contiguous rows");

    let ints = GpuArray::<i32>::zeros(&stream, &[24]).expect("ints");
    let mut floats = GpuArray::<f32>::zeros(&stream, &[24]).expect("floats");
    assert!(matches!(
        comm.all_reduce(&ints, &mut floats, ReduceOp::Sum, &stream),
        Err(Error::TypeMismatch { .. })
    ));
    let mut halves16 = GpuArray::<i16>::zeros(&stream, &[24]).expect("i16");
    assert!(matches!(
        comm.all_reduce_in_place(&mut halves16, ReduceOp::Sum, &stream),
        Err(Error::UnsupportedType { .. })
    ));
    comm.broadcast_in_place(&mut halves16, 0, &stream)
        .expect("i16 moves as bytes");
    let mut complex = GpuArray::<rucuda_array::Complex<f32>>::zeros(&stream, &[8]).expect("c64");
    assert!(matches!(
        comm.all_reduce_in_place(&mut complex, ReduceOp::Max, &stream),
        Err(Error::UnsupportedType { .. })
    ));
    let mut gathered = GpuArray::<f32>::zeros(&stream, &[23]).expect("gathered");
    assert!(matches!(
        comm.all_gather(&floats, &mut gathered, &stream),
        Err(Error::SizeMismatch {
            expected: 24,
            got: 23,
            ..
        })
    ));
    assert!(matches!(
        comm.broadcast_in_place(&mut floats, 1, &stream),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        comm.send(&floats, 3, &stream),
        Err(Error::InvalidArgument(_))
    ));
    // The wrong device: only checkable with two devices; a created (non-primary) context
    // is refused at creation instead.
    let created = ctx(0)
        .device()
        .make_context(rucuda_driver::ContextFlags::empty())
        .expect("a created context");
    let id = UniqueId::new().expect("an id");
    let e = Communicator::init_rank(&created, 1, &id, 0).expect_err("not primary");
    assert!(e.to_string().contains("primary context"), "{e}");
    drop(created);
    assert!(matches!(
        Communicator::init_rank(&ctx(0), 1, &id, 1),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Communicator::init_all(&[ctx(0), ctx(0)]),
        Err(Error::InvalidArgument(_))
    ));
    // Creation inside a group is refused (it would block until the group ends).
    let e =
        group(|| Communicator::init_rank(&ctx(0), 1, &id, 0).map(drop)).expect_err("in a group");
    assert!(e.to_string().contains("inside group()"), "{e}");
    comm.wait(&stream, WAIT)
        .expect("the communicator still works");
}

#[test]
#[ignore = "needs a CUDA device"]
fn checked_mode_and_waits_on_one_rank() {
    if setup().is_none() {
        return;
    }
    let (comm, stream) = one_rank();
    comm.set_checked(true);
    assert!(comm.is_checked());
    let x = GpuArray::from_slice(&stream, &[1i32, 2, 3]).expect("x");
    let mut y = GpuArray::<i32>::zeros(&stream, &[3]).expect("y");
    comm.all_reduce(&x, &mut y, ReduceOp::Sum, &stream)
        .expect("checked all-reduce");
    comm.reduce(&x, &mut y, ReduceOp::Min, 0, &stream)
        .expect("checked reduce");
    comm.wait(&stream, Duration::from_secs(30)).expect("wait");
    assert_eq!(y.to_vec().expect("back"), vec![1, 2, 3]);
    let buf = DeviceBuffer::from_slice(stream.context(), &[5u64; 9]).expect("buf");
    let mut all = DeviceBuffer::<u64>::zeros(stream.context(), 9).expect("all");
    comm.all_gather(&buf, &mut all, &stream)
        .expect("checked all-gather");
    comm.wait(&stream, Duration::from_secs(30)).expect("wait");
    assert_eq!(all.to_vec().expect("back"), vec![5u64; 9]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn unique_ids_are_fresh() {
    if setup().is_none() {
        return;
    }
    let a = UniqueId::new().expect("id");
    let b = UniqueId::new().expect("id");
    assert_ne!(a, b);
    assert_eq!(a.to_string().parse::<UniqueId>().expect("parses"), a);
}

/// NCCL refuses two ranks of one communicator on the same GPU. Both ranks run in a child
/// process (two threads), killed after 60 s: a hang is a failed test naming it, never a
/// hung bundle.
#[test]
#[ignore = "needs a CUDA device"]
fn a_second_rank_on_the_same_gpu_is_refused() {
    if setup().is_none() {
        return;
    }
    let outcomes = common::run_children("same_gpu_child", 1, Duration::from_secs(60), |_| {
        vec![(CHILD_ENV, "same-gpu".to_string())]
    });
    common::assert_children_passed(&outcomes, "two ranks on one GPU");
    assert!(
        outcomes[0].stdout.contains("both ranks refused"),
        "the child did not check"
    );
}

/// The child of `a_second_rank_on_the_same_gpu_is_refused`.
#[test]
#[ignore = "needs a CUDA device"]
fn same_gpu_child() {
    if std::env::var(CHILD_ENV).as_deref() != Ok("same-gpu") {
        rucuda_testkit::skip("runs only as the child of a_second_rank_on_the_same_gpu_is_refused");
        return;
    }
    if setup().is_none() {
        return;
    }
    let id = UniqueId::new().expect("id");
    let ranks: Vec<_> = (0..2)
        .map(|rank| {
            std::thread::spawn(move || Communicator::init_rank(&ctx(0), 2, &id, rank).map(drop))
        })
        .collect();
    for (rank, handle) in ranks.into_iter().enumerate() {
        let result = handle.join().expect("the rank's thread");
        let e = result.expect_err("NCCL refuses a second rank on the same GPU");
        println!("rank {rank}: {e}");
        match &e {
            Error::Nccl(n) => assert_eq!(n.code, ncclResult_t::ncclInvalidUsage, "{e}"),
            other => panic!("expected an NCCL error, got {other:?}"),
        }
    }
    println!("both ranks refused");
}

/// H1: a one-rank all-reduce on another stream reads an array that is dropped at once and
/// whose memory is reused on its home stream; the free must wait for the collective.
#[test]
#[ignore = "needs a CUDA device"]
fn a_collective_on_another_stream_delays_its_inputs_free() {
    if setup().is_none() {
        return;
    }
    const N: usize = 1 << 22;
    let (comm, other) = one_rank();
    let c = ctx(0);
    let home = Stream::new(&c, StreamFlags::NON_BLOCKING).expect("a stream");
    let input = GpuArray::<f32>::full(&home, &[N], 3.0).expect("input");
    home.synchronize().expect("sync");
    let mut output = DeviceBuffer::<f32>::zeros(&c, N).expect("output");
    let m = rucuda_driver::Module::load_data(
        &c,
        include_str!("../../rucuda-driver/tests/kernels/core.ptx").as_bytes(),
    )
    .expect("core kernels");
    let spin = m.function("spin").expect("spin");
    // SAFETY: spin(unsigned long long cycles) touches no memory.
    unsafe {
        spin.launch(
            rucuda_driver::LaunchConfig::linear(1, 1),
            &other,
            (500_000_000u64,),
        )
        .expect("spin")
    };
    comm.all_reduce(&input, &mut output, ReduceOp::Sum, &other)
        .expect("all_reduce");
    drop(input); // freed on `home`
    let again = GpuArray::<f32>::full(&home, &[N], 7.0).expect("reuse");
    home.synchronize().expect("sync");
    other.synchronize().expect("sync");
    let got = output.to_vec().expect("to_vec");
    assert!(
        got.iter().all(|&v| v == 3.0),
        "the collective read the next owner's data ({} elements)",
        got.iter().filter(|&&v| v != 3.0).count()
    );
    drop(again);
    comm.destroy().expect("destroy");
}
