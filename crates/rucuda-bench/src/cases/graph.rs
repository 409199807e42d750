//! Launch-bound array code, eager and as a replayed graph (`rucuda_array::graph`): host
//! time per unit of work over a batch followed by one stream synchronize, median over
//! batches, so the device work is included. Each case checks that the graph's result has
//! the eager bits. Libs: `rucuda` (the graph), `rucuda-eager`; CuPy's peer reports `cupy`
//! and `cupy-graph` (`cupy.cuda.Graph` from stream capture).
//!
//! - `graph_chain50_us_per_op`: 50 dependent elementwise operations on 4096 `f32`
//!   (alternately `y * 0.999` and `y + 0.001`, each result a new array), per operation.
//! - `graph_rk4_step_us`: one classic RK4 step of 4096 independent damped, driven
//!   oscillators (`x' = v`, `v' = -k x - c v - d v^3 + e sin(x) cos(v)`), written as array
//!   operators: 74 kernels a step; per step over 10 000 steps (1 000 with `--quick`).
//! - `graph_adam_us`: an Adam update (constant step size) of 200 tensors of 1 Ki to 64 Ki
//!   `f32` (sizes 1 Ki << (i mod 7)) by three `ElementwiseKernel`s per tensor (`m`, `v`,
//!   the parameter), per update.

use rucuda_array::elementwise::ElementwiseKernel;
use rucuda_array::{graph, math, GpuArray, Result as ArrayResult};
use rucuda_driver::Stream;

use super::reduce::bench_stream;
use super::{Case, RUCUDA};
use crate::config::Config;
use crate::cuda::{Error, Gpu, Result};
use crate::harness::{host_seconds, Measurement, Sampling};

/// The eager lib of these cases.
const EAGER: &str = "rucuda-eager";

/// Registers the graph cases.
pub fn register(cases: &mut Vec<Case>) {
    for (name, eager, graphed) in [
        (
            "graph_chain50_us_per_op",
            chain_eager as fn(&Gpu, &Config) -> Result<Measurement>,
            chain_graph as fn(&Gpu, &Config) -> Result<Measurement>,
        ),
        ("graph_rk4_step_us", rk4_eager, rk4_graph),
        ("graph_adam_us", adam_eager, adam_graph),
    ] {
        cases.push(Case {
            name,
            lib: EAGER,
            run: eager,
        });
        cases.push(Case {
            name,
            lib: RUCUDA,
            run: graphed,
        });
    }
}

fn sampling(config: &Config) -> Sampling {
    if config.quick {
        Sampling { warmup: 1, reps: 3 }
    } else {
        Sampling { warmup: 1, reps: 7 }
    }
}

fn same_bits(what: &str, got: &GpuArray<f32>, want: &GpuArray<f32>) -> Result<()> {
    let (g, w) = (got.to_vec()?, want.to_vec()?);
    let differ = g
        .iter()
        .zip(&w)
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    if differ > 0 || g.len() != w.len() {
        return Err(Error(format!(
            "{what}: the graph's result differs from eager execution in {differ} elements"
        )));
    }
    Ok(())
}

// ---- graph_chain50_us_per_op ----

const CHAIN_OPS: usize = 50;
const CHAIN_N: usize = 4096;

fn chain(x: &GpuArray<f32>) -> ArrayResult<GpuArray<f32>> {
    let mut y = (x * 0.999f32)?;
    for i in 1..CHAIN_OPS {
        y = if i % 2 == 0 {
            (&y * 0.999f32)?
        } else {
            (&y + 0.001f32)?
        };
    }
    Ok(y)
}

fn chains_per_batch(config: &Config) -> usize {
    if config.quick {
        20
    } else {
        200
    }
}

fn chain_input(stream: &Stream) -> Result<GpuArray<f32>> {
    Ok(GpuArray::<f32>::arange(stream, 0.0, CHAIN_N as f64, 1.0)?)
}

fn chain_eager(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let x = chain_input(&stream)?;
    let batch = chains_per_batch(config);
    let samples = host_seconds(sampling(config), || {
        for _ in 0..batch {
            drop(chain(&x)?);
        }
        Ok(stream.synchronize()?)
    })?;
    Ok(Measurement::micros_per(
        &samples,
        batch * CHAIN_OPS,
        CHAIN_N as u64,
    ))
}

