//! GPU tests of the driver extras: occupancy, profiler control, peer access, device
//! constants here; `graphs` (CUDA graphs) and `launch_forms` (host-array arguments,
//! timing, cooperative and prepared launches, the checks before a launch).
//!
//! Kernels: `tests/kernels/core.ptx` and `tests/kernels/extras.ptx` (from `extras.cu`).

#[path = "../common/mod.rs"]
mod common;

mod capture_sessions;
mod graphs;
mod launch_forms;

use common::{assert_close, f64s, Rng};
use rucuda_driver::sys::CUresult;
use rucuda_driver::*;

/// The kernels of the extras (`tests/kernels/extras.cu`).
fn extras_module(ctx: &Context) -> Module {
    common::module(ctx, include_str!("../kernels/extras.ptx"))
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
    assert_close(&f64s(&out_on_0.to_vec()?), &want, 1e-6);
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
