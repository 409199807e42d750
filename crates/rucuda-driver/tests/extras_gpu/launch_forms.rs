//! GPU tests of the other ways to launch: host-array arguments (PyCUDA's In/Out/InOut),
//! kernel timing, cooperative launches, prepared launches, and the checks made before a
//! launch, with errors that name the kernel.
//!
//! Kernels: `tests/kernels/core.ptx` and `tests/kernels/extras.ptx` (from `extras.cu`).

use crate::common;
use crate::common::{assert_close, f64s, Rng};
use crate::{extras_module, settle};
use rucuda_driver::*;

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
    assert_close(&f64s(&out), &want_out, 1e-6);
    assert_close(&f64s(&inout), &want_inout, 1e-6);

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
    assert_close(&f64s(&out2), &want_out, 1e-6);
    let want_inout2: Vec<f64> = inout0
        .iter()
        .zip(&input)
        .map(|(&o, &v)| ((o + v) + v) as f64)
        .collect();
    assert_close(&f64s(&inout), &want_inout2, 1e-6);

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
    assert_close(&f64s(&out.to_vec()?), &want, 1e-6);
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
