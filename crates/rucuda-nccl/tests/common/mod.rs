//! Shared by the GPU tests: setup (NVLink multicast off, NCCL present or skip), child
//! processes, and the collective suite: every collective of every element type against a
//! CPU computation on random data, for one rank driven per thread/process or for several
//! ranks driven by one thread in groups.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rucuda_array::{bf16, f16, Complex, Element, GpuArray};
use rucuda_driver::{Context, Device, Stream};
use rucuda_nccl::{group, Communicator, Nccl, ReduceOp};
use rucuda_testkit::SplitMix64;

/// How long a rank waits for one collective before aborting it.
pub const WAIT: Duration = Duration::from_secs(120);

/// Prepares a GPU test: NVLink multicast off (the machines we run on must not use it;
/// children inherit it), and NCCL present — otherwise prints the skip marker and returns
/// `None`.
pub fn setup() -> Option<&'static Nccl> {
    std::env::set_var("NCCL_NVLS_ENABLE", "0");
    match Nccl::get() {
        Ok(nccl) => {
            println!("NCCL {} from {}", nccl.version(), nccl.opened_as());
            Some(nccl)
        }
        Err(e) => {
            rucuda_testkit::skip(format!("NCCL is not available: {e}"));
            None
        }
    }
}

/// The number of visible devices (0 without a driver).
pub fn device_count() -> usize {
    Device::count().unwrap_or(0)
}

/// The primary context of device `i`.
pub fn ctx(i: usize) -> Context {
    Device::get(i)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)")
}

/// A seed for this run (printed by the testkit; `RUCUDA_TEST_SEED` replays it), or the
/// one a parent process passed to its children.
pub fn seed() -> u64 {
    std::env::var(SEED_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rucuda_testkit::seed!())
}

// ---------------------------------------------------------------------------------------
// Child processes.

/// Which child entry point runs (`nccl_child` tests read it).
pub const CHILD_ENV: &str = "RUCUDA_NCCL_TEST_CHILD";
/// The child's rank.
pub const RANK_ENV: &str = "RUCUDA_NCCL_TEST_RANK";
/// The number of ranks.
pub const NRANKS_ENV: &str = "RUCUDA_NCCL_TEST_NRANKS";
/// The file through which rank 0 hands out the unique id.
pub const ID_FILE_ENV: &str = "RUCUDA_NCCL_TEST_ID_FILE";
/// The seed of the random inputs, the same in every child.
pub const SEED_ENV: &str = "RUCUDA_NCCL_TEST_SEED";

/// What a finished child left.
pub struct ChildOutcome {
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

/// A scratch folder for one test run, removed when the guard drops.
pub fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("rucuda-nccl-{name}-"))
        .tempdir()
        .expect("a scratch folder")
}

