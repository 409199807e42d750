//! The collective suite: every collective of every element type against a CPU
//! computation on random data, for one rank driven per thread/process or for several
//! ranks driven by one thread in groups.

use rucuda_array::{bf16, f16, Complex, GpuArray};
use rucuda_driver::Stream;
use rucuda_nccl::{group, Communicator, ReduceOp};
use rucuda_testkit::SplitMix64;

use super::elements::TestElem;
use super::WAIT;

/// One operation of the suite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Case {
    AllReduce(ReduceOp),
    AllReduceInPlace(ReduceOp),
    Broadcast(usize),
    BroadcastInPlace(usize),
    Reduce(ReduceOp, usize),
    ReduceInPlace(ReduceOp, usize),
    AllGather,
    AllGatherInPlace,
    ReduceScatter(ReduceOp),
    ReduceScatterInPlace(ReduceOp),
    SendRecvRing,
}

/// Every case for `T` on `n` ranks: each collective with each reduction `T` has, the
/// in-place forms with its first, roots first and last.
pub fn cases<T: TestElem>(n: usize) -> Vec<Case> {
    let last = n - 1;
    let mut v = vec![
        Case::Broadcast(0),
        Case::BroadcastInPlace(last),
        Case::AllGather,
        Case::AllGatherInPlace,
        Case::SendRecvRing,
    ];
    for &op in T::OPS {
        v.push(Case::AllReduce(op));
        v.push(Case::Reduce(op, last));
        v.push(Case::ReduceScatter(op));
    }
    if let Some(&op) = T::OPS.first() {
        v.push(Case::AllReduceInPlace(op));
        v.push(Case::ReduceInPlace(op, 0));
        v.push(Case::ReduceScatterInPlace(op));
    }
    v
}

fn reduction(case: Case) -> Option<ReduceOp> {
    match case {
        Case::AllReduce(op)
        | Case::AllReduceInPlace(op)
        | Case::Reduce(op, _)
        | Case::ReduceInPlace(op, _)
        | Case::ReduceScatter(op)
        | Case::ReduceScatterInPlace(op) => Some(op),
        _ => None,
    }
}

