//! GPU tests that need two or more GPUs: every collective × reduction × element type
//! against the CPU on random data, in both process layouts (one process for all GPUs,
//! grouped in one thread or a thread per GPU; one process per GPU, through child
//! processes that exchange the unique id by a file), plus splits, disagreements caught in
//! groups and across processes, and a peer that never joins (a time-limited wait aborts).
//!
//! The bundle runs each test once per GPU with only that GPU visible, so there these tests
//! print the skip marker; run them with every GPU visible:
//! `CUDA_VISIBLE_DEVICES=0,1 bash run.sh filter multi_gpu`.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::{ctx, setup, CHILD_ENV, ID_FILE_ENV, NRANKS_ENV, RANK_ENV, SEED_ENV, WAIT};
use rucuda_array::GpuArray;
use rucuda_driver::{Context, Stream, StreamFlags};
use rucuda_nccl::{group, Communicator, Error, ReduceOp, UniqueId};

/// NCCL and at least two GPUs, or the skip marker.
fn gpus() -> Option<usize> {
    setup()?;
    let n = common::device_count();
    if n < 2 {
        rucuda_testkit::skip(format!(
            "needs 2 or more GPUs, {n} visible (the bundle shows one GPU per pass: run \
             `CUDA_VISIBLE_DEVICES=0,1 bash run.sh filter multi_gpu`)"
        ));
        return None;
    }
    Some(n)
}

fn contexts(n: usize) -> Vec<Context> {
    (0..n).map(ctx).collect()
}

