//! Monte Carlo π with rucuda's random numbers (PyCUDA's `pycuda.curandom`): uniform
//! points in the unit square from a Philox4x32-10 generator, the fraction inside the
//! quarter circle counted by a reduction. Checked against the statistical error bound.
//!
//! Run: `cargo run -p rucuda --example monte_carlo_pi`

mod common;

use rucuda::array::reduction::ReductionKernel;
use rucuda::array::DType;
use rucuda::prelude::*;
use rucuda::rand::{Philox4x32_10, RandomGenerator};

fn main() {
    common::main("monte_carlo_pi", true, run);
}

fn run() -> common::ExampleResult {
    let ctx = autoprimaryctx()?;
    let stream = Stream::new(ctx, StreamFlags::NON_BLOCKING)?;
    let seed = common::fresh_seed();
    let mut generator = Philox4x32_10::new(ctx, seed)?;
    let points = 1usize << 26;
    let xs: GpuArray<f32> = generator.gen_uniform(&[points], &stream)?;
    let ys: GpuArray<f32> = generator.gen_uniform(&[points], &stream)?;
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let inside_kernel = unsafe {
        ReductionKernel::new(
            DType::U64,
            "0",
            "a+b",
            "(unsigned long long)(x[i]*x[i] + y[i]*y[i] <= 1.0f)",
            "const float *x, const float *y",
            "inside_quarter_circle",
        )
    }?;
    let inside: u64 = inside_kernel.call_to_host(&stream, &[(&xs).into(), (&ys).into()])?;
    let p = inside as f64 / points as f64;
    let pi = 4.0 * p;
    // Binomial standard error of the estimate: 4 * sqrt(p(1-p)/N).
    let sigma = 4.0 * (p * (1.0 - p) / points as f64).sqrt();
    println!(
        "{points} points, {inside} inside: pi ≈ {pi:.6} (± {sigma:.6}), error {:.2e}",
        (pi - std::f64::consts::PI).abs()
    );
    // A spot check of the generator's values on the host: all in (0, 1].
    let sample = xs.to_vec()?;
    if sample.iter().any(|v| !(*v > 0.0 && *v <= 1.0)) {
        return Err(common::fail("a uniform sample is outside (0, 1]"));
    }
    if (pi - std::f64::consts::PI).abs() > 6.0 * sigma {
        return Err(common::fail(format!(
            "pi estimate {pi} is more than 6 sigma from π"
        )));
    }
    println!("monte_carlo_pi: OK");
    Ok(())
}
