//! `RUCUDA_BENCH_STAGED_SWEEP=1`: the pageable copies (`h2d_pageable_GBps`,
//! `d2h_pageable_GBps`, measured the same way) under other staging settings
//! (`rucuda_driver::memory::StagingConfig`), set for each point and restored after it:
//! `<direction>_pageable_tune_s<slots>x<MiB>_w<workers>[_nt][_hp]_GBps` (`_nt`: non-temporal
//! stores always, else never). Each device-to-host point also checks the bytes that
//! arrived.

use rucuda_driver::memory::{set_staging_config, staging_config, StagingConfig};
use rucuda_driver::DeviceBuffer;

use super::{rucuda_context, Case, RUCUDA};
use crate::config::Config;
use crate::cuda::{Error, Gpu, Result};
use crate::harness::{host_seconds, Measurement};

/// (case name, device to host, slots, MiB per slot, workers, non-temporal, huge pages).
type Point = (&'static str, bool, usize, usize, usize, bool, bool);

const POINTS: [Point; 14] = [
    (
        "d2h_pageable_tune_s2x16_w8_GBps",
        true,
        2,
        16,
        8,
        false,
        false,
    ),
    (
        "d2h_pageable_tune_s2x16_w8_nt_GBps",
        true,
        2,
        16,
        8,
        true,
        false,
    ),
    (
        "d2h_pageable_tune_s3x16_w8_nt_GBps",
        true,
        3,
        16,
        8,
        true,
        false,
    ),
    (
        "d2h_pageable_tune_s4x8_w8_nt_GBps",
        true,
        4,
        8,
        8,
        true,
        false,
    ),
    (
        "d2h_pageable_tune_s2x32_w8_nt_GBps",
        true,
        2,
        32,
        8,
        true,
        false,
    ),
    (
        "d2h_pageable_tune_s2x16_w16_nt_GBps",
        true,
        2,
        16,
        16,
        true,
        false,
    ),
    (
        "d2h_pageable_tune_s3x16_w16_nt_GBps",
        true,
        3,
        16,
        16,
        true,
        false,
    ),
    (
        "d2h_pageable_tune_s4x16_w16_nt_GBps",
        true,
        4,
        16,
        16,
        true,
        false,
    ),
    (
        "d2h_pageable_tune_s3x16_w16_GBps",
        true,
        3,
        16,
        16,
        false,
        false,
    ),
    (
        "d2h_pageable_tune_s2x16_w4_nt_GBps",
        true,
        2,
        16,
        4,
        true,
        false,
    ),
    (
        "d2h_pageable_tune_s3x16_w16_nt_hp_GBps",
        true,
        3,
        16,
        16,
        true,
        true,
    ),
    (
        "h2d_pageable_tune_s2x16_w16_GBps",
        false,
        2,
        16,
        16,
        false,
        false,
    ),
    (
        "h2d_pageable_tune_s3x16_w16_GBps",
        false,
        3,
        16,
        16,
        false,
        false,
    ),
    (
        "h2d_pageable_tune_s4x8_w16_GBps",
        false,
        4,
        8,
        16,
        false,
        false,
    ),
];

/// Registers the sweep when `RUCUDA_BENCH_STAGED_SWEEP` is set.
pub fn register(cases: &mut Vec<Case>) {
    if std::env::var_os("RUCUDA_BENCH_STAGED_SWEEP").is_none() {
        return;
    }
    for (i, run) in RUNS.iter().enumerate() {
        cases.push(Case {
            name: POINTS[i].0,
            lib: RUCUDA,
            run: *run,
        });
    }
}

fn point(config: &Config, index: usize) -> Result<Measurement> {
    let (_, d2h, slots, mib, workers, nt, hp) = POINTS[index];
    let before = staging_config();
    set_staging_config(StagingConfig {
        slots,
        slot_bytes: mib << 20,
        max_workers: workers,
        streaming_min_bytes: if nt { 0 } else { usize::MAX },
        huge_pages: hp,
    });
    let measured = if d2h {
        d2h_point(config)
    } else {
        h2d_point(config)
    };
    set_staging_config(before);
    measured
}

fn d2h_point(config: &Config) -> Result<Measurement> {
    let bytes = config.copy_bytes;
    let ctx = rucuda_context()?;
    let mut host = vec![1u8; bytes];
    let pattern: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
    let device = DeviceBuffer::<u8>::from_slice(&ctx, &pattern)?;
    let samples = host_seconds(config.transfer_sampling(), || {
        device.copy_to_host(&mut host)?;
        Ok(ctx.synchronize()?)
    })?;
    if host != pattern {
        return Err(Error("the staged device-to-host copy changed bytes".into()));
    }
    Ok(Measurement::gbps(&samples, bytes, bytes as u64))
}

fn h2d_point(config: &Config) -> Result<Measurement> {
    let bytes = config.copy_bytes;
    let ctx = rucuda_context()?;
    let host = vec![1u8; bytes];
    let mut device = DeviceBuffer::<u8>::uninit(&ctx, bytes)?;
    let samples = host_seconds(config.transfer_sampling(), || {
        device.copy_from_host(&host)?;
        Ok(ctx.synchronize()?)
    })?;
    Ok(Measurement::gbps(&samples, bytes, bytes as u64))
}

macro_rules! runs {
    ($($i:literal),*) => {
        [$({
            fn run(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
                point(config, $i)
            }
            run as fn(&Gpu, &Config) -> Result<Measurement>
        }),*]
    };
}

const RUNS: [fn(&Gpu, &Config) -> Result<Measurement>; 14] =
    runs!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
