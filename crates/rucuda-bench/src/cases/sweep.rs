//! Bandwidth against size, for the report's plots: the elementwise saxpy, the f32 sum,
//! the int32 inclusive scan and Philox uniform floats, each at 2^16, 2^18, ..., 2^28
//! elements (2^16 to 2^24 with `--quick`). Device time by events, medians; the same byte
//! counts as the single-size cases. CuPy's peer script measures the same sweeps.

use rucuda_array::elementwise::ElementwiseKernel;
use rucuda_array::scan::InclusiveScanKernel;
use rucuda_array::GpuArray;
use rucuda_driver::DeviceBuffer;
use rucuda_rand::{Philox4x32_10, RandomGenerator};

use super::reduce::{array_device_seconds, bench_stream, ones};
use super::{rucuda_context, Case, RUCUDA};
use crate::config::Config;
use crate::cuda::{Gpu, Result};
use crate::harness::{Measurement, Sampling};

/// Registers the sweeps.
pub fn register(cases: &mut Vec<Case>) {
    for (name, run) in [
        (
            "saxpy_sweep_GBps",
            saxpy_sweep as fn(&Gpu, &Config) -> Result<Measurement>,
        ),
        ("sum_f32_sweep_GBps", sum_sweep),
        ("scan_incl_i32_sweep_GBps", scan_sweep),
        ("rand_uniform_f32_philox_sweep_GSps", rand_sweep),
    ] {
        cases.push(Case {
            name,
            lib: RUCUDA,
            run,
        });
    }
}

/// The sizes of a sweep, in elements.
pub fn sizes(config: &Config) -> Vec<usize> {
    let top = if config.quick { 24 } else { 28 };
    (16..=top).step_by(2).map(|p| 1usize << p).collect()
}

fn sampling(n: usize) -> Sampling {
    // Small sizes are quick: more samples keep their medians steady.
    Sampling {
        warmup: 3,
        reps: if n <= 1 << 20 { 101 } else { 21 },
    }
}

fn sweep(
    config: &Config,
    mut point: impl FnMut(usize) -> Result<Measurement>,
) -> Result<Measurement> {
    let mut points = Vec::new();
    for n in sizes(config) {
        points.push(point(n)?);
    }
    Ok(Measurement::sweep(points).unwrap_or(Measurement {
        n: 0,
        value: 0.0,
        unit: crate::harness::units::GBPS,
        more: Vec::new(),
    }))
}

fn saxpy_sweep(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let kernel = unsafe {
        ElementwiseKernel::new(
            "float a, const float *x, const float *y, float *z",
            "z[i] = a * x[i] + y[i]",
            "saxpy",
        )
    }?;
    sweep(config, |n| {
        let stream = bench_stream()?;
        let (x, y) = (ones::<f32>(&stream, n)?, ones::<f32>(&stream, n)?);
        let mut z = GpuArray::<f32>::empty(&stream, &[n])?;
        let samples = array_device_seconds(&stream, sampling(n), || {
            kernel.call(
                &stream,
                &[2.0f32.into(), (&x).into(), (&y).into(), (&mut z).into()],
            )
        })?;
        Ok(Measurement::gbps(&samples, 12 * n, n as u64))
    })
}

fn sum_sweep(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    sweep(config, |n| {
        let stream = bench_stream()?;
        let x = ones::<f32>(&stream, n)?;
        let samples = array_device_seconds(&stream, sampling(n), || x.sum().map(drop))?;
        Ok(Measurement::gbps(&samples, 4 * n, n as u64))
    })
}

fn scan_sweep(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let scan = unsafe { InclusiveScanKernel::new(rucuda_array::DType::I32, "a + b", "0") }?;
    sweep(config, |n| {
        let stream = bench_stream()?;
        let x = ones::<i32>(&stream, n)?;
        let mut out = GpuArray::<i32>::empty(&stream, &[n])?;
        let samples =
            array_device_seconds(&stream, sampling(n), || scan.call(&stream, &x, &mut out))?;
        Ok(Measurement::gbps(&samples, 8 * n, n as u64))
    })
}

fn rand_sweep(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let mut generator = Philox4x32_10::new(&ctx, 1234)?;
    sweep(config, |n| {
        let stream = bench_stream()?;
        let mut out = DeviceBuffer::<f32>::uninit(&ctx, n)?;
        let samples = super::rucuda_device_seconds(&stream, sampling(n), || {
            generator
                .fill_uniform(&mut out, &stream)
                .map_err(|e| rucuda_driver::Error::InvalidArgument(e.to_string()))
        })?;
        Ok(Measurement::gsps(&samples, n, n as u64))
    })
}
