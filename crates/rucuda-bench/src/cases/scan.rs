//! Inclusive scans (`a + b`) through rucuda-array's InclusiveScanKernel on 2^28 elements
//! (2^24 with `--quick`), out of place. Device time by events, including the memset of the
//! look-back status words each call makes; bandwidth counts one read and one write per
//! element (8 B for int32 and float32, 16 for int64).

use rucuda_array::scan::{InclusiveScanKernel, L2Prefetch, ScanTuning};
use rucuda_array::{DType, Element, GpuArray};

use super::reduce::{array_device_seconds, array_elements, bench_stream, ones};
use super::{Case, RUCUDA};
use crate::config::Config;
use crate::cuda::{Gpu, Result};
use crate::harness::Measurement;

/// The tunings `RUCUDA_BENCH_SCAN_SWEEP=1` measures: (case name, element type, threads,
/// vectors, streaming, prefetch).
type SweepPoint = (&'static str, DType, u32, usize, bool, L2Prefetch);
const SWEEP: [SweepPoint; 20] = [
    (
        "scan_tune_i32_d128x8s_pf4m_GBps",
        DType::I32,
        128,
        8,
        true,
        L2Prefetch::Bytes(4194304),
    ),
    (
        "scan_tune_i32_d128x8s_pf6m_GBps",
        DType::I32,
        128,
        8,
        true,
        L2Prefetch::Bytes(6291456),
    ),
    (
        "scan_tune_i32_d128x8s_pf8m_GBps",
        DType::I32,
        128,
        8,
        true,
        L2Prefetch::Bytes(8388608),
    ),
    (
        "scan_tune_i32_d128x8s_pf10m_GBps",
        DType::I32,
        128,
        8,
        true,
        L2Prefetch::Bytes(10485760),
    ),
    (
        "scan_tune_i32_d128x8s_pfauto_GBps",
        DType::I32,
        128,
        8,
        true,
        L2Prefetch::Auto,
    ),
    (
        "scan_tune_i32_d128x8s_GBps",
        DType::I32,
        128,
        8,
        true,
        L2Prefetch::Off,
    ),
    (
        "scan_tune_i32_d128x8_GBps",
        DType::I32,
        128,
        8,
        false,
        L2Prefetch::Off,
    ),
    (
        "scan_tune_i32_d128x16s_pfauto_GBps",
        DType::I32,
        128,
        16,
        true,
        L2Prefetch::Auto,
    ),
    (
        "scan_tune_i32_d256x8s_pfauto_GBps",
        DType::I32,
        256,
        8,
        true,
        L2Prefetch::Auto,
    ),
    (
        "scan_tune_i32_d64x16s_pfauto_GBps",
        DType::I32,
        64,
        16,
        true,
        L2Prefetch::Auto,
    ),
    (
        "scan_tune_i64_d128x8s_pfauto_GBps",
        DType::I64,
        128,
        8,
        true,
        L2Prefetch::Auto,
    ),
    (
        "scan_tune_i64_d128x8s_GBps",
        DType::I64,
        128,
        8,
        true,
        L2Prefetch::Off,
    ),
    // Longer distances, for devices with more bandwidth than an H100 (H200: 4.8 TB/s).
    (
        "scan_tune_i32_d128x8s_pf12m_GBps",
        DType::I32,
        128,
        8,
        true,
        L2Prefetch::Bytes(12 << 20),
    ),
    (
        "scan_tune_i32_d128x8s_pf16m_GBps",
        DType::I32,
        128,
        8,
        true,
        L2Prefetch::Bytes(16 << 20),
    ),
    (
        "scan_tune_i32_d128x12s_pfauto_GBps",
        DType::I32,
        128,
        12,
        true,
        L2Prefetch::Auto,
    ),
    (
        "scan_tune_f32_d128x8s_pfauto_GBps",
        DType::F32,
        128,
        8,
        true,
        L2Prefetch::Auto,
    ),
    (
        "scan_tune_f32_d128x8s_pf12m_GBps",
        DType::F32,
        128,
        8,
        true,
        L2Prefetch::Bytes(12 << 20),
    ),
    (
        "scan_tune_i64_d128x8s_pf12m_GBps",
        DType::I64,
        128,
        8,
        true,
        L2Prefetch::Bytes(12 << 20),
    ),
    (
        "scan_tune_i64_d128x8s_pf16m_GBps",
        DType::I64,
        128,
        8,
        true,
        L2Prefetch::Bytes(16 << 20),
    ),
    (
        "scan_tune_i64_d64x16s_pfauto_GBps",
        DType::I64,
        64,
        16,
        true,
        L2Prefetch::Auto,
    ),
];

/// Registers the scan cases (rucuda; CuPy and CUB come from the peers), and with
/// `RUCUDA_BENCH_SCAN_SWEEP` set, the tuning sweep (each result checked).
pub fn register(cases: &mut Vec<Case>) {
    if std::env::var_os("RUCUDA_BENCH_SCAN_SWEEP").is_some() {
        for (index, (name, ..)) in SWEEP.iter().enumerate() {
            cases.push(Case {
                name,
                lib: RUCUDA,
                run: SWEEP_RUNS[index],
            });
        }
    }
    for (name, run) in [
        (
            "scan_incl_i32_GBps",
            rucuda_scan_i32 as fn(&Gpu, &Config) -> Result<Measurement>,
        ),
        ("scan_incl_f32_GBps", rucuda_scan_f32),
        ("scan_incl_i64_GBps", rucuda_scan_i64),
    ] {
        cases.push(Case {
            name,
            lib: RUCUDA,
            run,
        });
    }
}

fn time_scan<T: Element>(config: &Config) -> Result<Measurement> {
    let n = array_elements(config);
    let stream = bench_stream()?;
    let x = ones::<T>(&stream, n)?;
    let mut out = GpuArray::<T>::empty(&stream, &[n])?;
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let scan = unsafe { InclusiveScanKernel::new(T::DTYPE, "a + b", "0") }?;
    let samples = array_device_seconds(&stream, config.device_copy_sampling(), || {
        scan.call(&stream, &x, &mut out)
    })?;
    let bytes = 2 * T::DTYPE.size_bytes() * n;
    Ok(Measurement::gbps(&samples, bytes, n as u64))
}

fn rucuda_scan_i32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    time_scan::<i32>(config)
}

