//! Random numbers: how many float32 samples per second each generator's fill writes, on
//! 2^28 elements (the size of shared/TARGETS.md's cuRAND figures; 2^24 with `--quick`), device
//! time with events around the fill on a non-blocking stream. Generators keep their default
//! state counts; Sobol32 has one dimension, as cuRAND's host API by default (and 1024 in the
//! `_1024dims` cases, with no peer). The NVIDIA peer
//! (`peers/nvidia_bench.cu`) measures `curandGenerateUniform` / `curandGenerateNormal` on the
//! same sizes; the ratio column is ours over NVIDIA's.
//!
//! The `rand_poisson_u32_*` cases: `fill_poisson` with λ = 1000.25 (cuRAND's rejection
//! method) into 2^26 32-bit counts (2^22 with `--quick`); the NVIDIA peer runs
//! `curandGeneratePoisson`, whose host API draws by another method (its own tables), so
//! that column is a throughput reference, not the same numbers.

use rucuda_driver::{DeviceBuffer, DeviceRepr, Event, EventFlags, Stream, StreamFlags};
use rucuda_rand::{Mrg32k3a, Philox4x32_10, RandElement, RandomGenerator, Sobol32, Xorwow};

use super::{rucuda_context, Case, RUCUDA};
use crate::config::Config;
use crate::cuda::{Gpu, Result};
use crate::harness::{Measurement, Sampling};

