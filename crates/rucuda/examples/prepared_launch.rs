//! A custom kernel launched the prepared way (PyCUDA's `Function.prepare` and
//! `prepared_call` / `prepared_timed_call`): the launch shape and the argument layout are
//! checked once, each later launch only compares the argument sizes. The example times
//! the kernel with events, compares the host cost of checked and prepared launches, shows
//! a mismatched call being refused, and checks the result on the CPU.
//!
//! Run: `cargo run -p rucuda --example prepared_launch`

mod common;

use std::time::Instant;

use rucuda::prelude::*;

const SOURCE: &str = include_str!("kernels/polynomial.cu");

fn main() {
    common::main("prepared_launch", true, run);
}

fn run() -> common::ExampleResult {
    let ctx = autoprimaryctx()?;
    let module = SourceModule::for_context(ctx, SOURCE, &CompileOptions::new())?;
    let polynomial = module.function("polynomial")?;

    let n: usize = 1 << 24;
    let x_host = common::random_f32(n, common::fresh_seed());
    let x = DeviceBuffer::from_slice(ctx, &x_host)?;
    let mut y = DeviceBuffer::<f32>::zeros(ctx, n)?;
    let (a, b, c) = (0.5f32, -1.25f32, 2.0f32);

    // A grid-stride loop: a few blocks per multiprocessor cover any n.
    let sms = DeviceData::new(ctx.device)?.multiprocessors;
    let cfg = LaunchConfig::linear(sms * 8, 256);
    // Argument sizes in bytes, in parameter order: two pointers, three floats, one uint.
    let prepared = polynomial.prepare(cfg, &[8, 8, 4, 4, 4, 4])?;
    let stream = Stream::new(ctx, StreamFlags::NON_BLOCKING)?;

    // `prepared_timed_call`: the kernel's device time, from events around it.
    let mut times = Vec::new();
    for _ in 0..10 {
        // SAFETY: polynomial(const float *x, float *y, float, float, float, unsigned n)
        // touches x[0..n) and y[0..n); both hold n floats.
        let t = unsafe { prepared.launch_timed(&stream, (&x, &mut y, a, b, c, n as u32))? };
        times.push(t);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "polynomial over {n} floats: {:.1} us median of 10, {:.0} GB/s (read + write)",
        median * 1e6,
        (n * 8) as f64 / median / 1e9
    );

    // The host cost of a launch, checked every time or prepared once: measured with a
    // tiny launch (1024 elements), so the device keeps up and the launch queue never
    // fills.
    let small = 1024u32;
    let small_cfg = LaunchConfig::for_elements(small as usize, 256);
    let small_prepared = polynomial.prepare(small_cfg, &[8, 8, 4, 4, 4, 4])?;
    let launches = 500;
    let mut per_launch = [0.0f64; 2];
    for (k, slot) in per_launch.iter_mut().enumerate() {
        stream.synchronize()?;
        let started = Instant::now();
        for _ in 0..launches {
            let args = (&x, &mut y, a, b, c, small);
            // SAFETY: as above, over the first `small` elements.
            unsafe {
                if k == 0 {
                    polynomial.launch(small_cfg, &stream, args)?
                } else {
                    small_prepared.launch(&stream, args)?
                }
            };
        }
        *slot = started.elapsed().as_secs_f64() / f64::from(launches);
    }
    stream.synchronize()?;
    println!(
        "host time per launch: {:.2} us checked, {:.2} us prepared",
        per_launch[0] * 1e6,
        per_launch[1] * 1e6
    );

    // A call whose arguments do not match what was prepared never reaches the driver.
    // SAFETY: refused before launching (a double where a float was prepared).
    let refused = unsafe { prepared.launch(&stream, (&x, &mut y, 0.5f64, b, c, n as u32)) };
    match refused {
        Err(e) => println!("mismatched call refused: {e}"),
        Ok(()) => {
            return Err(common::fail(
                "a call with a double for a float was launched",
            ))
        }
    }

    let got = y.to_vec()?;
    let want: Vec<f32> = x_host.iter().map(|v| (a * v + b) * v + c).collect();
    let worst = common::compare("y", &got, &want, 1e-5)?;
    println!("y = (a x + b) x + c: largest difference {worst:e} over {n} elements");
    println!("prepared_launch: OK");
    Ok(())
}
