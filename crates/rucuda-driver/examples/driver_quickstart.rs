//! PyCUDA's quickstart in Rust: multiply two random vectors on the GPU and check the
//! result on the CPU. Where there is no CUDA driver, it says what is missing and exits 1.
//!
//! Run: `cargo run -p rucuda-driver --example driver_quickstart`

use rucuda_driver::{Device, DeviceBuffer, ErrorKind, LaunchConfig, Module, Stream};

fn main() {
    match run() {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::NoDriver => {
            eprintln!("driver_quickstart: no usable CUDA driver on this machine.\n  {e}");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("driver_quickstart failed: {e}");
            std::process::exit(1);
        }
    }
}

fn run() -> rucuda_driver::Result<()> {
    let device = Device::get(0)?;
    let (major, minor) = device.compute_capability()?;
    println!(
        "device 0: {} (sm_{major}{minor}), CUDA driver {}",
        device.name()?,
        rucuda_driver::driver_version()?
    );
    let ctx = device.primary_context()?;
    let module = Module::load_data(&ctx, include_str!("kernels/quickstart.ptx").as_bytes())?;
    let multiply_them = module.function("multiply_them")?;

    let n = 400;
    let mut seed = 0x2545_f491_4f6c_dd1du64 ^ std::process::id() as u64;
    let mut random = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let a: Vec<f32> = (0..n).map(|_| random()).collect();
    let b: Vec<f32> = (0..n).map(|_| random()).collect();
    let a_gpu = DeviceBuffer::from_slice(&ctx, &a)?;
    let b_gpu = DeviceBuffer::from_slice(&ctx, &b)?;
    let mut dest = DeviceBuffer::from_slice(&ctx, &vec![f32::NAN; n])?;
    // SAFETY: multiply_them(float* dest, const float* a, const float* b) touches
    // element threadIdx.x of each; the block has n threads and each buffer n elements.
    unsafe {
        multiply_them.launch(
            LaunchConfig::linear(1, n as u32),
            &Stream::null(&ctx),
            (&mut dest, &a_gpu, &b_gpu),
        )?
    };
    let got = dest.to_vec()?;
    let worst = got
        .iter()
        .zip(a.iter().zip(&b))
        .map(|(g, (x, y))| (*g as f64 - *x as f64 * *y as f64).abs())
        .fold(0.0, f64::max);
    println!("dest - a*b: largest difference {worst:e} over {n} elements");
    if worst > 1e-6 {
        return Err(rucuda_driver::Error::InvalidArgument(format!(
            "wrong result: difference {worst}"
        )));
    }
    println!("driver_quickstart: OK");
    Ok(())
}
