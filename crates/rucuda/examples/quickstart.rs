//! PyCUDA's classic first program, in Rust: compile `multiply_them` from CUDA C at run
//! time, run it on two random host vectors (copied in and out for the call, like
//! PyCUDA's `drv.In` / `drv.Out`), then double a GpuArray with an ElementwiseKernel. Both
//! results are checked on the CPU.
//!
//! Run: `cargo run -p rucuda --example quickstart`
//!
//! Needs a CUDA driver and NVRTC (the CUDA toolkit, or `pip install
//! nvidia-cuda-nvrtc==13.0.*`); where either is missing it says what to install and
//! exits 1.

mod common;

use rucuda::driver::HostArgs;
use rucuda::prelude::*;

const SOURCE: &str = include_str!("kernels/multiply_them.cu");

fn main() {
    common::main("quickstart", true, run);
}

fn run() -> common::ExampleResult {
    // `import pycuda.autoinit`: a context on the first usable device (CUDA_DEVICE,
    // ~/.cuda-device, or each device in turn).
    let ctx = autoinit()?;
    let (major, minor) = ctx.device.compute_capability()?;
    println!(
        "device {}: {} (sm_{major}{minor}), CUDA driver {}",
        ctx.device.ordinal(),
        ctx.device.name()?,
        rucuda::driver::driver_version()?
    );

    // `mod = SourceModule(...)`: compiled by NVRTC for this device, cached on disk.
    let module = SourceModule::for_context(ctx, SOURCE, &CompileOptions::new())?;
    println!(
        "compiled multiply_them for {} (cache: {:?})",
        module.compiled().arch,
        module.compiled().cache
    );
    let multiply_them = module.function("multiply_them")?;

    let n = 400;
    let seed = common::fresh_seed();
    let a = common::random_f32(n, seed);
    let b = common::random_f32(n, seed ^ 0x5eed);
    let mut dest = vec![f32::NAN; n];

    // `multiply_them(drv.Out(dest), drv.In(a), drv.In(b), block=(400,1,1), grid=(1,1))`
    let stream = Stream::null(ctx);
    let args = HostArgs::new(&stream).output(&mut dest).input(&a).input(&b);
    // SAFETY: multiply_them(float *dest, const float *a, const float *b) touches element
    // threadIdx.x of each; one block of n threads, and every array holds n elements.
    unsafe { multiply_them.call_with_host_args(LaunchConfig::linear(1, n as u32), args)? };

    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    let worst = common::compare("dest - a*b", &dest, &want, 1e-6)?;
    println!("dest - a*b: largest difference {worst:e} over {n} elements");

    // The GpuArray half: `a_gpu = gpuarray.to_gpu(a); a_doubled = (2 * a_gpu).get()`.
    let host: Vec<f32> = common::random_f32(16, seed ^ 0xd0b1e);
    let a_gpu = GpuArray::from_shape_slice(&stream, &[4, 4], &host)?;
    let mut doubled = GpuArray::<f32>::empty_like(&a_gpu)?;
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let twice = unsafe {
        ElementwiseKernel::new(
            "const float *a, float *out",
            "out[i] = 2.0f * a[i]",
            "twice",
        )
    }?;
    twice.call(&stream, &[(&a_gpu).into(), (&mut doubled).into()])?;
    let got = doubled.to_ndarray()?;
    println!("a:\n{}\n2 * a:\n{got}", a_gpu.to_ndarray()?);
    let want: Vec<f32> = host.iter().map(|x| 2.0 * x).collect();
    common::compare("2 * a", &doubled.to_vec()?, &want, 0.0)?;

    println!("quickstart: OK");
    Ok(())
}
