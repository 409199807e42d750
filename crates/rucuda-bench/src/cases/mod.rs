//! The cases, one module per area, and the registry that lists them in run order.
//!
//! A [`Case`] is a name from shared/TARGETS.md, the lib it measures and a function. The `raw`
//! cases call rucuda-driver-sys alone: they are the floor a wrapper adds to.
//!
//! **Adding the `rucuda` version of a case**: write a function with the same signature in the
//! area's module (`launch.rs` for `launch_empty_us`, ...), measuring the same work the same
//! way through rucuda's API, and register it right after the raw one:
//!
//! ```text
//! cases.push(Case { name: "launch_empty_us", lib: RUCUDA, run: rucuda_launch_empty });
//! ```
//!
//! A new area (reductions, scans, RNG) is a new module with its own `register`, called from
//! [`registry`]. Ratios and the table pick new cases up by their unit: `GB/s` cases are
//! compared with the raw copy bandwidth of the run, others with the `raw` entry of the case.

use crate::config::Config;
use crate::cuda::{Gpu, Result};
use crate::harness::Measurement;

mod alloc;
mod array_ops;
mod compile;
mod copy;
mod graph;
mod launch;
mod nccl;
mod reduce;
mod rng;
mod scan;
mod sort;
mod staged_sweep;
mod sweep;

pub use crate::report::RAW;

/// The lib name of rucuda's own cases.
pub const RUCUDA: &str = "rucuda";

/// The primary context of the bench's device through rucuda (the same context `Gpu`
/// retained, so both libs run in one context).
pub fn rucuda_context() -> Result<rucuda_driver::Context> {
    Ok(rucuda_driver::Device::get(0)?.primary_context()?)
}

/// Device seconds of each timed `enqueue` on a rucuda stream, measured with rucuda's events
/// the way [`crate::harness::device_seconds`] does with raw ones.
pub fn rucuda_device_seconds(
    stream: &rucuda_driver::Stream,
    sampling: crate::harness::Sampling,
    mut enqueue: impl FnMut() -> rucuda_driver::Result<()>,
) -> Result<Vec<f64>> {
    use rucuda_driver::{Event, EventFlags};
    let ctx = stream.context();
    let (start, end) = (
        Event::new(ctx, EventFlags::DEFAULT)?,
        Event::new(ctx, EventFlags::DEFAULT)?,
    );
    for _ in 0..sampling.warmup {
        enqueue()?;
    }
    stream.synchronize()?;
    let mut samples = Vec::with_capacity(sampling.reps);
    for _ in 0..sampling.reps {
        start.record(stream)?;
        enqueue()?;
        end.record(stream)?;
        end.synchronize()?;
        samples.push(f64::from(end.time_since(&start)?) / 1e3);
    }
    Ok(samples)
}

/// One measurement the bench can make.
pub struct Case {
    /// The case name, as in shared/TARGETS.md.
    pub name: &'static str,
    /// Which library does the work: [`RAW`] or [`RUCUDA`].
    pub lib: &'static str,
    /// Runs it on the device with the primary context current.
    pub run: fn(&Gpu, &Config) -> Result<Measurement>,
}

/// Every case, in run order: the copy bandwidth first (the reference of the GB/s ratios).
pub fn registry() -> Vec<Case> {
    let mut cases = Vec::new();
    copy::register_device_copy(&mut cases);
    launch::register(&mut cases);
    alloc::register(&mut cases);
    copy::register_transfers(&mut cases);
    rng::register(&mut cases);
    compile::register(&mut cases);
    reduce::register(&mut cases);
    scan::register(&mut cases);
    staged_sweep::register(&mut cases);
    array_ops::register(&mut cases);
    graph::register(&mut cases);
    sort::register(&mut cases);
    nccl::register(&mut cases);
    sweep::register(&mut cases);
    cases
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_has_the_target_names_once_per_lib() {
        let cases = registry();
        let names: Vec<&str> = cases.iter().map(|c| c.name).collect();
        for name in [
            "d2d_copy_GBps",
            "launch_empty_us",
            "launch_args4_us",
            "alloc_free_us",
            "alloc_free_async_us",
            "h2d_pageable_GBps",
            "d2h_pageable_GBps",
            "h2d_pinned_GBps",
            "d2h_pinned_GBps",
            "rand_uniform_f32_philox_GSps",
            "rand_uniform_f32_xorwow_GSps",
            "rand_uniform_f32_mrg32k3a_GSps",
            "rand_normal_f32_philox_GSps",
            "rand_uniform_f32_sobol32_GSps",
            "rand_normal_f32_xorwow_GSps",
            "rand_normal_f32_mrg32k3a_GSps",
            "rand_normal_f32_sobol32_GSps",
        ] {
            assert!(names.contains(&name), "{name} missing");
        }
        assert_eq!(names[0], crate::report::COPY_CASE);
        let mut pairs: Vec<(&str, &str)> = cases.iter().map(|c| (c.name, c.lib)).collect();
        let before = pairs.len();
        pairs.sort();
        pairs.dedup();
        assert_eq!(
            pairs.len(),
            before,
            "a (case, lib) pair is registered twice"
        );
    }
}
