//! Inclusive scans (`a + b`) through rucuda-array's InclusiveScanKernel on 2^28 elements
//! (2^24 with `--quick`), out of place. Device time by events, including the memset of the
//! look-back status words each call makes; bandwidth counts one read and one write per
//! element (8 B for int32 and float32, 16 for int64).

use rucuda_array::scan::{InclusiveScanKernel, ScanTuning};
use rucuda_array::{DType, Element, GpuArray};

use super::reduce::{array_device_seconds, array_elements, bench_stream, ones};
use super::{Case, RUCUDA};
use crate::config::Config;
use crate::cuda::{Gpu, Result};
use crate::harness::Measurement;

/// The tunings `RUCUDA_BENCH_SCAN_SWEEP=1` measures: (case name, threads, vectors,
/// pipelined, streaming, speculative, prefetch tiles).
type SweepPoint = (&'static str, u32, usize, bool, bool, bool, u32);
const SWEEP: [SweepPoint; 16] = [
    (
        "scan_tune_d128x16s_i32_GBps",
        128,
        16,
        false,
        true,
        false,
        0,
    ),
    ("scan_tune_d256x8s_i32_GBps", 256, 8, false, true, false, 0),
    (
        "scan_tune_d128x8s_pf512_i32_GBps",
        128,
        8,
        false,
        true,
        false,
        512,
    ),
    (
        "scan_tune_d128x8s_pf1024_i32_GBps",
        128,
        8,
        false,
        true,
        false,
        1024,
    ),
    (
        "scan_tune_d128x8s_pf2048_i32_GBps",
        128,
        8,
        false,
        true,
        false,
        2048,
    ),
    (
        "scan_tune_d128x16s_pf256_i32_GBps",
        128,
        16,
        false,
        true,
        false,
        256,
    ),
    (
        "scan_tune_d128x16s_pf512_i32_GBps",
        128,
        16,
        false,
        true,
        false,
        512,
    ),
    (
        "scan_tune_d128x16s_pf1024_i32_GBps",
        128,
        16,
        false,
        true,
        false,
        1024,
    ),
    (
        "scan_tune_d128x8s_spec_i32_GBps",
        128,
        8,
        false,
        true,
        true,
        0,
    ),
    (
        "scan_tune_d128x16s_spec_i32_GBps",
        128,
        16,
        false,
        true,
        true,
        0,
    ),
    (
        "scan_tune_d128x16s_spec_pf512_i32_GBps",
        128,
        16,
        false,
        true,
        true,
        512,
    ),
    (
        "scan_tune_d128x16_spec_i32_GBps",
        128,
        16,
        false,
        false,
        true,
        0,
    ),
    (
        "scan_tune_d256x16s_i32_GBps",
        256,
        16,
        false,
        true,
        false,
        0,
    ),
    (
        "scan_tune_d128x32s_i32_GBps",
        128,
        32,
        false,
        true,
        false,
        0,
    ),
    ("scan_tune_d512x8s_i32_GBps", 512, 8, false, true, false, 0),
    (
        "scan_tune_d256x8s_spec_pf512_i32_GBps",
        256,
        8,
        false,
        true,
        true,
        512,
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
    let scan = InclusiveScanKernel::new(T::DTYPE, "a + b", "0")?;
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
    let (name, threads, vectors, pipelined, streaming, speculative, prefetch_tiles) = SWEEP[index];
    let tuning = ScanTuning {
        threads,
        vectors,
        pipelined,
        streaming,
        speculative,
        prefetch_tiles,
    };
    let n = array_elements(config);
    let stream = bench_stream()?;
    let x = ones::<i32>(&stream, n)?;
    let mut out = GpuArray::<i32>::empty(&stream, &[n])?;
    out.fill(-7)?;
    let scan = InclusiveScanKernel::new(DType::I32, "a + b", "0")?
        .into_kernel()
        .with_tuning(tuning)?;
    let samples = array_device_seconds(&stream, config.device_copy_sampling(), || {
        scan.call(&stream, &x, &mut out)
    })?;
    let host = out.to_vec()?;
    if let Some(bad) = (0..n).find(|&i| host[i] != i as i32 + 1) {
        return Err(crate::cuda::Error(format!(
            "{name}: out[{bad}] = {}, not {}",
            host[bad],
            bad + 1
        )));
    }
    Ok(Measurement::gbps(&samples, 8 * n, n as u64))
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

const SWEEP_RUNS: [fn(&Gpu, &Config) -> Result<Measurement>; 16] =
    sweep_runs!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