fn streams(ctxs: &[Context]) -> Vec<Stream> {
    ctxs.iter()
        .map(|c| Stream::new(c, StreamFlags::NON_BLOCKING).expect("a stream"))
        .collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn one_process_all_gpus_grouped_every_collective() {
    let Some(n) = gpus() else { return };
    let ctxs = contexts(n);
    let comms = Communicator::init_all(&ctxs).expect("init_all");
    for (r, c) in comms.iter().enumerate() {
        assert_eq!((c.rank(), c.size(), c.device().ordinal()), (r, n, r));
        assert_eq!(c.query().expect("query"), (r, n, r));
    }
    let cases = common::every_type_grouped(&comms, &streams(&ctxs), common::seed());
    println!("{cases} cases × {n} ranks, one thread, grouped");
}

#[test]
#[ignore = "needs a CUDA device"]
fn one_process_thread_per_gpu_every_collective() {
    let Some(n) = gpus() else { return };
    let ctxs = contexts(n);
    let comms = Communicator::init_all(&ctxs).expect("init_all");
    let seed = common::seed();
    let threads: Vec<_> = comms
        .into_iter()
        .map(|comm| {
            std::thread::spawn(move || {
                let stream =
                    Stream::new(comm.context(), StreamFlags::NON_BLOCKING).expect("a stream");
                let cases = common::every_type_one_rank(&comm, &stream, seed);
                common::device_buffers_one_rank(&comm, &stream, seed);
                comm.destroy().expect("destroy");
                cases
            })
        })
        .collect();
    for t in threads {
        let cases = t.join().expect("a rank's thread passed");
        println!("{cases} cases on one rank's thread");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn one_process_per_gpu_every_collective() {
    let Some(n) = gpus() else { return };
    let scratch = common::scratch("per-process");
    let dir = scratch.path();
    let id_file = dir.join("id");
    let seed = common::seed();
    let outcomes = common::run_children("nccl_child", n, Duration::from_secs(280), |rank| {
        child_env("collectives", rank, n, &id_file, seed)
    });
    common::assert_children_passed(&outcomes, "every collective, one process per GPU");
}

#[test]
#[ignore = "needs a CUDA device"]
fn init_ranks_drives_several_ranks_from_one_thread() {
    let Some(n) = gpus() else { return };
    let ctxs = contexts(n);
    let id = UniqueId::new().expect("id");
    let ranks: Vec<usize> = (0..n).collect();
    let comms = Communicator::init_ranks(&ctxs, n, &id, &ranks).expect("init_ranks");
    let cases = common::suite_grouped::<f32>(&comms, &streams(&ctxs), common::seed())
        + common::suite_grouped::<Complex32>(&comms, &streams(&ctxs), common::seed());
    println!("{cases} grouped cases through init_ranks");
}

type Complex32 = rucuda_array::Complex<f32>;

#[test]
#[ignore = "needs a CUDA device"]
fn splits_by_parity_and_whole() {
    let Some(n) = gpus() else { return };
    let ctxs = contexts(n);
    let comms = Communicator::init_all(&ctxs).expect("init_all");
    // Colors by parity, keys reversing the order inside each part.
    let parts: Vec<_> = comms
        .iter()
        .map(|c| (c, Some((c.rank() % 2) as u32), -(c.rank() as i32)))
        .collect();
    let split = Communicator::split_all(&parts).expect("split_all");
    for (r, s) in split.iter().enumerate() {
        let s = s.as_ref().expect("every rank has a color");
        let same: Vec<usize> = (0..n).filter(|q| q % 2 == r % 2).collect();
        assert_eq!(s.size(), same.len(), "rank {r}");
        let position = same.iter().position(|&q| q == r).expect("in its part");
        assert_eq!(
            s.rank(),
            same.len() - 1 - position,
            "rank {r}: keys reverse the order"
        );
        assert_eq!(s.device().ordinal(), r);
    }
    // Run the suite on each part, its ranks in rank order.
    let split: Vec<Communicator> = split.into_iter().flatten().collect();
    for parity in 0..2 {
        let mut part: Vec<&Communicator> = split
            .iter()
            .enumerate()
            .filter(|(r, _)| r % 2 == parity)
            .map(|(_, c)| c)
            .collect();
        part.sort_by_key(|c| c.rank());
        let part_streams: Vec<Stream> = part
            .iter()
            .map(|c| Stream::new(c.context(), StreamFlags::NON_BLOCKING).expect("stream"))
            .collect();
        // Every rank of the part adds rank + 1 (its rank in the part).
        let arrays: Vec<GpuArray<f32>> = part
            .iter()
            .zip(&part_streams)
            .map(|(c, s)| GpuArray::full(s, &[1000], (c.rank() + 1) as f32).expect("array"))
            .collect();
        let mut arrays = arrays;
        group(|| {
            for ((c, a), s) in part.iter().zip(&mut arrays).zip(&part_streams) {
                c.all_reduce_in_place(a, ReduceOp::Sum, s)?;
            }
            Ok(())
        })
        .expect("a grouped all-reduce on the part");
        let want = (part.len() * (part.len() + 1) / 2) as f32;
        for ((c, a), s) in part.iter().zip(&arrays).zip(&part_streams) {
            c.wait(s, WAIT).expect("wait");
            assert!(
                a.to_vec().expect("back").iter().all(|&v| v == want),
                "parity {parity}"
            );
        }
    }
    // One color for all: the same ranks as the parent.
    let whole: Vec<_> = comms.iter().map(|c| (c, Some(0), 0)).collect();
    let whole: Vec<Communicator> = Communicator::split_all(&whole)
        .expect("split_all")
        .into_iter()
        .map(|c| c.expect("a color"))
        .collect();
    for (r, c) in whole.iter().enumerate() {
        assert_eq!((c.rank(), c.size()), (r, n));
    }
    common::suite_grouped::<i32>(&whole, &streams(&ctxs), common::seed());
}

#[test]
#[ignore = "needs a CUDA device"]
fn ranks_that_disagree_in_a_group_get_an_error_and_nothing_runs() {
    let Some(n) = gpus() else { return };
    let ctxs = contexts(n);
    let comms = Communicator::init_all(&ctxs).expect("init_all");
    let streams = streams(&ctxs);
    let mut bufs: Vec<GpuArray<f32>> = streams
        .iter()
        .map(|s| GpuArray::full(s, &[200], -1.0).expect("array"))
        .collect();
    let inputs: Vec<GpuArray<f32>> = streams
        .iter()
        .map(|s| GpuArray::full(s, &[200], 2.0).expect("array"))
        .collect();
    for s in &streams {
        s.synchronize().expect("sync");
    }
    // Different counts: rank 0 reduces 100 elements, the others 200.
    let lens: Vec<isize> = (0..n).map(|r| if r == 0 { 100 } else { 200 }).collect();
    let cut = |a: &GpuArray<f32>, len: isize| {
        a.slice(&[rucuda_array::SliceArg::range(0, len)])
            .expect("a prefix")
    };
    let mut parts: Vec<GpuArray<f32>> = bufs.iter().zip(&lens).map(|(b, &l)| cut(b, l)).collect();
    let part_inputs: Vec<GpuArray<f32>> =
        inputs.iter().zip(&lens).map(|(b, &l)| cut(b, l)).collect();
    let e = group(|| {
        for (((c, p), i), s) in comms.iter().zip(&mut parts).zip(&part_inputs).zip(&streams) {
            c.all_reduce(i, p, ReduceOp::Sum, s)?;
        }
        Ok(())
    })
    .expect_err("the counts differ");
    assert!(
        matches!(&e, Error::RankMismatch(m) if m.contains("100") && m.contains("200")),
        "{e}"
    );
    // Different reductions, then different roots.
    let e = group(|| {
        for (r, ((c, b), s)) in comms.iter().zip(&mut bufs).zip(&streams).enumerate() {
            let op = if r == 0 { ReduceOp::Max } else { ReduceOp::Sum };
            c.all_reduce(&inputs[r], b, op, s)?;
        }
        Ok(())
    })
    .expect_err("the reductions differ");
    assert!(matches!(e, Error::RankMismatch(_)), "{e}");
    let e = group(|| {
        for (r, ((c, b), s)) in comms.iter().zip(&mut bufs).zip(&streams).enumerate() {
            c.broadcast(&inputs[r], b, r, s)?;
        }
        Ok(())
    })
    .expect_err("the roots differ");
    assert!(matches!(e, Error::RankMismatch(_)), "{e}");
    // A send without its receive.
    let e = group(|| {
        comms[0].send(&inputs[0], 1, &streams[0])?;
        comms[1].send(&inputs[1], 0, &streams[1])
    })
    .expect_err("sends without receives");
    assert!(matches!(e, Error::RankMismatch(_)), "{e}");
    // Nothing of those groups ran, and a correct group does.
    for ((c, b), s) in comms.iter().zip(&bufs).zip(&streams) {
        c.wait(s, WAIT).expect("nothing pending");
        assert!(
            b.to_vec().expect("back").iter().all(|&v| v == -1.0),
            "rank {}",
            c.rank()
        );
    }
    group(|| {
        for (r, ((c, b), s)) in comms.iter().zip(&mut bufs).zip(&streams).enumerate() {
            c.all_reduce(&inputs[r], b, ReduceOp::Sum, s)?;
        }
        Ok(())
    })
    .expect("an agreeing group");
    for ((c, b), s) in comms.iter().zip(&bufs).zip(&streams) {
        c.wait(s, WAIT).expect("wait");
        assert!(b
            .to_vec()
            .expect("back")
            .iter()
            .all(|&v| v == 2.0 * n as f32));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn processes_that_disagree_get_an_error_in_checked_mode() {
    let Some(n) = gpus() else { return };
    let scratch = common::scratch("checked");
    let dir = scratch.path();
    let id_file = dir.join("id");
    let outcomes = common::run_children("nccl_child", n, Duration::from_secs(120), |rank| {
        child_env("checked-mismatch", rank, n, &id_file, 1)
    });
    common::assert_children_passed(&outcomes, "checked mode across processes");
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_peer_that_never_joins_times_out_and_aborts() {
    let Some(n) = gpus() else { return };
    let scratch = common::scratch("timeout");
    let dir = scratch.path();
    let id_file = dir.join("id");
    let outcomes = common::run_children("nccl_child", n, Duration::from_secs(150), |rank| {
        child_env("timeout", rank, n, &id_file, 1)
    });
    common::assert_children_passed(&outcomes, "a peer that never joins");
    assert!(
        outcomes[0].stdout.contains("rank 0 gave up"),
        "rank 0 did not check"
    );
}

fn child_env(
    mode: &str,
    rank: usize,
    n: usize,
    id_file: &std::path::Path,
    seed: u64,
) -> Vec<(&'static str, String)> {
    vec![
        (CHILD_ENV, mode.to_string()),
        (RANK_ENV, rank.to_string()),
        (NRANKS_ENV, n.to_string()),
        (ID_FILE_ENV, id_file.display().to_string()),
        (SEED_ENV, seed.to_string()),
    ]
}

/// The child entry point of the one-process-per-GPU tests (rank from the environment,
/// device = rank, id through a file).
#[test]
#[ignore = "needs a CUDA device"]
fn nccl_child() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        rucuda_testkit::skip("runs only as a child of the one-process-per-GPU tests");
        return;
    };
    if setup().is_none() {
        panic!("the parent found NCCL, the child did not");
    }
    let (comm, rank, n) = common::child_communicator();
    let stream = Stream::new(comm.context(), StreamFlags::NON_BLOCKING).expect("a stream");
    match mode.as_str() {
        "collectives" => {
            let seed = common::seed();
            let cases = common::every_type_one_rank(&comm, &stream, seed);
            common::device_buffers_one_rank(&comm, &stream, seed);
            println!("rank {rank} of {n}: {cases} cases passed");
            comm.destroy().expect("destroy");
        }
        "checked-mismatch" => {
            comm.set_checked(true);
            let len = 100 * (rank + 1);
            let x = GpuArray::<f32>::full(&stream, &[len], 1.0).expect("x");
            let mut y = GpuArray::<f32>::full(&stream, &[len], -1.0).expect("y");
            let e = comm
                .all_reduce(&x, &mut y, ReduceOp::Sum, &stream)
                .expect_err("the ranks disagree");
            assert!(matches!(&e, Error::RankMismatch(_)), "{e}");
            println!("rank {rank}: {e}");
            assert!(
                y.to_vec().expect("back").iter().all(|&v| v == -1.0),
                "nothing ran"
            );
            // Agreeing ranks pass the check and compute.
            let mut z = GpuArray::<f32>::full(&stream, &[64], 1.0).expect("z");
            comm.all_reduce_in_place(&mut z, ReduceOp::Sum, &stream)
                .expect("agreeing");
            comm.wait(&stream, WAIT).expect("wait");
            assert!(z.to_vec().expect("back").iter().all(|&v| v == n as f32));
        }
        "timeout" => {
            let done = PathBuf::from(format!(
                "{}.done",
                std::env::var(ID_FILE_ENV).unwrap_or_default()
            ));
            let mut x = GpuArray::<f32>::full(&stream, &[1 << 16], 1.0).expect("x");
            // Both ranks first run one all-reduce of this size: NCCL connects the ranks
            // on first use, on the host, and a connection to a rank that never comes
            // would block there rather than on the stream.
            comm.all_reduce_in_place(&mut x, ReduceOp::Sum, &stream)
                .expect("the warm-up all-reduce");
            comm.wait(&stream, WAIT)
                .expect("the warm-up all-reduce finishes");
            if rank == 0 {
                comm.all_reduce_in_place(&mut x, ReduceOp::Sum, &stream)
                    .expect("queued");
                let e = comm
                    .wait(&stream, Duration::from_secs(5))
                    .expect_err("nobody joins");
                assert!(
                    matches!(e, Error::Timeout { .. } | Error::Nccl(_)),
                    "a timeout or NCCL's own error: {e}"
                );
                assert!(comm.is_aborted(), "the wait aborted the communicator");
                let again = comm.all_reduce_in_place(&mut x, ReduceOp::Sum, &stream);
                assert!(matches!(again, Err(Error::Aborted { .. })), "{again:?}");
                println!("rank 0 gave up: {e}");
                std::fs::write(&done, b"done").expect("the done file");
            } else {
                // Never joins the second all-reduce; waits until rank 0 gave up, then
                // aborts too.
                let start = std::time::Instant::now();
                while !done.exists() && start.elapsed() < Duration::from_secs(100) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                comm.abort().expect("abort");
                println!("rank {rank} aborted after rank 0 gave up");
            }
        }
        other => panic!("unknown child mode {other}"),
    }
}
