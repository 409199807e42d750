//! Texture sampling with linear filtering: a random image goes into a 2D CUDA array, a
//! texture object reads it with bilinear filtering and clamped addressing, and a kernel
//! samples it at random points (some outside the image). Texture objects replace
//! PyCUDA's texture references (`get_texref`, `set_array`, `set_filter_mode`), which CUDA
//! removed; the handle is an ordinary kernel argument.
//!
//! The CPU check models the hardware: texel centers at `i + 0.5`, weights with 8
//! fractional bits, edges clamped. Samples at texel centers must be exact.
//!
//! Run: `cargo run -p rucuda --example texture_sampling`

mod common;

use rucuda::driver::{matrix_to_array, AddressMode, FilterMode, Order, ReadMode};
use rucuda::prelude::*;

const SOURCE: &str = include_str!("kernels/texture_sample.cu");
const WIDTH: usize = 96;
const HEIGHT: usize = 64;

fn main() {
    common::main("texture_sampling", true, run);
}

fn run() -> common::ExampleResult {
    let ctx = autoprimaryctx()?;
    let module = SourceModule::for_context(ctx, SOURCE, &CompileOptions::new())?;
    let sample = module.function("texture_sample")?;

    let seed = common::fresh_seed();
    let image = common::random_f32(WIDTH * HEIGHT, seed);
    // Row-major [HEIGHT][WIDTH]: tex2D(x, y) reads image[y][x].
    let array = matrix_to_array(ctx, &image, [HEIGHT, WIDTH], Order::C)?;
    let texture = TextureObject::from_array(
        &array,
        &TextureDescriptor::new()
            .filter_mode(FilterMode::Linear)
            .address_mode(AddressMode::Clamp)
            .read_mode(ReadMode::ElementType)
            .normalized_coordinates(false),
    )?;

    // Random points over the image and a margin around it, then every texel center.
    let random = common::random_f32(2 * 20_000, seed ^ 0x7e);
    let mut xs: Vec<f32> = random[..20_000]
        .iter()
        .map(|r| (r + 1.0) / 2.0 * (WIDTH as f32 + 4.0) - 2.0)
        .collect();
    let mut ys: Vec<f32> = random[20_000..]
        .iter()
        .map(|r| (r + 1.0) / 2.0 * (HEIGHT as f32 + 4.0) - 2.0)
        .collect();
    let random_points = xs.len();
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            xs.push(x as f32 + 0.5);
            ys.push(y as f32 + 0.5);
        }
    }
    let n = xs.len();
    let xs_gpu = DeviceBuffer::from_slice(ctx, &xs)?;
    let ys_gpu = DeviceBuffer::from_slice(ctx, &ys)?;
    let mut out = DeviceBuffer::from_slice(ctx, &vec![f32::NAN; n])?;
    // SAFETY: texture_sample(cudaTextureObject_t, const float *xs, const float *ys,
    // float *out, unsigned n) touches [0, n) of each array; all hold n floats, and the
    // texture object lives until after the launch has been waited for (to_vec).
    unsafe {
        sample.launch(
            LaunchConfig::for_elements(n, 256),
            &Stream::null(ctx),
            (texture.handle(), &xs_gpu, &ys_gpu, &mut out, n as u32),
        )?
    };
    let got = out.to_vec()?;

    // Texel centers: exact.
    common::compare(
        "samples at texel centers",
        &got[random_points..],
        &image,
        0.0,
    )?;
    // Anywhere else: bilinear with 8-bit weights. Rounding the weights either way moves
    // a result by at most 1/256 of the largest step between neighbours (2 here) per axis.
    let want: Vec<f32> = (0..random_points)
        .map(|i| bilinear(&image, xs[i], ys[i]))
        .collect();
    let worst = common::compare(
        "random samples",
        &got[..random_points],
        &want,
        2.0 * 2.0 / 256.0,
    )?;
    println!(
        "{WIDTH}x{HEIGHT} image: {} texel centers exact, {random_points} random samples within {worst:.2e} of the CPU model",
        WIDTH * HEIGHT
    );
    let (x, y) = (xs[0], ys[0]);
    println!(
        "e.g. tex2D({x:.3}, {y:.3}) = {:.5} (CPU model {:.5})",
        got[0], want[0]
    );
    println!("texture_sampling: OK");
    Ok(())
}

/// What linear filtering with clamped addressing returns at `(x, y)`: the four texels
/// around `(x - 0.5, y - 0.5)`, weighted by its fractional parts rounded to 1/256.
fn bilinear(image: &[f32], x: f32, y: f32) -> f32 {
    let texel = |i: i64, j: i64| {
        let i = i.clamp(0, WIDTH as i64 - 1) as usize;
        let j = j.clamp(0, HEIGHT as i64 - 1) as usize;
        f64::from(image[j * WIDTH + i])
    };
    let (xb, yb) = (f64::from(x) - 0.5, f64::from(y) - 0.5);
    let (i, j) = (xb.floor(), yb.floor());
    let a = ((xb - i) * 256.0).round() / 256.0;
    let b = ((yb - j) * 256.0).round() / 256.0;
    let (i, j) = (i as i64, j as i64);
    let value = (1.0 - a) * (1.0 - b) * texel(i, j)
        + a * (1.0 - b) * texel(i + 1, j)
        + (1.0 - a) * b * texel(i, j + 1)
        + a * b * texel(i + 1, j + 1);
    value as f32
}