fn rucuda_scan_f32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    time_scan::<f32>(config)
}

fn rucuda_scan_i64(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    debug_assert_eq!(<i64 as Element>::DTYPE, DType::I64);
    time_scan::<i64>(config)
}

/// One checked sweep point: a cumulative sum of ones must give 1, 2, 3...
fn sweep_point(config: &Config, index: usize) -> Result<Measurement> {
    let (_, dtype, threads, vectors, streaming, prefetch) = SWEEP[index];
    let tuning = ScanTuning {
        threads,
        vectors,
        streaming,
        prefetch,
        ..ScanTuning::for_size(dtype.size_bytes())
    };
    match dtype {
        DType::I64 => sweep_typed::<i64>(config, index, tuning, |i, v| {
            i64::try_from(i + 1).ok() == Some(v)
        }),
        // Exact below 2^24; the sum of more ones depends on the order of the additions.
        DType::F32 => sweep_typed::<f32>(config, index, tuning, |i, v| {
            i >= 1 << 24 || v == (i + 1) as f32
        }),
        _ => sweep_typed::<i32>(config, index, tuning, |i, v| {
            i32::try_from(i + 1).ok() == Some(v)
        }),
    }
}

fn sweep_typed<T: Element>(
    config: &Config,
    index: usize,
    tuning: ScanTuning,
    expected: impl Fn(usize, T) -> bool,
) -> Result<Measurement> {
    let n = array_elements(config);
    let stream = bench_stream()?;
    let x = ones::<T>(&stream, n)?;
    let mut out = GpuArray::<T>::empty(&stream, &[n])?;
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let scan = unsafe { InclusiveScanKernel::new(T::DTYPE, "a + b", "0") }?
        .into_kernel()
        .with_tuning(tuning)?;
    let samples = array_device_seconds(&stream, config.device_copy_sampling(), || {
        scan.call(&stream, &x, &mut out)
    })?;
    let host = out.to_vec()?;
    if let Some(bad) = (0..n).find(|&i| !expected(i, host[i])) {
        return Err(crate::cuda::Error(format!(
            "{}: out[{bad}] is not {}",
            SWEEP[index].0,
            bad + 1
        )));
    }
    Ok(Measurement::gbps(
        &samples,
        2 * T::DTYPE.size_bytes() * n,
        n as u64,
    ))
}

macro_rules! sweep_runs {
    ($($i:literal),*) => {
        [$({
            fn run(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
                sweep_point(config, $i)
            }
            run as fn(&Gpu, &Config) -> Result<Measurement>
        }),*]
    };
}

const SWEEP_RUNS: [fn(&Gpu, &Config) -> Result<Measurement>; 20] =
    sweep_runs!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
