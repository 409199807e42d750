//! GPU tests of `rucuda_array::graph`: captured sequences of array work give the same bits
//! as eager execution (allocations inside the capture included), replays read new inputs
//! and are ordered after other streams' writes, refused operations are named, and the
//! automatic mode replays or falls back.

mod common;
#[path = "../../rucuda-driver/tests/kernels/spin.rs"]
mod spin;

use common::{RandomVec, Rng};
use rucuda_array::elementwise::ElementwiseKernel;
use rucuda_array::graph::{self, Replay, ReplayState};
use rucuda_array::{ArrayError, GpuArray, Result};
use rucuda_driver::{DeviceBuffer, Error, Stream, StreamFlags};

const N: usize = 4096;

/// A mixed sequence: operators with scalars and arrays, a math function, a fused
/// expression, a comparison-style maximum, a reduction, an integer scan, a user kernel.
struct Outputs {
    floats: Vec<GpuArray<f32>>,
    ints: GpuArray<i32>,
}

fn axpy() -> ElementwiseKernel {
    // SAFETY: the kernel touches x[i] and y[i] for i < n only.
    unsafe {
        ElementwiseKernel::new(
            "float a, const float *x, float *y",
            "y[i] = a * x[i] + y[i]",
            "graph_axpy",
        )
    }
    .expect("the axpy kernel")
}

fn sequence(
    axpy: &ElementwiseKernel,
    x: &GpuArray<f32>,
    y: &GpuArray<f32>,
    k: &GpuArray<i32>,
) -> Result<Outputs> {
    let s = x.stream().clone();
    let a = ((x * 1.5f32)? + y)?;
    let b = rucuda_array::math::sin(&a)?;
    let c: GpuArray<f32> = rucuda_array::fuse!(a, b => a * b + 2.0).eval()?;
    let d: GpuArray<f32> = c.maximum(0.25f32)?;
    let total = d.sum()?;
    let mut e = d.copy()?;
    axpy.call(&s, &[0.5f32.into(), (&a).into(), (&mut e).into()])?;
    let ints = (k * 3i32)?.cumsum()?;
    Ok(Outputs {
        floats: vec![a, b, c, d, total, e],
        ints,
    })
}

fn bits(o: &Outputs) -> (Vec<Vec<u32>>, Vec<i32>) {
    (
        o.floats
            .iter()
            .map(|a| a.to_vec().unwrap().iter().map(|v| v.to_bits()).collect())
            .collect(),
        o.ints.to_vec().unwrap(),
    )
}

