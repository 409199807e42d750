//! GPU tests of CUDA graphs: a captured graph replays what eager launches compute, and an
//! executable graph updated with a new scalar argument.
//!
//! Kernels: `tests/kernels/core.ptx` and `tests/kernels/extras.ptx` (from `extras.cu`).

use crate::common;
use crate::common::{assert_close, f64s, Rng};
use crate::{extras_module, settle};
use rucuda_driver::*;

#[test]
#[ignore = "needs a CUDA device"]
fn graph_replay_equals_eager_launches() -> Result<()> {
    let ctx = common::ctx();
    let core = common::core_module(&ctx);
    let extras = extras_module(&ctx);
    let saxpy = core.function("saxpy")?;
    let scale_into = extras.function("scale_into")?;
    let mut rng = Rng::fresh();
    let n = 10_000 + (rng.next_u64() % 10_000) as usize;
    let (a, s) = (0.75f32, 0.5f32);
    let x = rng.vec_f32(n);
    let y0 = rng.vec_f32(n);
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let cfg = LaunchConfig::for_elements(n, 256);
    let dx = DeviceBuffer::from_slice(&ctx, &x)?;

    // 100 eager steps: tmp = a x + y; y = s tmp.
    let mut y_eager = DeviceBuffer::from_slice(&ctx, &y0)?;
    let mut tmp_eager = DeviceBuffer::from_slice(&ctx, &vec![f32::NAN; n])?;
    settle(&ctx)?;
    for _ in 0..100 {
        // SAFETY: both kernels touch [0, n) of buffers of n floats.
        unsafe {
            saxpy.launch(cfg, &stream, (a, &dx, &y_eager, &mut tmp_eager, n as u64))?;
            scale_into.launch(cfg, &stream, (s, &tmp_eager, &mut y_eager, n as u64))?;
        }
    }
    stream.synchronize()?;

    // The same step captured once, replayed 100 times.
    let mut y_graph = DeviceBuffer::from_slice(&ctx, &y0)?;
    let mut tmp_graph = DeviceBuffer::from_slice(&ctx, &vec![f32::NAN; n])?;
    settle(&ctx)?;
    let graph = stream.capture(CaptureMode::ThreadLocal, |st| {
        assert_eq!(st.capture_status()?, CaptureStatus::Active);
        // SAFETY: as above; the buffers outlive every replay below.
        unsafe {
            saxpy.launch(cfg, st, (a, &dx, &y_graph, &mut tmp_graph, n as u64))?;
            scale_into.launch(cfg, st, (s, &tmp_graph, &mut y_graph, n as u64))?;
        }
        Ok(())
    })?;
    assert!(!stream.is_capturing()?);
    assert_eq!(graph.node_count()?, 2);
    assert_eq!(graph.try_clone()?.node_count()?, 2);
    // Capturing ran nothing.
    assert_eq!(y_graph.to_vec()?, y0);
    let dot = tempfile::Builder::new()
        .prefix("rucuda-graph-")
        .suffix(".dot")
        .tempfile()
        .expect("a temporary file");
    graph.write_dot(dot.path())?;
    let dot_text = std::fs::read_to_string(dot.path()).unwrap_or_default();
    assert!(dot_text.contains("digraph"), "DOT output: {dot_text:.200}");

    let exec = graph.instantiate()?;
    drop(graph); // an executable graph does not need its source graph
    exec.upload(&stream)?;
    for _ in 0..100 {
        // SAFETY: dx, y_graph and tmp_graph are alive until after the synchronize.
        unsafe { exec.launch(&stream)? };
    }
    stream.synchronize()?;
    let (got_graph, got_eager) = (y_graph.to_vec()?, y_eager.to_vec()?);
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert!(
        bits(&got_graph) == bits(&got_eager),
        "graph replay differs from eager launches"
    );

    let mut want: Vec<f64> = f64s(&y0);
    for _ in 0..100 {
        for (w, &xi) in want.iter_mut().zip(&x) {
            *w = s as f64 * (a as f64 * xi as f64 + *w);
        }
    }
    assert_close(&f64s(&got_graph), &want, 1e-5);

    // A failing capture body still ends the capture and reports its own error.
    let failed = stream.capture(CaptureMode::ThreadLocal, |_| {
        Err(Error::InvalidArgument("deliberate".into()))
    });
    assert!(matches!(failed, Err(Error::InvalidArgument(ref m)) if m == "deliberate"));
    assert!(!stream.is_capturing()?);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn graph_exec_update_changes_a_scalar_argument() -> Result<()> {
    let ctx = common::ctx();
    let core = common::core_module(&ctx);
    let extras = extras_module(&ctx);
    let saxpy = core.function("saxpy")?;
    let scale_into = extras.function("scale_into")?;
    let mut rng = Rng::fresh();
    let n = 4096 + (rng.next_u64() % 4096) as usize;
    let (x, y) = (rng.vec_f32(n), rng.vec_f32(n));
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let cfg = LaunchConfig::for_elements(n, 128);
    let (dx, dy) = (
        DeviceBuffer::from_slice(&ctx, &x)?,
        DeviceBuffer::from_slice(&ctx, &y)?,
    );
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![f32::NAN; n])?;
    settle(&ctx)?;
    let want = |a: f32| -> Vec<f64> {
        x.iter()
            .zip(&y)
            .map(|(&xi, &yi)| a as f64 * xi as f64 + yi as f64)
            .collect()
    };

    // Read the kernels' launch limits now, not during the captures.
    saxpy.param_sizes()?;
    scale_into.param_sizes()?;
    let capture_saxpy = |a: f32, out: &mut DeviceBuffer<f32>| {
        stream.capture(CaptureMode::ThreadLocal, |st| {
            // SAFETY: saxpy touches [0, n) of buffers of n floats, alive for every replay.
            unsafe { saxpy.launch(cfg, st, (a, &dx, &dy, out, n as u64)) }
        })
    };
    let exec = capture_saxpy(2.0, &mut out)?.instantiate()?;
    // SAFETY: the captured buffers are alive until after the synchronize.
    unsafe { exec.launch(&stream)? };
    stream.synchronize()?;
    assert_close(&f64s(&out.to_vec()?), &want(2.0), 1e-6);

    let recaptured = capture_saxpy(3.0, &mut out)?;
    let update = exec.update(&recaptured)?;
    assert!(update.is_applied(), "{update:?}");
    out.copy_from_host(&vec![f32::NAN; n])?;
    settle(&ctx)?;
    // SAFETY: as above.
    unsafe { exec.launch(&stream)? };
    stream.synchronize()?;
    assert_close(&f64s(&out.to_vec()?), &want(3.0), 1e-6);

    // A graph of another shape is refused, and the executable graph keeps its parameters.
    let mut tmp = DeviceBuffer::from_slice(&ctx, &vec![f32::NAN; n])?;
    settle(&ctx)?;
    let two_nodes = stream.capture(CaptureMode::ThreadLocal, |st| {
        // SAFETY: both kernels touch [0, n) of buffers of n floats; never launched.
        unsafe {
            saxpy.launch(cfg, st, (5.0f32, &dx, &dy, &mut tmp, n as u64))?;
            scale_into.launch(cfg, st, (2.0f32, &tmp, &mut out, n as u64))
        }
    })?;
    let refused = exec.update(&two_nodes)?;
    println!("update with another topology: {refused:?}");
    assert!(!refused.is_applied());
    out.copy_from_host(&vec![f32::NAN; n])?;
    settle(&ctx)?;
    // SAFETY: as above.
    unsafe { exec.launch(&stream)? };
    stream.synchronize()?;
    assert_close(&f64s(&out.to_vec()?), &want(3.0), 1e-6);
    Ok(())
}