/// Runs `test` of this test binary in `n` child processes (`--exact test
/// --include-ignored`), child `i` with the environment `env(i)`, and waits up to
/// `timeout` for all of them; children still running then are killed (their status is
/// `None`).
pub fn run_children(
    test: &str,
    n: usize,
    timeout: Duration,
    env: impl Fn(usize) -> Vec<(&'static str, String)>,
) -> Vec<ChildOutcome> {
    let scratch = scratch("children");
    let dir = scratch.path();
    let mut children = Vec::new();
    for i in 0..n {
        let (out, err) = (dir.join(format!("{i}.out")), dir.join(format!("{i}.err")));
        let mut cmd = rucuda_testkit::child_test(test);
        cmd.env("NCCL_NVLS_ENABLE", "0")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).expect("a log file"))
            .stderr(std::fs::File::create(&err).expect("a log file"));
        for (k, v) in env(i) {
            cmd.env(k, v);
        }
        children.push((cmd.spawn().expect("the child starts"), out, err));
    }
    let start = Instant::now();
    let mut statuses: Vec<Option<ExitStatus>> = vec![None; n];
    while statuses.iter().any(Option::is_none) && start.elapsed() < timeout {
        for (i, (child, _, _)) in children.iter_mut().enumerate() {
            if statuses[i].is_none() {
                statuses[i] = child.try_wait().expect("waiting for a child");
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut outcomes = Vec::new();
    for (i, (mut child, out, err)) in children.into_iter().enumerate() {
        if statuses[i].is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
        outcomes.push(ChildOutcome {
            status: statuses[i],
            stdout: std::fs::read_to_string(&out).unwrap_or_default(),
            stderr: std::fs::read_to_string(&err).unwrap_or_default(),
        });
    }
    outcomes
}

/// Prints every child's output and asserts each exited 0 after running its test.
pub fn assert_children_passed(outcomes: &[ChildOutcome], what: &str) {
    for (i, o) in outcomes.iter().enumerate() {
        println!(
            "---- child {i} ({what}): {:?}\n{}\n{}",
            o.status, o.stdout, o.stderr
        );
    }
    for (i, o) in outcomes.iter().enumerate() {
        match o.status {
            None => panic!("child {i} ({what}) did not finish in time: NCCL hung"),
            Some(s) => assert!(s.success(), "child {i} ({what}) failed: {s}"),
        }
        assert!(
            o.stdout.contains("1 passed"),
            "child {i} ({what}) did not run its test"
        );
    }
}

/// The communicator of a child: rank 0 makes the id and saves it to the file, the others
/// wait for it; each rank `r` runs on device `r`.
pub fn child_communicator() -> (Communicator, usize, usize) {
    let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} is set by the parent"));
    let rank: usize = var(RANK_ENV).parse().expect("a rank");
    let nranks: usize = var(NRANKS_ENV).parse().expect("a rank count");
    let file = PathBuf::from(var(ID_FILE_ENV));
    let id = if rank == 0 {
        let id = rucuda_nccl::UniqueId::new().expect("a unique id");
        id.save(&file).expect("the id file is written");
        id
    } else {
        rucuda_nccl::UniqueId::load_waiting(&file, Duration::from_secs(60)).expect("the id file")
    };
    let comm = Communicator::init_rank(&ctx(rank), nranks, &id, rank).expect("init_rank");
    (comm, rank, nranks)
}

// ---------------------------------------------------------------------------------------
// Element types with a CPU model of NCCL's arithmetic.

/// An element type of the suite: how to draw inputs and reduce them on the CPU.
pub trait TestElem: Element {
    /// Its name in messages.
    const NAME: &'static str;
    /// The reductions it supports.
    const OPS: &'static [ReduceOp];
    /// A random value fit for `op` (small values where an average must not overflow,
    /// values near 1 where products must stay finite).
    fn random(rng: &mut SplitMix64, op: Option<ReduceOp>) -> Self;
    /// `op` of two values, as NCCL computes it.
    fn reduce(op: ReduceOp, a: Self, b: Self) -> Self;
    /// The average of `n` values whose sum is `sum`.
    fn average(sum: Self, n: usize) -> Self;
    /// Whether `got` is close enough to `want` for a reduction over `n` ranks.
    fn close(got: Self, want: Self, n: usize) -> bool;
}

macro_rules! int_elem {
    ($($t:ty, $avg_lo:expr, $avg_hi:expr);* $(;)?) => {$(
        impl TestElem for $t {
            const NAME: &'static str = stringify!($t);
            const OPS: &'static [ReduceOp] = &ReduceOp::ALL;
            fn random(rng: &mut SplitMix64, op: Option<ReduceOp>) -> Self {
                match op {
                    Some(ReduceOp::Avg) => rng.next_i32_in($avg_lo, $avg_hi) as $t,
                    _ => rng.next_u64() as $t,
                }
            }
            fn reduce(op: ReduceOp, a: Self, b: Self) -> Self {
                match op {
                    ReduceOp::Sum | ReduceOp::Avg => a.wrapping_add(b),
                    ReduceOp::Prod => a.wrapping_mul(b),
                    ReduceOp::Max => a.max(b),
                    ReduceOp::Min => a.min(b),
                }
            }
            fn average(sum: Self, n: usize) -> Self {
                // Truncating division (toward zero), as NCCL divides integer sums.
                sum / (n as $t)
            }
            fn close(got: Self, want: Self, _: usize) -> bool {
                got == want
            }
        }
    )*};
}

int_elem! {
    i8, -8, 8; u8, 0, 16; i32, -1000, 1000; u32, 0, 1000; i64, -1000, 1000; u64, 0, 1000;
}

fn random_float(rng: &mut SplitMix64, op: Option<ReduceOp>) -> f64 {
    let x = rng.next_f64();
    match op {
        // Products of values near 1 stay finite and keep their precision.
        Some(ReduceOp::Prod) => 1.0 + 0.25 * x,
        _ => x,
    }
}

fn reduce_f64(op: ReduceOp, a: f64, b: f64) -> f64 {
    match op {
        ReduceOp::Sum | ReduceOp::Avg => a + b,
        ReduceOp::Prod => a * b,
        ReduceOp::Max => a.max(b),
        ReduceOp::Min => a.min(b),
    }
}

macro_rules! float_elem {
    ($($t:ty, $tol:expr, $to:expr, $from:expr);* $(;)?) => {$(
        impl TestElem for $t {
            const NAME: &'static str = stringify!($t);
            const OPS: &'static [ReduceOp] = &ReduceOp::ALL;
            fn random(rng: &mut SplitMix64, op: Option<ReduceOp>) -> Self {
                $from(random_float(rng, op))
            }
            fn reduce(op: ReduceOp, a: Self, b: Self) -> Self {
                $from(reduce_f64(op, $to(a), $to(b)))
            }
            fn average(sum: Self, n: usize) -> Self {
                $from($to(sum) / n as f64)
            }
            fn close(got: Self, want: Self, n: usize) -> bool {
                let (g, w) = ($to(got), $to(want));
                (g - w).abs() <= $tol * (n as f64) * w.abs().max(1.0)
            }
        }
    )*};
}

float_elem! {
    f32, 1e-5, f64::from, |v: f64| v as f32;
    f64, 1e-12, |v: f64| v, |v: f64| v;
    f16, 4e-3, f16::to_f64, f16::from_f64;
    bf16, 3e-2, bf16::to_f64, bf16::from_f64;
}

macro_rules! complex_elem {
    ($($t:ty, $tol:expr);* $(;)?) => {$(
        impl TestElem for Complex<$t> {
            const NAME: &'static str = concat!("Complex<", stringify!($t), ">");
            const OPS: &'static [ReduceOp] = &[ReduceOp::Sum, ReduceOp::Avg];
            fn random(rng: &mut SplitMix64, _: Option<ReduceOp>) -> Self {
                Complex::new(rng.next_f64() as $t, rng.next_f64() as $t)
            }
            fn reduce(_: ReduceOp, a: Self, b: Self) -> Self {
                a + b
            }
            fn average(sum: Self, n: usize) -> Self {
                sum / (n as $t)
            }
            fn close(got: Self, want: Self, n: usize) -> bool {
                let tol = $tol * n as f64;
                ((got.re - want.re) as f64).abs() <= tol * (want.re.abs() as f64).max(1.0)
                    && ((got.im - want.im) as f64).abs() <= tol * (want.im.abs() as f64).max(1.0)
            }
        }
    )*};
}

complex_elem! { f32, 1e-5; f64, 1e-12 }

impl TestElem for bool {
    const NAME: &'static str = "bool";
    const OPS: &'static [ReduceOp] = &[ReduceOp::Max, ReduceOp::Min];
    fn random(rng: &mut SplitMix64, _: Option<ReduceOp>) -> Self {
        rng.next_u64() & 1 == 1
    }
    fn reduce(op: ReduceOp, a: Self, b: Self) -> Self {
        match op {
            ReduceOp::Max => a || b,
            _ => a && b,
        }
    }
    fn average(sum: Self, _: usize) -> Self {
        sum
    }
    fn close(got: Self, want: Self, _: usize) -> bool {
        got == want
    }
}

macro_rules! move_only_elem {
    ($($t:ty),*) => {$(
        impl TestElem for $t {
            const NAME: &'static str = stringify!($t);
            const OPS: &'static [ReduceOp] = &[];
            fn random(rng: &mut SplitMix64, _: Option<ReduceOp>) -> Self {
                rng.next_u64() as $t
            }
            fn reduce(_: ReduceOp, a: Self, _: Self) -> Self {
                a
            }
            fn average(sum: Self, _: usize) -> Self {
                sum
            }
            fn close(got: Self, want: Self, _: usize) -> bool {
                got == want
            }
        }
    )*};
}

move_only_elem!(i16, u16);

// ---------------------------------------------------------------------------------------
// The suite.

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