/// The input of `rank` for case number `index` (every process computes every rank's).
fn input<T: TestElem>(seed: u64, index: usize, rank: usize, len: usize, case: Case) -> Vec<T> {
    let mut tag: u64 = 0xcbf2_9ce4_8422_2325;
    for b in T::NAME
        .bytes()
        .chain((index as u64).to_le_bytes())
        .chain((rank as u64).to_le_bytes())
    {
        tag = (tag ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut rng = SplitMix64::new(seed ^ tag);
    (0..len)
        .map(|_| T::random(&mut rng, reduction(case)))
        .collect()
}

fn fold<T: TestElem>(inputs: &[Vec<T>], op: ReduceOp) -> Vec<T> {
    let n = inputs.len();
    let mut acc = inputs[0].clone();
    for other in &inputs[1..] {
        for (a, &b) in acc.iter_mut().zip(other) {
            *a = T::reduce(op, *a, b);
        }
    }
    if op == ReduceOp::Avg {
        for a in &mut acc {
            *a = T::average(*a, n);
        }
    }
    acc
}

/// One rank's buffers for one case, and what they must hold afterwards.
pub struct Prepared<T: TestElem> {
    case: Case,
    input: Option<GpuArray<T>>,
    output: GpuArray<T>,
    /// `(range of the output, expected values)` to compare; the rest is not checked.
    expected: Vec<(std::ops::Range<usize>, Vec<T>)>,
}

/// Makes rank `rank`'s buffers for case number `index` (`count` elements per rank).
pub fn prepare<T: TestElem>(
    case: Case,
    index: usize,
    rank: usize,
    n: usize,
    count: usize,
    seed: u64,
    stream: &Stream,
) -> Prepared<T> {
    let scattered = matches!(case, Case::ReduceScatter(_) | Case::ReduceScatterInPlace(_));
    let len = if scattered { n * count } else { count };
    let all: Vec<Vec<T>> = (0..n).map(|r| input(seed, index, r, len, case)).collect();
    let mine = all[rank].clone();
    // What an output holds before the operation: values no correct result would leave.
    let junk = |len: usize| input::<T>(seed ^ 0x5eed, index, rank + 1000, len, case);
    let array = |v: &[T]| GpuArray::from_slice(stream, v).expect("an input array");
    let (input, output, expected) = match case {
        Case::AllReduce(op) => (
            Some(array(&mine)),
            array(&junk(count)),
            vec![(0..count, fold(&all, op))],
        ),
        Case::AllReduceInPlace(op) => (None, array(&mine), vec![(0..count, fold(&all, op))]),
        Case::Broadcast(root) => (
            Some(array(&mine)),
            array(&junk(count)),
            vec![(0..count, all[root].clone())],
        ),
        Case::BroadcastInPlace(root) => (None, array(&mine), vec![(0..count, all[root].clone())]),
        Case::Reduce(op, root) => {
            let before = junk(count);
            let want = if rank == root {
                fold(&all, op)
            } else {
                before.clone()
            };
            (Some(array(&mine)), array(&before), vec![(0..count, want)])
        }
        Case::ReduceInPlace(op, root) => {
            let want = if rank == root {
                fold(&all, op)
            } else {
                mine.clone()
            };
            (None, array(&mine), vec![(0..count, want)])
        }
        Case::AllGather => {
            let want: Vec<T> = all.concat();
            (
                Some(array(&mine)),
                array(&junk(n * count)),
                vec![(0..n * count, want)],
            )
        }
        Case::AllGatherInPlace => {
            let mut buffer = junk(n * count);
            buffer[rank * count..(rank + 1) * count].copy_from_slice(&mine);
            (None, array(&buffer), vec![(0..n * count, all.concat())])
        }
        Case::ReduceScatter(op) => {
            let full = fold(&all, op);
            let want = full[rank * count..(rank + 1) * count].to_vec();
            (
                Some(array(&mine)),
                array(&junk(count)),
                vec![(0..count, want)],
            )
        }
        Case::ReduceScatterInPlace(op) => {
            let full = fold(&all, op);
            let own = rank * count..(rank + 1) * count;
            let want = full[own.clone()].to_vec();
            (None, array(&mine), vec![(own, want)])
        }
        Case::SendRecvRing => {
            let from = (rank + n - 1) % n;
            (
                Some(array(&mine)),
                array(&junk(count)),
                vec![(0..count, all[from].clone())],
            )
        }
    };
    Prepared {
        case,
        input,
        output,
        expected,
    }
}

/// Queues rank `comm.rank()`'s part of the case on `stream`.
pub fn issue<T: TestElem>(
    comm: &Communicator,
    p: &mut Prepared<T>,
    stream: &Stream,
) -> rucuda_nccl::Result<()> {
    let (n, rank) = (comm.size(), comm.rank());
    let out = &mut p.output;
    match (p.case, p.input.as_ref()) {
        (Case::AllReduce(op), Some(i)) => comm.all_reduce(i, out, op, stream),
        (Case::AllReduceInPlace(op), _) => comm.all_reduce_in_place(out, op, stream),
        (Case::Broadcast(root), Some(i)) => comm.broadcast(i, out, root, stream),
        (Case::BroadcastInPlace(root), _) => comm.broadcast_in_place(out, root, stream),
        (Case::Reduce(op, root), Some(i)) => comm.reduce(i, out, op, root, stream),
        (Case::ReduceInPlace(op, root), _) => comm.reduce_in_place(out, op, root, stream),
        (Case::AllGather, Some(i)) => comm.all_gather(i, out, stream),
        (Case::AllGatherInPlace, _) => comm.all_gather_in_place(out, stream),
        (Case::ReduceScatter(op), Some(i)) => comm.reduce_scatter(i, out, op, stream),
        (Case::ReduceScatterInPlace(op), _) => comm.reduce_scatter_in_place(out, op, stream),
        (Case::SendRecvRing, Some(i)) => group(|| {
            comm.send(i, (rank + 1) % n, stream)?;
            comm.recv(out, (rank + n - 1) % n, stream)
        }),
        (case, None) => panic!("{case:?} needs an input"),
    }
}

/// Compares rank `rank`'s output with the CPU's answer.
pub fn verify<T: TestElem>(p: &Prepared<T>, rank: usize, n: usize) {
    let got = p.output.to_vec().expect("the output comes back");
    for (range, want) in &p.expected {
        for (k, (g, w)) in got[range.clone()].iter().zip(want).enumerate() {
            assert!(
                T::close(*g, *w, n),
                "{} {:?} on rank {rank} of {n}: element {} is {g:?}, the CPU says {w:?}",
                T::NAME,
                p.case,
                range.start + k
            );
        }
    }
}

/// Elements per rank in the suite: odd, so no vector path hides a tail.
pub const COUNT: usize = 1531;

/// The suite for `T` with one rank per thread or process: each case issued, waited for
/// (with a time limit) and checked. Returns the number of cases run.
pub fn suite_one_rank<T: TestElem>(comm: &Communicator, stream: &Stream, seed: u64) -> usize {
    let (rank, n) = (comm.rank(), comm.size());
    let cases = cases::<T>(n);
    for (index, &case) in cases.iter().enumerate() {
        let mut p = prepare::<T>(case, index, rank, n, COUNT, seed, stream);
        stream.synchronize().expect("inputs are on the device");
        issue(comm, &mut p, stream).unwrap_or_else(|e| panic!("{} {case:?}: {e}", T::NAME));
        comm.wait(stream, WAIT)
            .unwrap_or_else(|e| panic!("{} {case:?} on rank {rank}: {e}", T::NAME));
        verify(&p, rank, n);
    }
    cases.len()
}

/// The suite for `T` with every rank driven by this thread: each case issued for all
/// ranks in one group, then waited for and checked.
pub fn suite_grouped<T: TestElem>(comms: &[Communicator], streams: &[Stream], seed: u64) -> usize {
    let n = comms.len();
    let cases = cases::<T>(n);
    for (index, &case) in cases.iter().enumerate() {
        let mut preps: Vec<Prepared<T>> = (0..n)
            .map(|r| prepare::<T>(case, index, r, n, COUNT, seed, &streams[r]))
            .collect();
        for s in streams {
            s.synchronize().expect("inputs are on the device");
        }
        group(|| {
            for ((comm, p), s) in comms.iter().zip(&mut preps).zip(streams) {
                issue(comm, p, s)?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{} {case:?}: {e}", T::NAME));
        for ((comm, p), s) in comms.iter().zip(&preps).zip(streams) {
            comm.wait(s, WAIT)
                .unwrap_or_else(|e| panic!("{} {case:?} on rank {}: {e}", T::NAME, comm.rank()));
            verify(p, comm.rank(), n);
        }
    }
    cases.len()
}

/// The suite for every element type, one rank per thread or process.
pub fn every_type_one_rank(comm: &Communicator, stream: &Stream, seed: u64) -> usize {
    suite_one_rank::<f32>(comm, stream, seed)
        + suite_one_rank::<f64>(comm, stream, seed)
        + suite_one_rank::<f16>(comm, stream, seed)
        + suite_one_rank::<bf16>(comm, stream, seed)
        + suite_one_rank::<i8>(comm, stream, seed)
        + suite_one_rank::<u8>(comm, stream, seed)
        + suite_one_rank::<i32>(comm, stream, seed)
        + suite_one_rank::<u32>(comm, stream, seed)
        + suite_one_rank::<i64>(comm, stream, seed)
        + suite_one_rank::<u64>(comm, stream, seed)
        + suite_one_rank::<Complex<f32>>(comm, stream, seed)
        + suite_one_rank::<Complex<f64>>(comm, stream, seed)
        + suite_one_rank::<bool>(comm, stream, seed)
        + suite_one_rank::<i16>(comm, stream, seed)
        + suite_one_rank::<u16>(comm, stream, seed)
}

/// The suite for every element type, every rank driven by this thread.
pub fn every_type_grouped(comms: &[Communicator], streams: &[Stream], seed: u64) -> usize {
    suite_grouped::<f32>(comms, streams, seed)
        + suite_grouped::<f64>(comms, streams, seed)
        + suite_grouped::<f16>(comms, streams, seed)
        + suite_grouped::<bf16>(comms, streams, seed)
        + suite_grouped::<i8>(comms, streams, seed)
        + suite_grouped::<u8>(comms, streams, seed)
        + suite_grouped::<i32>(comms, streams, seed)
        + suite_grouped::<u32>(comms, streams, seed)
        + suite_grouped::<i64>(comms, streams, seed)
        + suite_grouped::<u64>(comms, streams, seed)
        + suite_grouped::<Complex<f32>>(comms, streams, seed)
        + suite_grouped::<Complex<f64>>(comms, streams, seed)
        + suite_grouped::<bool>(comms, streams, seed)
        + suite_grouped::<i16>(comms, streams, seed)
        + suite_grouped::<u16>(comms, streams, seed)
}

/// Device buffers and views (not arrays) through the collectives, one rank per thread or
/// process: f32 sums of several sizes (0, 1, odd, 4 MiB + 3), `[f32; 4]` maxima, i64
/// all-gathers, and a broadcast into a view.
pub fn device_buffers_one_rank(comm: &Communicator, stream: &Stream, seed: u64) {
    use rucuda_driver::DeviceBuffer;
    let (rank, n) = (comm.rank(), comm.size());
    let ctx = stream.context();
    let values = |r: usize, len: usize, salt: u64| -> Vec<f32> {
        rucuda_testkit::random_f32(len, seed ^ salt ^ ((r as u64 + 1) << 40))
    };
    for (k, &len) in [0usize, 1, 4099, (1 << 20) + 3].iter().enumerate() {
        let all: Vec<Vec<f32>> = (0..n).map(|r| values(r, len, k as u64)).collect();
        let send = DeviceBuffer::from_slice(ctx, &all[rank]).expect("send");
        let mut recv = DeviceBuffer::<f32>::zeros(ctx, len).expect("recv");
        comm.all_reduce(&send, &mut recv, ReduceOp::Sum, stream)
            .expect("all_reduce");
        comm.wait(stream, WAIT).expect("wait");
        let want = fold(&all, ReduceOp::Sum);
        let got = recv.to_vec().expect("back");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                f32::close(*g, *w, n),
                "f32 sum of {len}: element {i}: {g} vs {w}"
            );
        }
    }
    // [f32; 4] maxima lane by lane.
    let quads: Vec<Vec<[f32; 4]>> = (0..n)
        .map(|r| {
            values(r, 4 * 257, 77)
                .chunks_exact(4)
                .map(|c| [c[0], c[1], c[2], c[3]])
                .collect()
        })
        .collect();
    let mut buf = DeviceBuffer::from_slice(ctx, &quads[rank]).expect("quads");
    comm.all_reduce_in_place(&mut buf, ReduceOp::Max, stream)
        .expect("max");
    comm.wait(stream, WAIT).expect("wait");
    let got = buf.to_vec().expect("back");
    for (i, g) in got.iter().enumerate() {
        for lane in 0..4 {
            let w = (0..n).map(|r| quads[r][i][lane]).fold(f32::MIN, f32::max);
            assert_eq!(g[lane], w, "[f32; 4] max: element {i} lane {lane}");
        }
    }
    // i64 all-gather.
    let longs: Vec<Vec<i64>> = (0..n)
        .map(|r| values(r, 33, 99).iter().map(|v| (v * 1e9) as i64).collect())
        .collect();
    let send = DeviceBuffer::from_slice(ctx, &longs[rank]).expect("longs");
    let mut all = DeviceBuffer::<i64>::zeros(ctx, 33 * n).expect("gathered");
    comm.all_gather(&send, &mut all, stream)
        .expect("all_gather");
    comm.wait(stream, WAIT).expect("wait");
    assert_eq!(
        all.to_vec().expect("back"),
        longs.concat(),
        "i64 all-gather"
    );
    // A broadcast into the middle of a buffer, through a view.
    let root_data: Vec<f32> = values(0, 100, 5);
    let mut big = DeviceBuffer::<f32>::zeros(ctx, 300).expect("big");
    if rank == 0 {
        big.copy_from_host(&[vec![0.0; 100], root_data.clone(), vec![0.0; 100]].concat())
            .expect("fill");
    }
    {
        let mut middle = big.slice_mut(100..200).expect("a view");
        comm.broadcast_in_place(&mut middle, 0, stream)
            .expect("broadcast");
        comm.wait(stream, WAIT).expect("wait");
    }
    let got = big.to_vec().expect("back");
    assert_eq!(&got[100..200], &root_data[..], "broadcast through a view");
    assert!(
        got[..100].iter().chain(&got[200..]).all(|&v| v == 0.0),
        "outside the view"
    );
}
