//! Inclusive scans (`a + b`) through rucuda-array's InclusiveScanKernel on 2^28 elements
//! (2^24 with `--quick`), out of place. Device time by events, including the memset of the
//! look-back status words each call makes; bandwidth counts one read and one write per
//! element (8 B for int32 and float32, 16 for int64).

use rucuda_array::scan::InclusiveScanKernel;
use rucuda_array::{DType, Element, GpuArray};

use super::reduce::{array_device_seconds, array_elements, bench_stream, ones};
use super::{Case, RUCUDA};
use crate::config::Config;
use crate::cuda::{Gpu, Result};
use crate::harness::Measurement;

/// Registers the scan cases (rucuda; CuPy and CUB come from the peers).
pub fn register(cases: &mut Vec<Case>) {
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
