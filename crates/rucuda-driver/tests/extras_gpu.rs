//! GPU tests of the driver extras: occupancy, CUDA graphs, profiler control, peer access,
//! host-array arguments (PyCUDA's In/Out/InOut), kernel timing, cooperative launches,
//! prepared launches and the checks made before a launch.
//!
//! Kernels: `tests/kernels/core.ptx` and `tests/kernels/extras.ptx` (from `extras.cu`).

mod common;

use common::{assert_close, Rng};
use rucuda_driver::sys::CUresult;
use rucuda_driver::*;

fn extras_module(ctx: &Context) -> Module {
    common::module(ctx, include_str!("kernels/extras.ptx"))
}

fn to_f64(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

/// Waits for the legacy default stream. A synchronous copy from pageable host memory
/// (`DeviceBuffer::from_slice`, `copy_from_host`) may return before its DMA has landed;
/// the DMA is ordered on the legacy stream, which work on NON_BLOCKING streams does not
/// wait for.
fn settle(ctx: &Context) -> Result<()> {
    Stream::null(ctx).synchronize()
}

fn attr(dev: Device, a: DeviceAttribute) -> Result<u32> {
    Ok(dev.attribute(a)?.max(0) as u32)
}

#[test]
#[ignore = "needs a CUDA device"]
fn occupancy_numbers_are_consistent() -> Result<()> {
    let ctx = common::ctx();
    let core = common::core_module(&ctx);
    let extras = extras_module(&ctx);
    let dev = ctx.device();
    let max_threads_sm = attr(dev, DeviceAttribute::MaxThreadsPerMultiprocessor)?;
    let max_blocks_sm = attr(dev, DeviceAttribute::MaxBlocksPerMultiprocessor)?;
    let warp = attr(dev, DeviceAttribute::WarpSize)?;
    let sms = attr(dev, DeviceAttribute::MultiprocessorCount)?;
    let flags = OccupancyFlags::DEFAULT;

    for name in ["noop", "saxpy", "add_one"] {
        let f = core.function(name)?;
        let kernel_max = f.attribute(FunctionAttribute::MaxThreadsPerBlock)?.max(0) as u32;
        for bs in [32u32, 64, 96, 128, 256, 512, 1024] {
            if bs > kernel_max {
                continue;
            }
            let blocks = f.max_active_blocks_per_multiprocessor(bs, 0, flags)?;
            assert!(blocks >= 1, "{name}: no {bs}-thread block fits");
            assert!(
                blocks * bs <= max_threads_sm,
                "{name}: {blocks} blocks of {bs} exceed {max_threads_sm} threads per SM"
            );
            assert!(
                blocks <= max_blocks_sm,
                "{name}: {blocks} > {max_blocks_sm} blocks per SM"
            );
            let occ = f.occupancy(bs, 0)?;
            assert_eq!(occ.active_blocks_per_multiprocessor, blocks);
            assert_eq!(
                occ.active_warps_per_multiprocessor,
                blocks * bs.div_ceil(warp)
            );
            assert_eq!(occ.max_warps_per_multiprocessor, max_threads_sm / warp);
            assert_eq!(occ.multiprocessor_count, sms);
            assert_eq!(occ.max_resident_blocks(), blocks * sms);
            assert!(occ.fraction() > 0.0 && occ.fraction() <= 1.0, "{occ:?}");
        }
        // The suggested size reaches the best occupancy any multiple of the warp size does.
        let s = f.suggested_block_size(0, 0, flags)?;
        println!("{name}: suggested {s:?}");
        assert!(
            s.block_size >= 1 && s.block_size <= kernel_max,
            "{name}: {s:?}"
        );
        assert!(s.min_grid_size >= 1, "{name}: {s:?}");
        let mut best = 0;
        for k in 1..=kernel_max / warp {
            best = best.max(f.occupancy(k * warp, 0)?.active_warps_per_multiprocessor);
        }
        assert_eq!(
            f.occupancy(s.block_size, 0)?
                .active_warps_per_multiprocessor,
            best,
            "{name}: suggested block size {} is not the most occupying",
            s.block_size
        );
        // A cap is respected.
        let capped = f.suggested_block_size(0, 64, flags)?;
        assert!(capped.block_size <= 64, "{name}: {capped:?}");
    }

    // Shared memory per block lowers the number of resident blocks: dynamic ...
    let noop = core.function("noop")?;
    let plain = noop.max_active_blocks_per_multiprocessor(128, 0, flags)?;
    let with_smem = noop.max_active_blocks_per_multiprocessor(128, 32 * 1024, flags)?;
    println!(
        "noop, 128 threads: {plain} blocks/SM; with 32 KiB dynamic shared memory: {with_smem}"
    );
    assert!(with_smem >= 1 && with_smem < plain);
    // ... and static.
    let hog = extras.function("shared_hog")?;
    assert_eq!(
        hog.attribute(FunctionAttribute::SharedSizeBytes)?,
        32 * 1024
    );
    let hog_blocks = hog.max_active_blocks_per_multiprocessor(128, 0, flags)?;
    println!("shared_hog (32 KiB static), 128 threads: {hog_blocks} blocks/SM");
    assert!(hog_blocks >= 1 && hog_blocks < plain);

    // The dynamic shared memory available for `nb` resident blocks lets `nb` blocks reside.
    let nb = (max_threads_sm / 256).min(max_blocks_sm).min(8);
    let avail = noop.available_dynamic_shared_memory_per_block(nb, 256)?;
    let optin = attr(dev, DeviceAttribute::MaxSharedMemoryPerBlockOptin)? as usize;
    println!("{nb} blocks of 256 threads: {avail} bytes of dynamic shared memory each");
    assert!(
        avail > 0 && avail <= optin,
        "{avail} bytes (opt-in limit {optin})"
    );
    // Seen on an H100 (driver 580, CUDA 13.0): the answer is the SM's shared memory split
    // `nb` ways (233472 / 8 = 29184) without the 1 KiB the system reserves per block, so
    // exactly `avail` bytes let only nb - 1 blocks reside. Less the reservation, nb fit.
    let reserved = attr(dev, DeviceAttribute::ReservedSharedMemoryPerBlock)? as usize;
    assert!(noop.max_active_blocks_per_multiprocessor(256, avail - reserved, flags)? >= nb);
    assert!(noop.max_active_blocks_per_multiprocessor(256, avail, flags)? >= nb - 1);

    // Per-block-size shared memory: the driver's callback (through the trampoline) and the
    // Rust search agree on the best occupancy. 160 bytes per thread, blocks up to 256
    // threads (40 KiB, under the default 48 KiB limit), makes shared memory the limit.
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let nested_refused = std::sync::atomic::AtomicBool::new(false);
    let smem = |bs: u32| bs as usize * 160;
    let by_driver = noop.suggested_block_size_with(
        |bs| {
            if calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 0 {
                let nested = noop.suggested_block_size_with(|_| 0, 0, OccupancyFlags::DEFAULT);
                nested_refused.store(nested.is_err(), std::sync::atomic::Ordering::Relaxed);
            }
            smem(bs)
        },
        256,
        flags,
    )?;
    let by_search = noop.suggested_block_size_by_search(smem, 256, flags)?;
    println!("160 B/thread: driver {by_driver:?}, search {by_search:?}");
    assert!(
        calls.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "the closure was never called"
    );
    assert!(
        nested_refused.load(std::sync::atomic::Ordering::Relaxed),
        "a nested call was not refused"
    );
    assert!(by_driver.block_size <= 256 && by_search.block_size <= 256);
    let warps = |bs: u32| -> Result<u32> {
        Ok(noop
            .occupancy(bs, smem(bs))?
            .active_warps_per_multiprocessor)
    };
    let mut best = 0;
    for k in 1..=256 / warp {
        best = best.max(warps(k * warp)?);
    }
    assert_eq!(warps(by_search.block_size)?, best);
    assert_eq!(warps(by_driver.block_size)?, best);
    assert_eq!(
        by_search.min_grid_size,
        noop.max_active_blocks_per_multiprocessor(
            by_search.block_size,
            smem(by_search.block_size),
            flags
        )? * sms
    );
    Ok(())
}

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

    let mut want: Vec<f64> = to_f64(&y0);
    for _ in 0..100 {
        for (w, &xi) in want.iter_mut().zip(&x) {
            *w = s as f64 * (a as f64 * xi as f64 + *w);
        }
    }
    assert_close(&to_f64(&got_graph), &want, 1e-5);

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
    assert_close(&to_f64(&out.to_vec()?), &want(2.0), 1e-6);

    let recaptured = capture_saxpy(3.0, &mut out)?;
    let update = exec.update(&recaptured)?;
    assert!(update.is_applied(), "{update:?}");
    out.copy_from_host(&vec![f32::NAN; n])?;
    settle(&ctx)?;
    // SAFETY: as above.
    unsafe { exec.launch(&stream)? };
    stream.synchronize()?;
    assert_close(&to_f64(&out.to_vec()?), &want(3.0), 1e-6);

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
    assert_close(&to_f64(&out.to_vec()?), &want(3.0), 1e-6);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn profiler_start_and_stop_succeed() -> Result<()> {
    let ctx = common::ctx();
    ctx.bind()?;
    start_profiler()?;
    start_profiler()?; // already started: no effect
    stop_profiler()?;
    stop_profiler()?; // already stopped: no effect
    ctx.start_profiler()?;
    ctx.stop_profiler()?;
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn peer_access_lets_a_kernel_read_another_devices_memory() -> Result<()> {
    let count = Device::count()?;
    if count < 2 {
        common::skip(format!("peer access needs two devices, {count} visible"));
        return Ok(());
    }
    let (d0, d1) = (Device::get(0)?, Device::get(1)?);
    let info = d0.p2p_info(d1)?;
    println!("device 0 -> 1: {info:?}");
    if !d0.can_access_peer(d1)? {
        assert!(!info.access_supported);
        common::skip("devices 0 and 1 cannot access each other's memory");
        return Ok(());
    }
    assert!(info.access_supported);
    assert_eq!(d0.p2p_attribute(d1, P2PAttribute::AccessSupported)?, 1);
    let (c0, c1) = (d0.primary_context()?, d1.primary_context()?);
    let mut rng = Rng::fresh();
    let n = 5000 + (rng.next_u64() % 5000) as usize;
    let (x, y) = (rng.vec_f32(n), rng.vec_f32(n));
    let x_on_1 = DeviceBuffer::from_slice(&c1, &x)?;
    let y_on_0 = DeviceBuffer::from_slice(&c0, &y)?;
    let mut out_on_0 = DeviceBuffer::from_slice(&c0, &vec![f32::NAN; n])?;
    settle(&c0)?;
    settle(&c1)?;
    match c0.enable_peer_access(&c1) {
        Ok(()) => {}
        Err(e) if e.code() == Some(CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) => {}
        Err(e) => return Err(e),
    }
    let saxpy = common::core_module(&c0).function("saxpy")?;
    let stream = Stream::new(&c0, StreamFlags::NON_BLOCKING)?;
    // SAFETY: saxpy reads x (device 1, peer access enabled) and y, writes out, n floats each.
    unsafe {
        saxpy.launch(
            LaunchConfig::for_elements(n, 256),
            &stream,
            (1.5f32, &x_on_1, &y_on_0, &mut out_on_0, n as u64),
        )?
    };
    stream.synchronize()?;
    let want: Vec<f64> = x
        .iter()
        .zip(&y)
        .map(|(&a, &b)| 1.5 * a as f64 + b as f64)
        .collect();
    assert_close(&to_f64(&out_on_0.to_vec()?), &want, 1e-6);
    c0.disable_peer_access(&c1)?;
    let again = c0.disable_peer_access(&c1);
    assert_eq!(
        again.err().and_then(|e| e.code()),
        Some(CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn host_args_in_out_and_in_out_round_trip() -> Result<()> {
    let ctx = common::ctx();
    let extras = extras_module(&ctx);
    let f = extras.function("in_out_mix")?;
    let mut rng = Rng::fresh();
    let n = 1000 + (rng.next_u64() % 4000) as usize;
    let a = 1.0 + rng.f32();
    let input = rng.vec_f32(n);
    let inout0 = rng.vec_f32(n);
    let mut inout = inout0.clone();
    let mut out = vec![f32::NAN; n];
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let cfg = LaunchConfig::for_elements(n, 256);

    let args = HostArgs::new(&stream)
        .input(&input)
        .output(&mut out)
        .in_out(&mut inout)
        .value(a)
        .value(n as i32);
    assert_eq!(args.len(), 5);
    // SAFETY: in_out_mix(const float* in, float* out, float* inout, float a, int n).
    unsafe { f.call_with_host_args(cfg, args)? };
    let want_out: Vec<f64> = input.iter().map(|&v| (a * v) as f64).collect();
    let want_inout: Vec<f64> = inout0
        .iter()
        .zip(&input)
        .map(|(&o, &v)| (o + v) as f64)
        .collect();
    assert_close(&to_f64(&out), &want_out, 1e-6);
    assert_close(&to_f64(&inout), &want_inout, 1e-6);

    // A device buffer mixes with host slices; the timed form returns the kernel's time.
    let d_input = DeviceBuffer::from_slice(&ctx, &input)?;
    settle(&ctx)?;
    let mut out2 = vec![f32::NAN; n];
    let args = HostArgs::new(&stream)
        .device(&d_input)
        .output(&mut out2)
        .in_out(&mut inout)
        .value(a)
        .value(n as i32);
    // SAFETY: as above.
    let seconds = unsafe { f.call_with_host_args_timed(cfg, args)? };
    println!("in_out_mix on {n} elements: {seconds} s");
    assert!(seconds > 0.0 && seconds < 10.0, "{seconds}");
    assert_close(&to_f64(&out2), &want_out, 1e-6);
    let want_inout2: Vec<f64> = inout0
        .iter()
        .zip(&input)
        .map(|(&o, &v)| ((o + v) + v) as f64)
        .collect();
    assert_close(&to_f64(&inout), &want_inout2, 1e-6);

    // A missing argument is refused before anything runs, naming the kernel (only the
    // driver's parameter info can tell; without it the call would launch).
    if f.param_sizes()?.is_none() {
        println!("driver has no cuFuncGetParamInfo: argument count not checkable");
        return Ok(());
    }
    let before = inout.clone();
    let mut out3 = vec![f32::NAN; n];
    let args = HostArgs::new(&stream)
        .input(&input)
        .output(&mut out3)
        .in_out(&mut inout)
        .value(a);
    // SAFETY: refused before launch.
    let err = unsafe { f.call_with_host_args(cfg, args) }.unwrap_err();
    println!("{err}");
    assert_eq!(err.kind(), ErrorKind::Launch);
    assert!(err.to_string().contains("`in_out_mix`"), "{err}");
    assert_eq!(inout, before, "a refused call changed its in-out slice");
    assert!(
        out3.iter().all(|v| v.is_nan()),
        "a refused call wrote its output"
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn kernel_time_is_positive_and_grows_with_spin_cycles() -> Result<()> {
    if rucuda_testkit::skip_under_sanitizer("measures kernel times, which instrumentation distorts")
    {
        return Ok(());
    }
    let ctx = common::ctx();
    let spin = common::core_module(&ctx).function("spin")?;
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let one = LaunchConfig::linear(1, 1);
    // Warm up: the first launch may load the kernel lazily, and ~25 ms of spinning
    // raises the clocks, so that time below is proportional to cycles.
    // SAFETY: spin(unsigned long long cycles) touches no memory.
    unsafe { spin.launch(one, &stream, (50_000_000u64,))? };
    stream.synchronize()?;
    // SAFETY: as above.
    let short = unsafe { spin.launch_timed(one, &stream, (1_000_000u64,))? };
    // PyCUDA's time_kernel=True through the host-argument path.
    // SAFETY: as above.
    let mid =
        unsafe { spin.call_with_host_args_timed(one, HostArgs::new(&stream).value(5_000_000u64))? };
    // SAFETY: as above.
    let long = unsafe { spin.launch_timed(one, &stream, (20_000_000u64,))? };
    println!("spin 1e6 cycles: {short} s, 5e6 (host-argument call): {mid} s, 2e7: {long} s");
    assert!(short > 0.0, "{short}");
    assert!(mid > short, "{mid} s is not above {short} s");
    assert!(long > 4.0 * short, "{long} s is not well above {short} s");
    assert!(long > mid, "{long} s is not above {mid} s");
    assert!(long < 10.0, "{long}");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn cooperative_launch_sized_by_occupancy_syncs_the_grid() -> Result<()> {
    let ctx = common::ctx();
    let dev = ctx.device();
    if dev.attribute(DeviceAttribute::CooperativeLaunch)? == 0 {
        common::skip("device does not support cooperative launches");
        return Ok(());
    }
    let f = extras_module(&ctx).function("two_phase")?;
    let block = 256;
    let occ = f.occupancy(block, 0)?;
    let grid = occ.max_resident_blocks();
    println!("two_phase: {occ:?}, grid {grid}");
    assert!(grid >= 1);
    let mut rng = Rng::fresh();
    let n = grid as usize * block as usize * 3 + 1 + (rng.next_u64() % 1000) as usize;
    let x = rng.vec_f32(n);
    let dx = DeviceBuffer::from_slice(&ctx, &x)?;
    let mut tmp = DeviceBuffer::from_slice(&ctx, &vec![f32::NAN; n])?;
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![f32::NAN; n])?;
    settle(&ctx)?;
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    // SAFETY: two_phase(const float* x, float* tmp, float* out, unsigned long long n)
    // touches [0, n) of each; the grid fits on the device at once.
    unsafe {
        f.launch_cooperative(
            LaunchConfig::linear(grid, block),
            &stream,
            (&dx, &mut tmp, &mut out, n as u64),
        )?
    };
    stream.synchronize()?;
    let want: Vec<f64> = (0..n)
        .map(|i| (2.0 * x[i] + 2.0 * x[n - 1 - i]) as f64)
        .collect();
    assert_close(&to_f64(&out.to_vec()?), &want, 1e-6);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn prepared_launch_matches_direct_launches_and_refuses_wrong_sizes() -> Result<()> {
    let ctx = common::ctx();
    let add_one = common::core_module(&ctx).function("add_one")?;
    let mut rng = Rng::fresh();
    let n = 2000 + (rng.next_u64() % 3000) as usize;
    let xs = rng.vec_i32(n);
    let mut a = DeviceBuffer::from_slice(&ctx, &xs)?;
    let mut b = DeviceBuffer::from_slice(&ctx, &xs)?;
    settle(&ctx)?;
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let cfg = LaunchConfig::for_elements(n, 128);
    let prepared = add_one.prepare(cfg, &[8, 4])?;
    assert_eq!(prepared.config(), cfg);
    for _ in 0..50 {
        // SAFETY: add_one(int* x, int n) touches x[0..n).
        unsafe {
            prepared.launch(&stream, (&mut a, n as i32))?;
            add_one.launch(cfg, &stream, (&mut b, n as i32))?;
        }
    }
    // SAFETY: as above.
    let seconds = unsafe { prepared.launch_timed(&stream, (&mut a, n as i32))? };
    assert!(seconds > 0.0, "{seconds}");
    // SAFETY: as above.
    unsafe { add_one.launch(cfg, &stream, (&mut b, n as i32))? };
    stream.synchronize()?;
    let want: Vec<i32> = xs.iter().map(|v| v + 51).collect();
    assert_eq!(a.to_vec()?, want);
    assert_eq!(b.to_vec()?, want);

    // SAFETY: refused before launch.
    let err = unsafe { prepared.launch(&stream, (&mut a, n as u64)) }.unwrap_err();
    println!("{err}");
    assert_eq!(err.kind(), ErrorKind::Launch);
    let msg = err.to_string();
    assert!(
        msg.contains("`add_one`") && msg.contains("[8, 4]") && msg.contains("[8, 8]"),
        "{msg}"
    );
    assert_eq!(a.to_vec()?, want, "a refused launch ran");

    if add_one.param_sizes()?.is_some() {
        let err = add_one.prepare(cfg, &[8]).unwrap_err();
        assert!(err.to_string().contains("`add_one`"), "{err}");
    } else {
        println!("driver has no cuFuncGetParamInfo: prepare cannot check sizes");
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn launch_refusals_name_the_kernel_and_what_was_expected() -> Result<()> {
    let ctx = common::ctx();
    let core = common::core_module(&ctx);
    let (saxpy, add_one, noop, uses_shared) = (
        core.function("saxpy")?,
        core.function("add_one")?,
        core.function("noop")?,
        core.function("uses_shared")?,
    );
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let mut rng = Rng::fresh();
    let n = 1000 + (rng.next_u64() % 1000) as usize;
    let cfg = LaunchConfig::for_elements(n, 256);
    let x = DeviceBuffer::from_slice(&ctx, &rng.vec_f32(n))?;
    let y = DeviceBuffer::from_slice(&ctx, &rng.vec_f32(n))?;
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![f32::NAN; n])?;
    let mut ints = DeviceBuffer::from_slice(&ctx, &rng.vec_i32(n))?;
    let ints_before = ints.to_vec()?;

    let expect_refusal = |r: Result<()>, needles: &[&str]| {
        let err = r.expect_err("the launch should have been refused");
        println!("{err}");
        assert_eq!(err.kind(), ErrorKind::Launch, "{err}");
        let msg = err.to_string();
        for needle in needles {
            assert!(msg.contains(needle), "`{needle}` missing from: {msg}");
        }
    };

    match saxpy.param_sizes()? {
        Some(sizes) => {
            assert_eq!(sizes, [4, 8, 8, 8, 8]);
            // SAFETY: refused before launch.
            let r = unsafe { saxpy.launch(cfg, &stream, (2.0f32, &x, &y, &mut out)) };
            expect_refusal(
                r,
                &[
                    "`saxpy`",
                    "takes 5 arguments",
                    "4, 8, 8, 8, 8",
                    "4 were given",
                ],
            );
            // SAFETY: refused before launch.
            let r = unsafe { add_one.launch(cfg, &stream, (&mut ints, n as u64)) };
            expect_refusal(
                r,
                &["`add_one`", "argument 1 has 8 bytes", "parameter 1 has 4"],
            );
        }
        None => println!("driver has no cuFuncGetParamInfo: argument checks not testable"),
    }
    // SAFETY: refused before launch.
    let r = unsafe { noop.launch(LaunchConfig::linear(1, 2048), &stream, ()) };
    let kernel_max = noop.attribute(FunctionAttribute::MaxThreadsPerBlock)?;
    expect_refusal(
        r,
        &["`noop`", "2048 threads", &format!("at most {kernel_max}")],
    );
    // SAFETY: refused before launch.
    let r = unsafe {
        uses_shared.launch(
            LaunchConfig::linear(1, 32).with_shared_mem(200_000),
            &stream,
            (&mut out,),
        )
    };
    expect_refusal(
        r,
        &[
            "`uses_shared`",
            "200000 bytes of dynamic shared memory",
            "allows",
        ],
    );
    stream.synchronize()?;
    assert!(
        out.to_vec()?.iter().all(|v| v.is_nan()),
        "a refused launch wrote out"
    );
    assert_eq!(ints.to_vec()?, ints_before, "a refused launch wrote ints");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_constants_read_back_typed() -> Result<()> {
    let ctx = common::ctx();
    let dev = ctx.device();
    // A context exists, so the device does not prohibit them.
    let mode = dev.compute_mode()?;
    println!("compute mode: {mode:?}");
    assert_ne!(mode, ComputeMode::Prohibited);
    assert_eq!(
        mode.raw(),
        dev.attribute(DeviceAttribute::ComputeMode)?,
        "typed and raw compute mode differ"
    );
    let target = JitTarget::for_compute_capability(dev.compute_capability()?);
    println!("JIT target: {target}");
    assert_eq!(JitTarget::from_raw(target.raw()), Some(target));
    // Bank-size configuration: a deprecated no-op on current GPUs, kept while the driver
    // exports it; "not supported" (or a driver without the call) is an answer too.
    let tolerate = |r: Result<()>, what: &str| -> Result<()> {
        match r {
            Err(e) if e.kind() == ErrorKind::NotSupported => {
                println!("{what}: not available: {e}");
                Ok(())
            }
            other => other,
        }
    };
    match ctx.shared_config() {
        Ok(config) => {
            println!("shared memory config: {config:?}");
            tolerate(ctx.set_shared_config(config), "cuCtxSetSharedMemConfig")?;
            tolerate(
                ctx.set_shared_config(SharedConfig::FourByteBankSize),
                "cuCtxSetSharedMemConfig",
            )?;
            let noop = common::core_module(&ctx).function("noop")?;
            tolerate(
                noop.set_shared_config(SharedConfig::DefaultBankSize),
                "cuFuncSetSharedMemConfig",
            )?;
        }
        Err(e) if e.kind() == ErrorKind::NotSupported => {
            println!("shared memory config not available: {e}");
        }
        Err(e) => return Err(e),
    }
    Ok(())
}
