//! Array kernels through rucuda-array on 2^28 elements (2^24 with `--quick`): the
//! ElementwiseKernel saxpy and the reductions. Device time by events on the arrays' stream
//! (each timed call includes what a user's call does: the result's stream-ordered
//! allocation, both reduction stages), median after warm-up. Bandwidth counts the fewest
//! bytes the operation must move: saxpy 12 B per element (two reads, one write), sum and
//! max 4 (one read), dot 8 (two reads), the f64 sum 8. The axis sums
//! (`sum_axis0_f32_GBps`, `sum_axis1_f32_GBps`) reduce a square `f32` array of as many
//! elements (16384 x 16384) over its strided and its contiguous axis, counting the
//! input's and the output's bytes.

use rucuda_array::elementwise::ElementwiseKernel;
use rucuda_array::reduction::ReductionKernel;
use rucuda_array::{DType, Element, GpuArray};
use rucuda_driver::{Stream, StreamFlags};

use super::{rucuda_context, Case, RUCUDA};
use crate::config::Config;
use crate::cuda::{Gpu, Result};
use crate::harness::{Measurement, Sampling};

/// Registers the saxpy and reduction cases (rucuda; CuPy and CUB come from the peers).
pub fn register(cases: &mut Vec<Case>) {
    for (name, run) in [
        (
            "saxpy_GBps",
            rucuda_saxpy as fn(&Gpu, &Config) -> Result<Measurement>,
        ),
        ("sum_f32_GBps", rucuda_sum_f32),
        (
            "reductionkernel_sum_f32_GBps",
            rucuda_reductionkernel_sum_f32,
        ),
        ("dot_f32_GBps", rucuda_dot_f32),
        ("max_f32_GBps", rucuda_max_f32),
        ("sum_f64_GBps", rucuda_sum_f64),
        ("sum_axis0_f32_GBps", rucuda_sum_axis0_f32),
        ("sum_axis1_f32_GBps", rucuda_sum_axis1_f32),
    ] {
        cases.push(Case {
            name,
            lib: RUCUDA,
            run,
        });
    }
}

/// Elements of the array cases: 2^28, or 2^24 with `--quick` (the peers use the same).
pub fn array_elements(config: &Config) -> usize {
    if config.quick {
        1 << 24
    } else {
        1 << 28
    }
}

/// Device seconds of each timed `enqueue` (work queued on `stream`), like
/// [`super::rucuda_device_seconds`] for calls that return rucuda-array's errors.
pub fn array_device_seconds(
    stream: &Stream,
    sampling: Sampling,
    mut enqueue: impl FnMut() -> rucuda_array::Result<()>,
) -> Result<Vec<f64>> {
    use rucuda_driver::{Event, EventFlags};
    let ctx = stream.context();
    let (start, end) = (
        Event::new(ctx, EventFlags::DEFAULT)?,
        Event::new(ctx, EventFlags::DEFAULT)?,
    );
    for _ in 0..sampling.warmup.max(1) {
        enqueue()?;
    }
    stream.synchronize()?;
    let mut samples = Vec::with_capacity(sampling.reps);
    for _ in 0..sampling.reps {
        start.record(stream)?;
        enqueue()?;
        end.record(stream)?;
        end.synchronize()?;
        samples.push(f64::from(end.time_since(&start)?) / 1e3);
    }
    Ok(samples)
}

/// A non-blocking stream on the bench's context.
pub fn bench_stream() -> Result<Stream> {
    Ok(Stream::new(&rucuda_context()?, StreamFlags::NON_BLOCKING)?)
}

/// `n` ones (any bits would do for timing; ones keep the arithmetic ordinary).
pub fn ones<T: Element>(stream: &Stream, n: usize) -> Result<GpuArray<T>> {
    Ok(GpuArray::<T>::ones(stream, &[n])?)
}