/// Registers the random-number cases (rucuda's; NVIDIA's come from the peer).
pub fn register(cases: &mut Vec<Case>) {
    type Run = fn(&Gpu, &Config) -> Result<Measurement>;
    let list: [(&'static str, Run); 13] = [
        ("rand_uniform_f32_philox_GSps", |_, c| {
            run(c, Gen::Philox, false)
        }),
        ("rand_normal_f32_philox_GSps", |_, c| {
            run(c, Gen::Philox, true)
        }),
        ("rand_uniform_f32_xorwow_GSps", |_, c| {
            run(c, Gen::Xorwow, false)
        }),
        ("rand_normal_f32_xorwow_GSps", |_, c| {
            run(c, Gen::Xorwow, true)
        }),
        ("rand_uniform_f32_mrg32k3a_GSps", |_, c| {
            run(c, Gen::Mrg32k3a, false)
        }),
        ("rand_normal_f32_mrg32k3a_GSps", |_, c| {
            run(c, Gen::Mrg32k3a, true)
        }),
        ("rand_uniform_f32_sobol32_GSps", |_, c| {
            run(c, Gen::Sobol32, false)
        }),
        ("rand_normal_f32_sobol32_GSps", |_, c| {
            run(c, Gen::Sobol32, true)
        }),
        ("rand_uniform_f32_sobol32_1024dims_GSps", |_, c| {
            run(c, Gen::Sobol32Dims1024, false)
        }),
        ("rand_normal_f32_sobol32_1024dims_GSps", |_, c| {
            run(c, Gen::Sobol32Dims1024, true)
        }),
        ("rand_poisson_u32_philox_GSps", |_, c| {
            run_poisson(c, Gen::Philox)
        }),
        ("rand_poisson_u32_xorwow_GSps", |_, c| {
            run_poisson(c, Gen::Xorwow)
        }),
        ("rand_poisson_u32_mrg32k3a_GSps", |_, c| {
            run_poisson(c, Gen::Mrg32k3a)
        }),
    ];
    for (name, run) in list {
        cases.push(Case {
            name,
            lib: RUCUDA,
            run,
        });
    }
}

#[derive(Clone, Copy)]
enum Gen {
    Philox,
    Xorwow,
    Mrg32k3a,
    Sobol32,
    /// 1024 dimensions: each thread walks a run of one dimension's points (PyCUDA's Sobol
    /// generators have one dimension per thread).
    Sobol32Dims1024,
}

/// Elements per fill.
fn count(config: &Config) -> usize {
    if config.quick {
        1 << 24
    } else {
        1 << 28
    }
}

fn sampling(config: &Config) -> Sampling {
    if config.quick {
        Sampling { warmup: 1, reps: 5 }
    } else {
        Sampling {
            warmup: 3,
            reps: 20,
        }
    }
}

/// The mean of the Poisson cases: inside cuRAND's rejection method (64 ≤ λ ≤ 4000).
const POISSON_LAMBDA: f64 = 1000.25;

/// Counts per Poisson fill.
fn poisson_count(config: &Config) -> usize {
    if config.quick {
        1 << 22
    } else {
        1 << 26
    }
}

/// One fill of `out` on `stream`.
type Fill<G, T> = fn(&mut G, &mut DeviceBuffer<T>, &Stream) -> rucuda_rand::Result<()>;

fn run(config: &Config, which: Gen, normal: bool) -> Result<Measurement> {
    fn fill<G: RandomGenerator, const NORMAL: bool>(
        g: &mut G,
        out: &mut DeviceBuffer<f32>,
        stream: &Stream,
    ) -> rucuda_rand::Result<()> {
        if NORMAL {
            g.fill_normal(out, stream)
        } else {
            g.fill_uniform(out, stream)
        }
    }
    fn timed<G: RandomGenerator>(g: &mut G, config: &Config, normal: bool) -> Result<Measurement> {
        let f: Fill<G, f32> = if normal {
            fill::<G, true>
        } else {
            fill::<G, false>
        };
        time(g, config, count(config), f)
    }
    let ctx = rucuda_context()?;
    let seed = 1234;
    match which {
        Gen::Philox => timed(&mut Philox4x32_10::new(&ctx, seed)?, config, normal),
        Gen::Xorwow => timed(&mut Xorwow::new(&ctx, seed)?, config, normal),
        Gen::Mrg32k3a => timed(&mut Mrg32k3a::new(&ctx, seed)?, config, normal),
        Gen::Sobol32 => timed(&mut Sobol32::new(&ctx, 1, 0)?, config, normal),
        Gen::Sobol32Dims1024 => timed(&mut Sobol32::new(&ctx, 1024, 0)?, config, normal),
    }
}

fn run_poisson(config: &Config, which: Gen) -> Result<Measurement> {
    fn fill<G: RandomGenerator>(
        g: &mut G,
        out: &mut DeviceBuffer<u32>,
        stream: &Stream,
    ) -> rucuda_rand::Result<()> {
        g.fill_poisson(out, POISSON_LAMBDA, stream)
    }
    let ctx = rucuda_context()?;
    let seed = 1234;
    let n = poisson_count(config);
    match which {
        Gen::Philox => time(&mut Philox4x32_10::new(&ctx, seed)?, config, n, fill),
        Gen::Xorwow => time(&mut Xorwow::new(&ctx, seed)?, config, n, fill),
        Gen::Mrg32k3a => time(&mut Mrg32k3a::new(&ctx, seed)?, config, n, fill),
        Gen::Sobol32 | Gen::Sobol32Dims1024 => unreachable!("no Poisson case for Sobol"),
    }
}

/// Samples per second of `fill` into `n` elements of `T`.
fn time<G: RandomGenerator, T: RandElement + DeviceRepr>(
    g: &mut G,
    config: &Config,
    n: usize,
    fill: Fill<G, T>,
) -> Result<Measurement> {
    let ctx = g.context().clone();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let mut out = DeviceBuffer::<T>::uninit(&ctx, n)?;
    let (start, end) = (
        Event::new(&ctx, EventFlags::DEFAULT)?,
        Event::new(&ctx, EventFlags::DEFAULT)?,
    );
    let sampling = sampling(config);
    for _ in 0..sampling.warmup {
        fill(g, &mut out, &stream)?;
    }
    stream.synchronize()?;
    let mut samples = Vec::with_capacity(sampling.reps);
    for _ in 0..sampling.reps {
        start.record(&stream)?;
        fill(g, &mut out, &stream)?;
        end.record(&stream)?;
        end.synchronize()?;
        samples.push(f64::from(end.time_since(&start)?) / 1e3);
    }
    Ok(Measurement::gsps(&samples, n, n as u64))
}