fn chain_graph(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let x = chain_input(&stream)?;
    let eager = chain(&x)?; // compiles the kernels
    let (g, out) = graph::capture_with(&stream, |_s| chain(&x))?;
    g.upload(&stream)?;
    g.replay(&stream)?;
    same_bits("graph_chain50", &out, &eager)?;
    let batch = chains_per_batch(config);
    let samples = host_seconds(sampling(config), || {
        for _ in 0..batch {
            g.replay(&stream)?;
        }
        Ok(stream.synchronize()?)
    })?;
    Ok(Measurement::micros_per(
        &samples,
        batch * CHAIN_OPS,
        CHAIN_N as u64,
    ))
}

// ---- graph_rk4_step_us ----

const RK4_N: usize = 4096;
const H: f32 = 0.01;
const K: f32 = 1.0;
const C: f32 = 0.1;
const D: f32 = 0.05;
const E: f32 = 0.3;

/// `v' = -k x - c v - d v^3 + e sin(x) cos(v)`: 12 kernels.
fn accel(x: &GpuArray<f32>, v: &GpuArray<f32>) -> ArrayResult<GpuArray<f32>> {
    let a = (x * -K)?;
    let b = (v * C)?;
    let c = (a - &b)?;
    let v2 = (v * v)?;
    let v3 = (v2 * v)?;
    let dv3 = (v3 * D)?;
    let c = (c - &dv3)?;
    let s = math::sin(x)?;
    let co = math::cos(v)?;
    let p = (s * &co)?;
    let q = (p * E)?;
    c + &q
}

/// `base + h * k`: 2 kernels.
fn advance(base: &GpuArray<f32>, k: &GpuArray<f32>, h: f32) -> ArrayResult<GpuArray<f32>> {
    let t = (k * h)?;
    base + &t
}

/// `h/6 (k1 + 2 k2 + 2 k3 + k4)`: 6 kernels.
fn combine(
    k1: &GpuArray<f32>,
    k2: &GpuArray<f32>,
    k3: &GpuArray<f32>,
    k4: &GpuArray<f32>,
) -> ArrayResult<GpuArray<f32>> {
    let t = (k2 * 2.0f32)?;
    let u = (k3 * 2.0f32)?;
    let s = (k1 + &t)?;
    let s = (s + &u)?;
    let s = (s + k4)?;
    s * (H / 6.0)
}

/// One RK4 step of the state, in place: 74 kernels.
fn rk4_step(x: &mut GpuArray<f32>, v: &mut GpuArray<f32>) -> ArrayResult<()> {
    let k1v = accel(x, v)?;
    let k1x = v.view();
    let x2 = advance(x, &k1x, H / 2.0)?;
    let v2 = advance(v, &k1v, H / 2.0)?;
    let k2v = accel(&x2, &v2)?;
    let x3 = advance(x, &v2, H / 2.0)?;
    let v3 = advance(v, &k2v, H / 2.0)?;
    let k3v = accel(&x3, &v3)?;
    let x4 = advance(x, &v3, H)?;
    let v4 = advance(v, &k3v, H)?;
    let k4v = accel(&x4, &v4)?;
    let dx = combine(&k1x, &v2, &v3, &v4)?;
    let dv = combine(&k1v, &k2v, &k3v, &k4v)?;
    drop(k1x);
    x.try_add_assign(&dx)?;
    v.try_add_assign(&dv)
}

fn rk4_steps(config: &Config) -> usize {
    if config.quick {
        1_000
    } else {
        10_000
    }
}

fn rk4_state(stream: &Stream) -> Result<(GpuArray<f32>, GpuArray<f32>)> {
    let x = GpuArray::<f32>::linspace(stream, -1.0, 1.0, RK4_N, true)?;
    let v = GpuArray::<f32>::zeros(stream, &[RK4_N])?;
    Ok((x, v))
}

fn rk4_eager(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let (mut x, mut v) = rk4_state(&stream)?;
    let steps = rk4_steps(config);
    let samples = host_seconds(sampling(config), || {
        for _ in 0..steps {
            rk4_step(&mut x, &mut v)?;
        }
        Ok(stream.synchronize()?)
    })?;
    Ok(Measurement::micros_per(&samples, steps, steps as u64))
}

fn rk4_graph(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let (mut x, mut v) = rk4_state(&stream)?;
    let (mut xe, mut ve) = rk4_state(&stream)?;
    rk4_step(&mut xe, &mut ve)?; // compiles the kernels
    let (x0, v0) = rk4_state(&stream)?;
    xe.copy_from(&x0)?;
    ve.copy_from(&v0)?;
    let g = graph::capture(&stream, |_s| rk4_step(&mut x, &mut v))?;
    g.upload(&stream)?;
    for _ in 0..10 {
        g.replay(&stream)?;
        rk4_step(&mut xe, &mut ve)?;
    }
    same_bits("graph_rk4 x", &x, &xe)?;
    same_bits("graph_rk4 v", &v, &ve)?;
    let steps = rk4_steps(config);
    let samples = host_seconds(sampling(config), || {
        for _ in 0..steps {
            g.replay(&stream)?;
        }
        Ok(stream.synchronize()?)
    })?;
    Ok(Measurement::micros_per(&samples, steps, steps as u64))
}