fn rucuda_saxpy(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let n = array_elements(config);
    let stream = bench_stream()?;
    let x = ones::<f32>(&stream, n)?;
    let y = ones::<f32>(&stream, n)?;
    let mut z = GpuArray::<f32>::empty(&stream, &[n])?;
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let saxpy = unsafe {
        ElementwiseKernel::new(
            "float a, const float *x, const float *y, float *z",
            "z[i] = a * x[i] + y[i]",
            "saxpy",
        )
    }?;
    let samples = array_device_seconds(&stream, config.device_copy_sampling(), || {
        saxpy.call(
            &stream,
            &[2.0f32.into(), (&x).into(), (&y).into(), (&mut z).into()],
        )
    })?;
    Ok(Measurement::gbps(&samples, 12 * n, n as u64))
}

/// Times `op` on `n` ones of `T`, counting `bytes_per_element`.
fn time_unary<T: Element, R>(
    config: &Config,
    bytes_per_element: usize,
    op: impl Fn(&GpuArray<T>) -> rucuda_array::Result<R>,
) -> Result<Measurement> {
    let n = array_elements(config);
    let stream = bench_stream()?;
    let x = ones::<T>(&stream, n)?;
    let samples =
        array_device_seconds(&stream, config.device_copy_sampling(), || op(&x).map(drop))?;
    Ok(Measurement::gbps(&samples, bytes_per_element * n, n as u64))
}

fn rucuda_sum_f32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    time_unary::<f32, _>(config, 4, GpuArray::sum)
}

fn rucuda_max_f32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    time_unary::<f32, _>(config, 4, GpuArray::max)
}

fn rucuda_sum_f64(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    time_unary::<f64, _>(config, 8, GpuArray::sum)
}

/// The side of the square array of the axis cases (`2^14` for `2^28` elements).
pub fn axis_side(config: &Config) -> usize {
    1 << (array_elements(config).trailing_zeros() / 2)
}

/// `sum_axes(&[axis])` of a square `f32` array of ones.
fn time_axis_sum(config: &Config, axis: isize) -> Result<Measurement> {
    let side = axis_side(config);
    let stream = bench_stream()?;
    let x = GpuArray::<f32>::ones(&stream, &[side, side])?;
    let samples = array_device_seconds(&stream, config.device_copy_sampling(), || {
        x.sum_axes(&[axis], false).map(drop)
    })?;
    Ok(Measurement::gbps(
        &samples,
        4 * side * side + 4 * side,
        (side * side) as u64,
    ))
}

fn rucuda_sum_axis0_f32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    time_axis_sum(config, 0)
}

fn rucuda_sum_axis1_f32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    time_axis_sum(config, 1)
}

fn rucuda_reductionkernel_sum_f32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let kernel =
        unsafe { ReductionKernel::new(DType::F32, "0", "a+b", "x[i]", "const float *x", "sum") }?;
    time_unary::<f32, _>(config, 4, |x| kernel.call::<f32>(x.stream(), &[x.into()]))
}

fn rucuda_dot_f32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let n = array_elements(config);
    let stream = bench_stream()?;
    let x = ones::<f32>(&stream, n)?;
    let y = ones::<f32>(&stream, n)?;
    let samples = array_device_seconds(&stream, config.device_copy_sampling(), || {
        x.dot(&y).map(drop)
    })?;
    Ok(Measurement::gbps(&samples, 8 * n, n as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_array_cases_are_registered_once() {
        let cases = super::super::registry();
        for name in [
            "saxpy_GBps",
            "sum_f32_GBps",
            "reductionkernel_sum_f32_GBps",
            "dot_f32_GBps",
            "max_f32_GBps",
            "sum_f64_GBps",
            "sum_axis0_f32_GBps",
            "sum_axis1_f32_GBps",
            "scan_incl_i32_GBps",
            "scan_incl_f32_GBps",
            "scan_incl_i64_GBps",
        ] {
            let n = cases
                .iter()
                .filter(|c| c.name == name && c.lib == RUCUDA)
                .count();
            assert_eq!(n, 1, "{name}");
        }
    }
}
