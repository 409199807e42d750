//! GPU tests of CUDA arrays and what reads and writes them, one file per topic: `arrays`
//! (descriptors, round trips, copies, surfaces), `memcpy` (the structured 2D and 3D copies)
//! and `textures` (texture objects). Kernels: `tests/kernels/textures.cu` (compiled to the
//! committed `textures.ptx`).
//!
//! Every test uses fresh random data, poisons what the GPU writes before it writes it,
//! and compares with a CPU reference.

#[path = "../common/mod.rs"]
mod common;

mod arrays;
mod memcpy;
mod textures;

use common::module;
use rucuda_driver::*;

const PTX: &str = include_str!("../kernels/textures.ptx");
const POISON_U32: u32 = 0xDEAD_BEEF;

/// NumPy's `a.flatten(order="F")` of the C-ordered block `data` of `shape`: the memory
/// of an array PyCUDA makes in F order (the CPU reference of the reordering).
fn fortran<T: Copy>(data: &[T], shape: &[usize]) -> Vec<T> {
    let n = data.len();
    (0..n)
        .map(|f| {
            // Decompose the Fortran index (first axis fastest), recompose a C index.
            let (mut rest, mut c) = (f, 0);
            let mut idx = vec![0; shape.len()];
            for (k, &s) in shape.iter().enumerate() {
                idx[k] = rest % s;
                rest /= s;
            }
            for (k, &s) in shape.iter().enumerate() {
                c = c * s + idx[k];
            }
            data[c]
        })
        .collect()
}

fn poisoned_f32(ctx: &Context, n: usize) -> DeviceBuffer<f32> {
    DeviceBuffer::from_slice(ctx, &vec![f32::NAN; n]).expect("allocate output")
}

fn launch_2d(w: usize, h: usize) -> LaunchConfig {
    LaunchConfig {
        grid: (w.div_ceil(16) as u32, h.div_ceil(16) as u32, 1),
        block: (16, 16, 1),
        shared_mem_bytes: 0,
    }
}

/// Samples a 2D texture at `(xs[i], ys[i])` with `tex2d_sample`.
fn sample_2d(ctx: &Context, tex: &TextureObject<'_>, xs: &[f32], ys: &[f32]) -> Vec<f32> {
    let m = module(ctx, PTX);
    let f = m.function("tex2d_sample").expect("tex2d_sample");
    let n = xs.len();
    let dx = DeviceBuffer::from_slice(ctx, xs).expect("xs");
    let dy = DeviceBuffer::from_slice(ctx, ys).expect("ys");
    let mut out = poisoned_f32(ctx, n);
    // SAFETY: tex2d_sample(tex, xs, ys, out, n) reads xs[0..n), ys[0..n), writes out[0..n).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 128),
            &Stream::null(ctx),
            (tex.handle(), &dx, &dy, &mut out, n as u32),
        )
    }
    .expect("launch tex2d_sample");
    out.to_vec().expect("read samples")
}

/// Texel-centre coordinates (unnormalized) of every element of a `w` x `h` grid.
fn centres(w: usize, h: usize) -> (Vec<f32>, Vec<f32>) {
    let mut xs = Vec::with_capacity(w * h);
    let mut ys = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            xs.push(x as f32 + 0.5);
            ys.push(y as f32 + 0.5);
        }
    }
    (xs, ys)
}
