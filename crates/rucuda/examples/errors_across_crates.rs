//! One error type for a whole program: `fn main() -> rucuda::Result<()>` and `?` on calls
//! of the driver, jit, array and rand crates, each with its own error type, which
//! `rucuda::Error` takes through `From`.
//!
//! Run: `cargo run -p rucuda --example errors_across_crates`
//!
//! Without a GPU (or without NVRTC) the first call that needs one fails, and `main`
//! returns the error: Rust prints it (`rucuda::Error`'s `Debug` is its message, which
//! names the call and says what to install, then its causes) and the exit status is 1.

use rucuda::driver::{Device, DeviceBuffer, Stream};
use rucuda::jit::{CompileOptions, SourceModule};
use rucuda::prelude::{GpuArray, LaunchConfig};
use rucuda::rand::{Philox4x32_10, RandomGenerator};

const SCALE: &str = r#"
extern "C" __global__ void scale(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}"#;

fn main() -> rucuda::Result<()> {
    // rucuda::driver::Error
    let ctx = Device::get(0)?.primary_context()?;
    ctx.bind()?;
    let stream = Stream::null(&ctx);

    // rucuda::jit::Error (and the driver's, when loading the module)
    let module = SourceModule::for_context(&ctx, SCALE, &CompileOptions::new())?;
    let scale = module.function("scale")?;

    // rucuda::rand::Error
    let mut generator = Philox4x32_10::new(&ctx, 42)?;
    let x: GpuArray<f32> = generator.gen_uniform(&[1000], &stream)?;

    // rucuda::array::ArrayError
    let before = x.sum()?.to_vec()?[0];
    let mut raw = DeviceBuffer::from_slice(&ctx, &x.to_vec()?)?;
    // SAFETY: scale(float *x, float a, int n) touches x[0..n), and `raw` holds n floats.
    unsafe {
        scale.launch(
            LaunchConfig::for_elements(1000, 256),
            &stream,
            (&mut raw, 2.0f32, 1000i32),
        )?
    };
    let after: f32 = raw.to_vec()?.iter().sum();
    println!("sum before {before}, after scaling by 2: {after}");
    Ok(())
}
