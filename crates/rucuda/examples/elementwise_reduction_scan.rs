//! The three kernel generators on one array: an `ElementwiseKernel` (PyCUDA's
//! `pycuda.elementwise`), a `ReductionKernel` (`pycuda.reduction`) and an
//! `InclusiveScanKernel` (`pycuda.scan`), each checked against the CPU in float64.
//!
//! Run: `cargo run -p rucuda --example elementwise_reduction_scan`

mod common;

use rucuda::array::reduction::ReductionKernel;
use rucuda::array::scan::InclusiveScanKernel;
use rucuda::array::DType;
use rucuda::prelude::*;

fn main() {
    common::main("elementwise_reduction_scan", true, run);
}

fn run() -> common::ExampleResult {
    let ctx = autoprimaryctx()?;
    let stream = Stream::new(ctx, StreamFlags::NON_BLOCKING)?;
    let n = 1_000_003;
    let seed = common::fresh_seed();
    let x = common::random_f32(n, seed);
    let y = common::random_f32(n, seed ^ 0x5eed);
    let x_gpu = GpuArray::from_slice(&stream, &x)?;
    let y_gpu = GpuArray::from_slice(&stream, &y)?;

    // Elementwise: z = a*x + y, written as PyCUDA writes it.
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let axpy = unsafe {
        ElementwiseKernel::new(
            "float a, const float *x, const float *y, float *z",
            "z[i] = a * x[i] + y[i]",
            "axpy",
        )
    }?;
    let mut z_gpu = GpuArray::<f32>::full(&stream, &[n], f32::NAN)?;
    let a = 2.5f32;
    axpy.call(
        &stream,
        &[
            a.into(),
            (&x_gpu).into(),
            (&y_gpu).into(),
            (&mut z_gpu).into(),
        ],
    )?;
    let z = z_gpu.to_vec()?;
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| a * x + y).collect();
    let worst = common::compare("a*x + y", &z, &want, 1e-6)?;
    println!("elementwise a*x + y over {n} elements: largest difference {worst:e}");

    // Reduction: the dot product of x and y (map x[i]*y[i], reduce a+b).
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let dot = unsafe {
        ReductionKernel::new(
            DType::F64,
            "0",
            "a+b",
            "(double)x[i]*y[i]",
            "const float *x, const float *y",
            "dot",
        )
    }?;
    let got: f64 = dot.call_to_host(&stream, &[(&x_gpu).into(), (&y_gpu).into()])?;
    let want: f64 = x
        .iter()
        .zip(&y)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    println!("reduction dot(x, y) = {got:.9} (CPU {want:.9})");
    if (got - want).abs() > 1e-9 * n as f64 {
        return Err(common::fail(format!("dot: {got} vs {want}")));
    }

    // Scan: the running sum of z, in place.
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let cumsum = unsafe { InclusiveScanKernel::new(DType::F32, "a+b", "0") }?;
    cumsum.call_in_place(&stream, &mut z_gpu)?;
    let prefix = z_gpu.to_vec()?;
    let mut running = 0f64;
    let mut worst = 0f64;
    let mut bound = 0f64;
    for (i, v) in z.iter().enumerate() {
        running += f64::from(*v);
        bound += f64::from(v.abs());
        let diff = (f64::from(prefix[i]) - running).abs();
        // Rounding of a float32 prefix grows with the sum of magnitudes so far.
        if diff > 4.0 * f64::from(f32::EPSILON) * bound.max(1.0) * (i as f64 + 1.0).log2().max(1.0)
        {
            return Err(common::fail(format!(
                "scan: element {i} is {}, expected {running}",
                prefix[i]
            )));
        }
        worst = worst.max(diff);
    }
    println!(
        "inclusive scan of {n} elements: largest difference from the float64 prefix {worst:e}"
    );
    println!("elementwise_reduction_scan: OK");
    Ok(())
}
