//! Timing: warm-up, then repetitions, then the median. Device work is timed with CUDA
//! events around it on its stream; overheads (launch, allocation) and synchronous copies
//! with `Instant` on the host.

use std::time::Instant;

use crate::cuda::{Event, Gpu, Result, Stream};

/// How many untimed and timed repetitions a case makes.
#[derive(Debug, Clone, Copy)]
pub struct Sampling {
    /// Untimed runs first (JIT, page faults, clocks ramping up).
    pub warmup: usize,
    /// Timed runs; the median is reported.
    pub reps: usize,
}

/// The median of the samples (the mean of the middle two for an even count); NaN if empty.
pub fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Seconds of host time for each timed call of `run` (which must finish its own work,
/// synchronizing if it queues any).
pub fn host_seconds(sampling: Sampling, mut run: impl FnMut() -> Result<()>) -> Result<Vec<f64>> {
    for _ in 0..sampling.warmup {
        run()?;
    }
    let mut samples = Vec::with_capacity(sampling.reps);
    for _ in 0..sampling.reps {
        let start = Instant::now();
        run()?;
        samples.push(start.elapsed().as_secs_f64());
    }
    Ok(samples)
}

/// Seconds of device time for each timed call of `enqueue`, which queues work on `stream`:
/// an event is recorded before and after, and the elapsed time between them is the sample.
pub fn device_seconds(
    gpu: &Gpu,
    stream: &Stream,
    sampling: Sampling,
    mut enqueue: impl FnMut() -> Result<()>,
) -> Result<Vec<f64>> {
    let (start, end) = (Event::new(gpu)?, Event::new(gpu)?);
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
        samples.push(start.elapsed_ms(&end)? / 1e3);
    }
    Ok(samples)
}

/// Units the bench reports in.
pub mod units {
    /// Microseconds per operation (lower is better).
    pub const MICROS: &str = "us";
    /// Gigabytes (10^9 bytes) per second (higher is better).
    pub const GBPS: &str = "GB/s";
    /// Giga-samples (10^9 random numbers) per second (higher is better).
    pub const GSPS: &str = "GS/s";
    /// Milliseconds per operation (lower is better).
    pub const MILLIS: &str = "ms";
    /// Giga-keys (10^9 sorted keys) per second (higher is better).
    pub const GKPS: &str = "GK/s";
}

/// What a case measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The problem size: bytes for copies and allocations, launches per batch for launches.
    pub n: u64,
    /// The median.
    pub value: f64,
    /// One of [`units`].
    pub unit: &'static str,
    /// The other sizes of a case that sweeps sizes (all-reduce from 1 KiB to 1 GiB): each
    /// becomes a record of its own, with its own `n`. Empty for single-size cases.
    pub more: Vec<Measurement>,
}

impl Measurement {
    /// Microseconds per operation, from samples that each timed `ops` operations.
    pub fn micros_per(samples: &[f64], ops: usize, n: u64) -> Self {
        Self {
            n,
            value: median(samples) * 1e6 / ops.max(1) as f64,
            unit: units::MICROS,
            more: Vec::new(),
        }
    }

    /// Giga-samples per second, from samples that each produced `count` values.
    pub fn gsps(samples: &[f64], count: usize, n: u64) -> Self {
        Self {
            n,
            value: count as f64 / median(samples) / 1e9,
            unit: units::GSPS,
            more: Vec::new(),
        }
    }

    /// Milliseconds per operation, from samples that each timed one operation.
    pub fn millis(samples: &[f64], n: u64) -> Self {
        Self {
            n,
            value: median(samples) * 1e3,
            unit: units::MILLIS,
            more: Vec::new(),
        }
    }

    /// Giga-keys per second, from samples that each sorted `count` keys.
    pub fn gkps(samples: &[f64], count: usize, n: u64) -> Self {
        Self {
            n,
            value: count as f64 / median(samples) / 1e9,
            unit: units::GKPS,
            more: Vec::new(),
        }
    }

    /// GB/s, from samples that each moved `bytes_moved` bytes.
    pub fn gbps(samples: &[f64], bytes_moved: usize, n: u64) -> Self {
        Self {
            n,
            value: bytes_moved as f64 / median(samples) / 1e9,
            unit: units::GBPS,
            more: Vec::new(),
        }
    }

    /// One measurement from the points of a sweep (the first carries the others in
    /// [`Measurement::more`]); `None` for no points.
    pub fn sweep(points: Vec<Measurement>) -> Option<Self> {
        let mut points = points.into_iter();
        let mut first = points.next()?;
        first.more.extend(points);
        Some(first)
    }

    /// This measurement and the other points of its sweep, in order.
    pub fn points(&self) -> impl Iterator<Item = &Measurement> {
        std::iter::once(self).chain(self.more.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn host_samples_count_the_reps_only() {
        let mut calls = 0;
        let samples = host_seconds(Sampling { warmup: 2, reps: 5 }, || {
            calls += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!((calls, samples.len()), (7, 5));
    }

    #[test]
    fn sweeps_keep_their_points_in_order() {
        let point = |n| Measurement::gbps(&[1.0], 1_000_000_000, n);
        let m = Measurement::sweep(vec![point(1), point(2), point(4)]).unwrap();
        let ns: Vec<u64> = m.points().map(|p| p.n).collect();
        assert_eq!(ns, [1, 2, 4]);
        assert!(Measurement::sweep(Vec::new()).is_none());
    }

    #[test]
    fn measurements_convert_units() {
        let m = Measurement::micros_per(&[0.01, 0.02, 0.03], 10_000, 10_000);
        assert!((m.value - 2.0).abs() < 1e-9 && m.unit == units::MICROS);
        let m = Measurement::gbps(&[0.5], 1_000_000_000, 1);
        assert!((m.value - 2.0).abs() < 1e-9 && m.unit == units::GBPS);
    }
}
