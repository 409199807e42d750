//! Random numbers: how many float32 samples per second each generator's fill writes, on
//! 2^28 elements (the size of shared/TARGETS.md's cuRAND figures; 2^24 with `--quick`), device
//! time with events around the fill on a non-blocking stream. Generators keep their default
//! state counts; Sobol32 has one dimension, as cuRAND's host API by default (and 1024 in the
//! `_1024dims` cases, with no peer). The NVIDIA peer
//! (`peers/nvidia_bench.cu`) measures `curandGenerateUniform` / `curandGenerateNormal` on the
//! same sizes; the ratio column is ours over NVIDIA's.

use rucuda_driver::{DeviceBuffer, Event, EventFlags, Stream, StreamFlags};
use rucuda_rand::{Mrg32k3a, Philox4x32_10, RandomGenerator, Sobol32, Xorwow};

use super::{rucuda_context, Case, RUCUDA};
use crate::config::Config;
use crate::cuda::{Gpu, Result};
use crate::harness::{Measurement, Sampling};

/// Registers the random-number cases (rucuda's; NVIDIA's come from the peer).
pub fn register(cases: &mut Vec<Case>) {
    type Run = fn(&Gpu, &Config) -> Result<Measurement>;
    let list: [(&'static str, Run); 10] = [
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

fn run(config: &Config, which: Gen, normal: bool) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let seed = 1234;
    match which {
        Gen::Philox => time(&mut Philox4x32_10::new(&ctx, seed)?, config, normal),
        Gen::Xorwow => time(&mut Xorwow::new(&ctx, seed)?, config, normal),
        Gen::Mrg32k3a => time(&mut Mrg32k3a::new(&ctx, seed)?, config, normal),
        Gen::Sobol32 => time(&mut Sobol32::new(&ctx, 1, 0)?, config, normal),
        Gen::Sobol32Dims1024 => time(&mut Sobol32::new(&ctx, 1024, 0)?, config, normal),
    }
}

fn time<G: RandomGenerator>(g: &mut G, config: &Config, normal: bool) -> Result<Measurement> {
    let ctx = g.context().clone();
    let n = count(config);
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let mut out = DeviceBuffer::<f32>::uninit(&ctx, n)?;
    let (start, end) = (
        Event::new(&ctx, EventFlags::DEFAULT)?,
        Event::new(&ctx, EventFlags::DEFAULT)?,
    );
    let fill = |g: &mut G, out: &mut DeviceBuffer<f32>| -> Result<()> {
        if normal {
            g.fill_normal(out, &stream)?;
        } else {
            g.fill_uniform(out, &stream)?;
        }
        Ok(())
    };
    let sampling = sampling(config);
    for _ in 0..sampling.warmup {
        fill(g, &mut out)?;
    }
    stream.synchronize()?;
    let mut samples = Vec::with_capacity(sampling.reps);
    for _ in 0..sampling.reps {
        start.record(&stream)?;
        fill(g, &mut out)?;
        end.record(&stream)?;
        end.synchronize()?;
        samples.push(f64::from(end.time_since(&start)?) / 1e3);
    }
    Ok(Measurement::gsps(&samples, n, n as u64))
}