fn inputs(s: &Stream, rng: &mut Rng) -> (GpuArray<f32>, GpuArray<f32>, GpuArray<i32>) {
    let x = GpuArray::from_slice(s, &rng.vec::<f32>(N)).unwrap();
    let y = GpuArray::from_slice(s, &rng.vec::<f32>(N)).unwrap();
    let k: Vec<i32> = rng.vec::<i32>(N).iter().map(|v| v % 1000).collect();
    let k = GpuArray::from_slice(s, &k).unwrap();
    (x, y, k)
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_captured_sequence_gives_the_eager_bits_and_reads_new_inputs() {
    let s = common::stream();
    let mut rng = Rng::fresh();
    let (x, y, k) = inputs(&s, &mut rng);
    let axpy = axpy();
    let eager = bits(&sequence(&axpy, &x, &y, &k).unwrap());
    let (g, out) = graph::capture_with(&s, |_s| sequence(&axpy, &x, &y, &k)).unwrap();
    assert!(
        g.node_count().unwrap() >= 8,
        "{} nodes",
        g.node_count().unwrap()
    );
    let (blocks, bytes) = g.pool_footprint();
    assert!(
        blocks >= 5 && bytes >= 5 * N * 4,
        "pool: {blocks} blocks, {bytes} bytes"
    );
    for round in 0..3 {
        if round > 0 {
            // New inputs written into the arrays the graph reads.
            let (x2, y2, k2) = inputs(&s, &mut rng);
            x.copy_from(&x2).unwrap();
            y.set(&y2.to_vec().unwrap()).unwrap();
            k.copy_from(&k2).unwrap();
        }
        let want = bits(&sequence(&axpy, &x, &y, &k).unwrap());
        if round == 0 {
            assert_eq!(want, eager);
        }
        g.replay(&s).unwrap();
        assert_eq!(bits(&out), want, "round {round}");
    }
    drop(g);
    // The outputs outlive the graph (the pool lives until they go).
    assert_eq!(out.floats.len(), 6);
    drop(out);
    s.synchronize().unwrap();
    common::ctx().check_deferred_errors().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn temporaries_dropped_inside_the_capture_are_reused_and_replays_accumulate() {
    let s = common::stream();
    let mut rng = Rng::fresh();
    let v: Vec<f32> = rng.vec::<f32>(N);
    let mut x = GpuArray::from_slice(&s, &v).unwrap();
    let mut x_eager = GpuArray::from_slice(&s, &v).unwrap();
    let w = GpuArray::from_slice(&s, &rng.vec::<f32>(N)).unwrap();
    let step = |x: &mut GpuArray<f32>| -> Result<()> {
        for _ in 0..10 {
            let t = ((&*x * 0.5f32)? + &w)?; // a temporary per step
            x.copy_from(&t)?;
        }
        Ok(())
    };
    step(&mut x_eager).unwrap(); // compiles; x_eager is one step ahead
    x_eager
        .copy_from(&GpuArray::from_slice(&s, &v).unwrap())
        .unwrap();
    let g = graph::capture(&s, |_s| step(&mut x)).unwrap();
    let (blocks, _) = g.pool_footprint();
    assert!(blocks <= 3, "temporaries were not reused: {blocks} blocks");
    for _ in 0..5 {
        g.replay(&s).unwrap();
        step(&mut x_eager).unwrap();
    }
    let got: Vec<u32> = x.to_vec().unwrap().iter().map(|v| v.to_bits()).collect();
    let want: Vec<u32> = x_eager
        .to_vec()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(got, want);
}

/// Review finding: a graph's kernel nodes point into their modules' code, so the graph
/// keeps the functions it launched; clearing the kernel memo (which held the last
/// handles) must not unload them under later replays.
#[test]
#[ignore = "needs a CUDA device"]
fn replays_outlive_the_kernel_memo() {
    let s = common::stream();
    let mut rng = Rng::fresh();
    let v: Vec<f32> = rng.vec::<f32>(N);
    let x = GpuArray::from_slice(&s, &v).unwrap();
    let g = graph::capture(&s, |_s| {
        let t = (&x * 3.0f32)?;
        x.copy_from(&t)
    })
    .unwrap();
    rucuda_array::ops::clear_kernel_memo(None);
    for _ in 0..3 {
        g.replay(&s).unwrap();
    }
    let want: Vec<u32> = v.iter().map(|&a| (a * 3.0 * 3.0 * 3.0).to_bits()).collect();
    let got: Vec<u32> = x.to_vec().unwrap().iter().map(|v| v.to_bits()).collect();
    assert_eq!(got, want);
    common::ctx().check_deferred_errors().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_replay_on_another_stream_waits_for_a_pending_write_of_its_input() {
    let c = common::ctx();
    let m = spin::core_kernels(&c);
    let home = common::stream();
    let replay_on = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let x = GpuArray::<f32>::full(&home, &[N], 1.0).unwrap();
    let _ = (&x + 1.0f32).unwrap();
    let (g, out) = graph::capture_with(&home, |_s| &x + 1.0f32).unwrap();
    home.synchronize().unwrap();
    spin::spin(&m, &home);
    x.fill(41.0).unwrap(); // queued behind the spin on `home`
    g.replay(&replay_on).unwrap(); // must wait for the fill
    assert!(out.to_vec().unwrap().iter().all(|&v| v == 42.0));
    // A write after the replay, on the home stream, waits for the replay's read.
    spin::spin(&m, &replay_on);
    g.replay(&replay_on).unwrap();
    x.fill(0.0).unwrap();
    assert!(out.to_vec().unwrap().iter().all(|&v| v == 42.0));
}

#[test]
#[ignore = "needs a CUDA device"]
fn dropping_the_inputs_keeps_them_alive_for_the_graph() {
    let s = common::stream();
    let x = GpuArray::<f32>::full(&s, &[N], 2.0).unwrap();
    let _ = (&x * 3.0f32).unwrap();
    let (g, out) = graph::capture_with(&s, |_s| &x * 3.0f32).unwrap();
    drop(x);
    // Memory churn that would reuse a freed allocation.
    let churn: Vec<_> = (0..8)
        .map(|_| GpuArray::<f32>::full(&s, &[N], -1.0).unwrap())
        .collect();
    g.replay(&s).unwrap();
    assert!(out.to_vec().unwrap().iter().all(|&v| v == 6.0));
    drop(churn);
}

fn uncapturable(e: ArrayError) -> (String, String) {
    match e {
        ArrayError::Driver(Error::Uncapturable { operation, problem }) => (operation, problem),
        other => panic!("expected Error::Uncapturable, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_stream_synchronization_inside_a_capture_is_named() {
    let s = common::stream();
    let x = GpuArray::<f32>::full(&s, &[N], 2.0).unwrap();
    let _ = (&x * 3.0f32).unwrap();
    let e = graph::capture(&s, |s| {
        let _y = (&x * 3.0f32)?;
        s.synchronize()?;
        Ok(())
    })
    .unwrap_err();
    let (operation, problem) = uncapturable(e);
    assert_eq!(operation, "cuStreamSynchronize", "{problem}");
    // The stream works eagerly afterwards.
    assert!((&x * 3.0f32)
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .all(|&v| v == 6.0));
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_host_read_inside_a_capture_is_refused() {
    let s = common::stream();
    let x = GpuArray::<f32>::full(&s, &[N], 2.0).unwrap();
    let _ = x.sum().unwrap().to_scalar().unwrap();
    let e = graph::capture(&s, |_s| {
        let total = x.sum()?.to_scalar()?;
        assert!(total.is_finite());
        Ok(())
    })
    .unwrap_err();
    let (operation, problem) = uncapturable(e);
    eprintln!("refused: {operation}: {problem}");
    assert!(!operation.is_empty());
    assert_eq!(x.sum().unwrap().to_scalar().unwrap(), 2.0 * N as f32);
}

#[test]
#[ignore = "needs a CUDA device"]
fn work_on_another_stream_and_bare_buffers_are_refused() {
    let c = common::ctx();
    let s = common::stream();
    let other = common::stream();
    let x = GpuArray::<f32>::full(&s, &[N], 2.0).unwrap();
    let mut z = GpuArray::<f32>::full(&other, &[N], 2.0).unwrap();
    z.try_mul_assign(2.0f32).unwrap();
    let e = graph::capture(&s, |_s| {
        let _ = (&x * 2.0f32)?;
        z.try_mul_assign(2.0f32) // runs on `other`, outside the capture
    })
    .unwrap_err();
    assert_eq!(uncapturable(e).0, "eager work on another stream");

    // A bare DeviceBuffer has no shared owner the graph could keep.
    let mut bare = DeviceBuffer::<f32>::zeros(&c, N).unwrap();
    let e = graph::capture(&s, |s| {
        rucuda_driver::memcpy_dtod_async(&mut bare, x.buffer(), s)?;
        Ok(())
    })
    .unwrap_err();
    assert_eq!(
        uncapturable(e).0,
        "work on memory the graph cannot keep alive"
    );
    drop(bare);
    c.check_deferred_errors().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_replay_scope_captures_after_repeats_and_matches_eager() {
    let s = common::stream();
    let mut rng = Rng::fresh();
    let v = rng.vec::<f32>(N);
    let dv = rng.vec::<f32>(N);
    let mut x = GpuArray::from_slice(&s, &v).unwrap();
    let mut x_eager = GpuArray::from_slice(&s, &v).unwrap();
    let d = GpuArray::from_slice(&s, &dv).unwrap();
    let body = |x: &mut GpuArray<f32>| -> Result<()> {
        let t = rucuda_array::math::cos(&*x)?;
        let u = ((&t * 0.01f32)? + &d)?;
        x.try_add_assign(&u)
    };
    let mut replay = Replay::new(&s);
    for i in 0..20 {
        replay.run(|_s| body(&mut x)).unwrap();
        body(&mut x_eager).unwrap();
        if i >= 3 {
            assert_eq!(replay.state(), ReplayState::Replaying, "iteration {i}");
        }
    }
    let got: Vec<u32> = x.to_vec().unwrap().iter().map(|v| v.to_bits()).collect();
    let want: Vec<u32> = x_eager
        .to_vec()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(got, want);
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_replay_scope_falls_back_to_eager_on_a_host_read() {
    let s = common::stream();
    let mut x = GpuArray::<f32>::full(&s, &[N], 1.0).unwrap();
    let mut totals = Vec::new();
    let mut replay = Replay::new(&s);
    for _ in 0..6 {
        replay
            .run(|_s| {
                x.try_mul_assign(2.0f32)?;
                totals.push(x.sum()?.to_scalar()?);
                Ok(())
            })
            .unwrap();
    }
    match replay.state() {
        ReplayState::Eager { reason } => assert!(!reason.is_empty()),
        other => panic!("expected eager, got {other:?}"),
    }
    // Every iteration ran exactly once (the refused capture did not run its work).
    assert_eq!(x.to_vec().unwrap()[0], 64.0);
    let want: Vec<f32> = (1..=6).map(|i| N as f32 * 2f32.powi(i)).collect();
    let last6 = &totals[totals.len() - 6..];
    assert_eq!(last6, &want[..]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_replay_scope_stays_eager_when_iterations_differ() {
    let s = common::stream();
    let mut x = GpuArray::<f32>::full(&s, &[N], 1.0).unwrap();
    let mut replay = Replay::new(&s);
    for _ in 0..14 {
        // Each iteration works on a new array it keeps: never the same work.
        replay
            .run(|_s| {
                x = (&x + 1.0f32)?;
                Ok(())
            })
            .unwrap();
    }
    assert!(matches!(replay.state(), ReplayState::Eager { .. }));
    assert_eq!(x.to_vec().unwrap()[0], 15.0);
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_recapture_points_the_graph_at_other_arrays() {
    let s = common::stream();
    let mut rng = Rng::fresh();
    let (v1, v2) = (rng.vec::<f32>(N), rng.vec::<f32>(N));
    let x1 = GpuArray::from_slice(&s, &v1).unwrap();
    let x2 = GpuArray::from_slice(&s, &v2).unwrap();
    let work = |x: &GpuArray<f32>, a: f32| -> Result<GpuArray<f32>> {
        let t = rucuda_array::math::exp(&(x * 0.01f32)?)?;
        &t * a
    };
    let want1 = work(&x1, 2.0).unwrap().to_vec().unwrap();
    let want2 = work(&x2, 3.0).unwrap().to_vec().unwrap();
    let (mut g, out1) = graph::capture_with(&s, |_s| work(&x1, 2.0)).unwrap();
    g.replay(&s).unwrap();
    let (out2, in_place) = graph::recapture_with(&mut g, &s, |_s| work(&x2, 3.0)).unwrap();
    eprintln!("updated in place: {in_place}");
    drop(x2); // the graph keeps it
    g.replay(&s).unwrap();
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&out2.to_vec().unwrap()), bits(&want2));
    // The first capture's output still holds its replay's result.
    assert_eq!(bits(&out1.to_vec().unwrap()), bits(&want1));
}

/// 40 dependent operations over 4 M elements (many waves of blocks), out of place and in
/// place, each reading the previous result (and the input).
fn dependent_chain(x: &GpuArray<f32>) -> Result<GpuArray<f32>> {
    let mut y = (x * 1.0001f32)?;
    for i in 0..40 {
        match i % 3 {
            0 => y = (&y + 0.5f32)?,
            1 => y.try_mul_assign(0.999f32)?,
            _ => y = (&y * x)?.maximum(-1.0e6f32)?,
        }
    }
    Ok(y)
}

#[test]
#[ignore = "needs a CUDA device"]
fn dependent_operations_overlap_in_graphs_and_keep_their_order() {
    let s = common::stream();
    let mut rng = Rng::fresh();
    const BIG: usize = 1 << 22;
    let x = GpuArray::from_slice(&s, &rng.vec::<f32>(BIG)).unwrap();
    let bits = |a: &GpuArray<f32>| -> Vec<u32> {
        a.to_vec().unwrap().iter().map(|v| v.to_bits()).collect()
    };
    let eager = bits(&dependent_chain(&x).unwrap());
    let (g, out) = graph::capture_with(&s, |_s| dependent_chain(&x)).unwrap();
    let (major, _) = common::ctx().device().compute_capability().unwrap();
    let policy = rucuda_driver::ProgrammaticPolicy::current();
    let edges = g.graph().programmatic_edge_count().unwrap();
    if major >= 9 && policy != rucuda_driver::ProgrammaticPolicy::Off {
        assert!(edges >= 30, "only {edges} programmatic edges");
    } else {
        assert_eq!(edges, 0, "policy {policy:?}, compute capability {major}");
    }
    for round in 0..3 {
        let want = if round == 0 {
            eager.clone()
        } else {
            x.set(&rng.vec::<f32>(BIG)).unwrap();
            bits(&dependent_chain(&x).unwrap())
        };
        g.replay(&s).unwrap();
        g.replay(&s).unwrap();
        assert!(
            bits(&out) == want,
            "round {round}: the replay differs from eager"
        );
    }
    s.synchronize().unwrap();
    common::ctx().check_deferred_errors().unwrap();
}