// ---- graph_adam_us ----

const TENSORS: usize = 200;
const LR: f32 = 1e-3;
const EPS: f32 = 1e-8;
const BETA1: f32 = 0.9;
const BETA2: f32 = 0.999;

struct Adam {
    update_m: ElementwiseKernel,
    update_v: ElementwiseKernel,
    update_p: ElementwiseKernel,
}

struct Tensor {
    p: GpuArray<f32>,
    g: GpuArray<f32>,
    m: GpuArray<f32>,
    v: GpuArray<f32>,
}

impl Adam {
    fn new() -> Result<Adam> {
        // SAFETY: the code touches only element i of each array argument.
        let update_m = unsafe {
            ElementwiseKernel::new(
                "float b, const float *g, float *m",
                "m[i] = b * m[i] + (1.0f - b) * g[i]",
                "bench_adam_m",
            )
        }?;
        // SAFETY: as above.
        let update_v = unsafe {
            ElementwiseKernel::new(
                "float b, const float *g, float *v",
                "v[i] = b * v[i] + (1.0f - b) * g[i] * g[i]",
                "bench_adam_v",
            )
        }?;
        // SAFETY: as above.
        let update_p = unsafe {
            ElementwiseKernel::new(
                "float lr, float eps, const float *m, const float *v, float *p",
                "p[i] -= lr * m[i] / (sqrtf(v[i]) + eps)",
                "bench_adam_p",
            )
        }?;
        Ok(Adam {
            update_m,
            update_v,
            update_p,
        })
    }

    fn step(&self, stream: &Stream, tensors: &mut [Tensor]) -> ArrayResult<()> {
        for t in tensors {
            self.update_m
                .call(stream, &[BETA1.into(), (&t.g).into(), (&mut t.m).into()])?;
            self.update_v
                .call(stream, &[BETA2.into(), (&t.g).into(), (&mut t.v).into()])?;
            self.update_p.call(
                stream,
                &[
                    LR.into(),
                    EPS.into(),
                    (&t.m).into(),
                    (&t.v).into(),
                    (&mut t.p).into(),
                ],
            )?;
        }
        Ok(())
    }
}

fn adam_tensors(stream: &Stream) -> Result<Vec<Tensor>> {
    (0..TENSORS)
        .map(|i| {
            let n = 1024usize << (i % 7);
            Ok(Tensor {
                p: GpuArray::<f32>::linspace(stream, -1.0, 1.0, n, true)?,
                g: GpuArray::<f32>::linspace(stream, 0.5, -0.5, n, true)?,
                m: GpuArray::<f32>::zeros(stream, &[n])?,
                v: GpuArray::<f32>::zeros(stream, &[n])?,
            })
        })
        .collect()
}

fn updates_per_batch(config: &Config) -> usize {
    if config.quick {
        5
    } else {
        20
    }
}

fn adam_eager(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let adam = Adam::new()?;
    let mut tensors = adam_tensors(&stream)?;
    let batch = updates_per_batch(config);
    let samples = host_seconds(sampling(config), || {
        for _ in 0..batch {
            adam.step(&stream, &mut tensors)?;
        }
        Ok(stream.synchronize()?)
    })?;
    Ok(Measurement::micros_per(&samples, batch, TENSORS as u64))
}

fn adam_graph(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let adam = Adam::new()?;
    let mut tensors = adam_tensors(&stream)?;
    let mut eager = adam_tensors(&stream)?;
    adam.step(&stream, &mut eager)?; // compiles the kernels
    let mut fresh = adam_tensors(&stream)?;
    std::mem::swap(&mut eager, &mut fresh);
    drop(fresh);
    let g = graph::capture(&stream, |s| adam.step(s, &mut tensors))?;
    g.upload(&stream)?;
    for _ in 0..3 {
        g.replay(&stream)?;
        adam.step(&stream, &mut eager)?;
    }
    for (t, e) in tensors.iter().zip(&eager).step_by(37) {
        same_bits("graph_adam p", &t.p, &e.p)?;
    }
    let batch = updates_per_batch(config);
    let samples = host_seconds(sampling(config), || {
        for _ in 0..batch {
            g.replay(&stream)?;
        }
        Ok(stream.synchronize()?)
    })?;
    Ok(Measurement::micros_per(&samples, batch, TENSORS as u64))
}
