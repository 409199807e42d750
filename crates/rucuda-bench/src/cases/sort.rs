//! Sorting and its family through rucuda-array (issue 20), beside CUB (the NVIDIA peer)
//! and CuPy. Keys are random (a SplitMix64 stream made on the host, the same seed each
//! run); each timed call is a user's call (its outputs and temporaries allocated
//! stream-ordered inside). Device time by events, medians.
//!
//! - `sort_keys_u32_GKps`, `sort_keys_f32_GKps`, `sort_pairs_u32_GKps` (u32 values):
//!   2^28 keys (2^24 with `--quick`), giga-keys per second;
//! - `sort_keys_u32_sweep_GKps`, `sort_pairs_u32_sweep_GKps`: 2^24 to 2^29 keys (2^20 to
//!   2^24 quick), for the plots;
//! - `segsort_f32_4096x4096_GKps`, `segsort_f32_64x128256_GKps`: each row sorted;
//! - `topk_f32_64x128256_us` (k = 50), `topk1024_f32_64x128256_us` (k = 1024), and
//!   `sortrows_f32_64x128256_us` (the full row sort the top-k is compared with);
//! - `histogram_u8_256_GBps`, `histogram_f32_256_GBps`: 2^28 values into 256 even bins
//!   (bytes read);
//! - `unique_i32_GKps`: `unique` of 2^28 ints below 2^20 (keys per second, CuPy's peer);
//! - `searchsorted_f32_GKps`: 2^28 queries into 2^28 sorted floats (queries per second);
//! - `select_if_f32_GBps`: `select_if("x > 0.5f")` (one pass) on 2^28 uniform floats (4 bytes read per element,
//!   4 per selected element written).
//!
//! With `RUCUDA_BENCH_SORT_SWEEP=1`, `sort_tune_*` and `segsort_tune_*` cases measure
//! tile shapes in one run (through `rucuda_array::sort::set_tuning_overrides`), each
//! result checked sorted, and `histogram_tune_{u8,f32}_classic_GBps` measure the classic
//! histogram kernel (`RUCUDA_HISTOGRAM_VARIANT=classic`) after checking that it counts as
//! the default (lanes) kernels. Tuning knobs are also environment variables read at each call (`RUCUDA_SORT_THREADS`,
//! `RUCUDA_SORT_ITEMS`, `RUCUDA_SORT_LOCAL_THREADS`, `RUCUDA_SORT_LOCAL_MAX`,
//! `RUCUDA_SORT_HIST_BLOCKS_PER_SM`, `RUCUDA_HISTOGRAM_BLOCKS_PER_SM`): one bench run per
//! setting sweeps them.

use rucuda_array::sort::SortOrder;
use rucuda_array::{Element, GpuArray};
use rucuda_driver::Stream;

use super::reduce::{array_device_seconds, array_elements, bench_stream};
use super::{Case, RUCUDA};
use crate::config::Config;
use crate::cuda::{Gpu, Result};
use crate::harness::{Measurement, Sampling};

type Run = fn(&Gpu, &Config) -> Result<Measurement>;

/// One point of the tuning sweep (`RUCUDA_BENCH_SORT_SWEEP=1`): case name, what it sorts,
/// and the overrides (0: the default; `onesweep` 1: rows of 4096 take the onesweep passes
/// instead of one block each; `ballots`: the ranking warps find their digit's lanes
/// with ballots, else with `__match_any_sync`).
struct TunePoint {
    name: &'static str,
    what: Tuned,
    threads: u32,
    items: u32,
    onesweep: u32,
    hist_blocks_per_sm: u32,
    ballots: bool,
}

#[derive(Clone, Copy)]
enum Tuned {
    /// 2^28 u32 keys.
    Keys,
    /// 2^28 u32/u32 pairs.
    Pairs,
    /// 4096 rows of 4096 f32.
    Rows,
}

const fn point(
    name: &'static str,
    what: Tuned,
    threads: u32,
    items: u32,
    onesweep: u32,
    hist: u32,
) -> TunePoint {
    TunePoint {
        name,
        what,
        threads,
        items,
        onesweep,
        hist_blocks_per_sm: hist,
        ballots: false,
    }
}

/// [`point`] with the ranking warps' ballots.
const fn ballots(p: TunePoint) -> TunePoint {
    TunePoint { ballots: true, ..p }
}

const TUNE: [TunePoint; 22] = [
    point("sort_tune_u32_t256x8_GKps", Tuned::Keys, 256, 8, 0, 0),
    point("sort_tune_u32_t256x12_GKps", Tuned::Keys, 256, 12, 0, 0),
    point("sort_tune_u32_t256x16_GKps", Tuned::Keys, 256, 16, 0, 0),
    point("sort_tune_u32_t256x20_GKps", Tuned::Keys, 256, 20, 0, 0),
    point("sort_tune_u32_t256x24_GKps", Tuned::Keys, 256, 24, 0, 0),
    point("sort_tune_u32_t384x12_GKps", Tuned::Keys, 384, 12, 0, 0),
    point("sort_tune_u32_t384x16_GKps", Tuned::Keys, 384, 16, 0, 0),
    point("sort_tune_u32_t384x18_GKps", Tuned::Keys, 384, 18, 0, 0),
    point("sort_tune_u32_t512x8_GKps", Tuned::Keys, 512, 8, 0, 0),
    point("sort_tune_u32_t512x12_GKps", Tuned::Keys, 512, 12, 0, 0),
    point("sort_tune_u32_hist2_GKps", Tuned::Keys, 0, 0, 0, 2),
    point("sort_tune_u32_hist8_GKps", Tuned::Keys, 0, 0, 0, 8),
    point("sort_tune_pairs_t256x12_GKps", Tuned::Pairs, 256, 12, 0, 0),
    point("sort_tune_pairs_t256x16_GKps", Tuned::Pairs, 256, 16, 0, 0),
    point("sort_tune_pairs_t384x12_GKps", Tuned::Pairs, 384, 12, 0, 0),
    point("sort_tune_pairs_t512x8_GKps", Tuned::Pairs, 512, 8, 0, 0),
    point("segsort_tune_block_GKps", Tuned::Rows, 0, 0, 0, 0),
    point("segsort_tune_onesweep_GKps", Tuned::Rows, 0, 0, 1, 0),
    ballots(point(
        "sort_tune_u32_t256x16_ballots_GKps",
        Tuned::Keys,
        256,
        16,
        0,
        0,
    )),
    ballots(point(
        "sort_tune_u32_t384x16_ballots_GKps",
        Tuned::Keys,
        384,
        16,
        0,
        0,
    )),
    ballots(point(
        "sort_tune_pairs_t256x16_ballots_GKps",
        Tuned::Pairs,
        256,
        16,
        0,
        0,
    )),
    ballots(point(
        "segsort_tune_block_ballots_GKps",
        Tuned::Rows,
        0,
        0,
        0,
        0,
    )),
];

/// One checked sweep point: the result must be sorted.
fn tune_point(config: &Config, index: usize) -> Result<Measurement> {
    use rucuda_array::sort::{set_tuning_overrides, PeerMatch, TuningOverrides};
    let p = &TUNE[index];
    let some = |v: u32| (v > 0).then_some(v);
    set_tuning_overrides(TuningOverrides {
        threads: some(p.threads),
        items: some(p.items),
        local_threads: None,
        local_max: (p.onesweep == 1).then_some(0),
        hist_blocks_per_sm: some(p.hist_blocks_per_sm),
        table_budget: None,
        // Explicit both ways, so that a point measures the same kernels whatever the
        // default (ballots since 2026-11-27; the plain points keep `__match_any_sync`).
        peer_match: Some(if p.ballots {
            PeerMatch::Ballots
        } else {
            PeerMatch::MatchAny
        }),
        // RUCUDA_SORT_MIN_BLOCKS still applies (environment variables come last).
        min_blocks: None,
    });
    let result = (|| {
        let stream = bench_stream()?;
        let n = array_elements(config);
        let (samples, sorted): (Vec<f64>, Vec<f32>) = match p.what {
            Tuned::Keys | Tuned::Pairs => {
                let k = random_u32(&stream, &[n], 1)?;
                let v = random_u32(&stream, &[n], 4)?;
                let pairs = matches!(p.what, Tuned::Pairs);
                let samples = array_device_seconds(&stream, sampling(config), || {
                    if pairs {
                        k.sort_by_key(&v, -1, SortOrder::Ascending).map(drop)
                    } else {
                        k.sort().map(drop)
                    }
                })?;
                let host = k.sort()?.to_vec()?;
                (samples, host.iter().map(|&x| x as f32).collect())
            }
            Tuned::Rows => {
                let x = random_f32(&stream, &[n / 4096, 4096], 5)?;
                let samples =
                    array_device_seconds(&stream, sampling(config), || x.sort().map(drop))?;
                let host = x.sort()?.to_vec()?;
                (samples, host)
            }
        };
        let row = if matches!(p.what, Tuned::Rows) {
            4096
        } else {
            n
        };
        if let Some(bad) = sorted
            .chunks(row)
            .position(|r| r.windows(2).any(|w| w[0] > w[1]))
        {
            return Err(crate::cuda::Error(format!(
                "{}: row {bad} is not sorted",
                p.name
            )));
        }
        Ok(Measurement::gkps(&samples, n, n as u64))
    })();
    set_tuning_overrides(TuningOverrides::default());
    result
}

macro_rules! tune_runs {
    ($($i:literal),*) => {
        [$({
            fn run(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
                tune_point(config, $i)
            }
            run as Run
        }),*]
    };
}

const TUNE_RUNS: [Run; 22] =
    tune_runs!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21);

/// Registers the sort cases, and with `RUCUDA_BENCH_SORT_SWEEP` set, the tuning sweep
/// (each result checked).
pub fn register(cases: &mut Vec<Case>) {
    if std::env::var_os("RUCUDA_BENCH_SORT_SWEEP").is_some() {
        for (p, run) in TUNE.iter().zip(TUNE_RUNS) {
            cases.push(Case {
                name: p.name,
                lib: RUCUDA,
                run,
            });
        }
        let classic: [(&'static str, Run); 2] = [
            ("histogram_tune_u8_classic_GBps", histogram_u8_classic),
            ("histogram_tune_f32_classic_GBps", histogram_f32_classic),
        ];
        for (name, run) in classic {
            cases.push(Case {
                name,
                lib: RUCUDA,
                run,
            });
        }
    }
    let list: [(&'static str, Run); 15] = [
        ("sort_keys_u32_GKps", sort_keys_u32),
        ("sort_keys_f32_GKps", sort_keys_f32),
        ("sort_pairs_u32_GKps", sort_pairs_u32),
        ("segsort_f32_4096x4096_GKps", segsort_4096),
        ("segsort_f32_64x128256_GKps", segsort_64),
        ("sortrows_f32_64x128256_us", sortrows_64_us),
        ("topk_f32_64x128256_us", topk_50),
        ("topk1024_f32_64x128256_us", topk_1024),
        ("histogram_u8_256_GBps", histogram_u8),
        ("histogram_f32_256_GBps", histogram_f32),
        ("select_if_f32_GBps", select_if_f32),
        ("unique_i32_GKps", unique_i32),
        ("searchsorted_f32_GKps", searchsorted_f32),
        ("sort_keys_u32_sweep_GKps", sort_keys_sweep),
        ("sort_pairs_u32_sweep_GKps", sort_pairs_sweep),
    ];
    for (name, run) in list {
        cases.push(Case {
            name,
            lib: RUCUDA,
            run,
        });
    }
}

/// SplitMix64 words.
fn words(n: usize, seed: u64) -> impl Iterator<Item = u64> {
    let mut s = seed;
    (0..n).map(move |_| {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

fn random_u32(stream: &Stream, shape: &[usize], seed: u64) -> Result<GpuArray<u32>> {
    let n = shape.iter().product();
    let host: Vec<u32> = words(n, seed).map(|w| w as u32).collect();
    Ok(GpuArray::from_shape_slice(stream, shape, &host)?)
}

/// Uniform floats in [0, 1).
fn random_f32(stream: &Stream, shape: &[usize], seed: u64) -> Result<GpuArray<f32>> {
    let n = shape.iter().product();
    let host: Vec<f32> = words(n, seed)
        .map(|w| (w >> 40) as f32 / (1u64 << 24) as f32)
        .collect();
    Ok(GpuArray::from_shape_slice(stream, shape, &host)?)
}

fn sampling(config: &Config) -> Sampling {
    config.device_copy_sampling()
}

fn keys_per_second<T: Element>(
    config: &Config,
    x: &GpuArray<T>,
    stream: &Stream,
) -> Result<Measurement> {
    let samples = array_device_seconds(stream, sampling(config), || x.sort().map(drop))?;
    Ok(Measurement::gkps(&samples, x.len(), x.len() as u64))
}

fn sort_keys_u32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let x = random_u32(&stream, &[array_elements(config)], 1)?;
    keys_per_second(config, &x, &stream)
}

fn sort_keys_f32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let x = random_f32(&stream, &[array_elements(config)], 2)?;
    keys_per_second(config, &x, &stream)
}

fn sort_pairs_u32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let n = array_elements(config);
    let k = random_u32(&stream, &[n], 3)?;
    let v = random_u32(&stream, &[n], 4)?;
    let samples = array_device_seconds(&stream, sampling(config), || {
        k.sort_by_key(&v, -1, SortOrder::Ascending).map(drop)
    })?;
    Ok(Measurement::gkps(&samples, n, n as u64))
}

fn segsort_4096(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let rows = if config.quick { 1024 } else { 4096 };
    let x = random_f32(&stream, &[rows, 4096], 5)?;
    keys_per_second(config, &x, &stream)
}

fn rows_64(config: &Config, stream: &Stream) -> Result<GpuArray<f32>> {
    random_f32(stream, &[if config.quick { 16 } else { 64 }, 128_256], 6)
}

fn segsort_64(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let x = rows_64(config, &stream)?;
    keys_per_second(config, &x, &stream)
}

fn sortrows_64_us(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let x = rows_64(config, &stream)?;
    let samples = array_device_seconds(&stream, sampling(config), || {
        x.sort_with_positions(-1, SortOrder::Descending).map(drop)
    })?;
    Ok(Measurement::micros_per(&samples, 1, x.len() as u64))
}

fn topk(config: &Config, k: usize) -> Result<Measurement> {
    let stream = bench_stream()?;
    let x = rows_64(config, &stream)?;
    let samples = array_device_seconds(&stream, sampling(config), || x.topk(k, true).map(drop))?;
    Ok(Measurement::micros_per(&samples, 1, x.len() as u64))
}

fn topk_50(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    topk(config, 50)
}

fn topk_1024(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    topk(config, 1024)
}

fn histogram_u8(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let n = array_elements(config);
    let host: Vec<u8> = words(n, 7).map(|w| w as u8).collect();
    let x = GpuArray::from_slice(&stream, &host)?;
    let samples = array_device_seconds(&stream, sampling(config), || {
        x.histogram(256, Some((0.0, 256.0))).map(drop)
    })?;
    Ok(Measurement::gbps(&samples, n, n as u64))
}

/// `run` with the classic histogram kernel, after checking that it counts `x` as the
/// default (lanes) kernels do (the sweep's points are checked, as the sort's are).
fn with_classic<T: rucuda_array::Element>(
    x: &GpuArray<T>,
    bins: usize,
    range: (f64, f64),
    run: impl FnOnce() -> Result<Measurement>,
) -> Result<Measurement> {
    use rucuda_array::sort::{set_histogram_variant, HistogramVariant};
    let counts = |v| -> Result<Vec<i64>> {
        set_histogram_variant(Some(v));
        Ok(x.histogram(bins, Some(range))?.0.to_vec()?)
    };
    let result = (|| {
        if counts(HistogramVariant::Lanes)? != counts(HistogramVariant::Classic)? {
            return Err(crate::cuda::Error(
                "the lanes histogram differs from the classic one".into(),
            ));
        }
        set_histogram_variant(Some(HistogramVariant::Classic));
        run()
    })();
    set_histogram_variant(None);
    result
}

fn histogram_u8_classic(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let host: Vec<u8> = words(1 << 20, 7).map(|w| w as u8).collect();
    let x = GpuArray::from_slice(&stream, &host)?;
    with_classic(&x, 256, (0.0, 256.0), || histogram_u8(gpu, config))
}

fn histogram_f32_classic(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let x = random_f32(&stream, &[1 << 20], 8)?;
    with_classic(&x, 256, (0.0, 1.0), || histogram_f32(gpu, config))
}

fn histogram_f32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let n = array_elements(config);
    let x = random_f32(&stream, &[n], 8)?;
    let samples = array_device_seconds(&stream, sampling(config), || {
        x.histogram(256, Some((0.0, 1.0))).map(drop)
    })?;
    Ok(Measurement::gbps(&samples, 4 * n, n as u64))
}

fn select_if_f32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let n = array_elements(config);
    let x = random_f32(&stream, &[n], 9)?;
    // SAFETY: the predicate reads only `x`.
    let selected = unsafe { x.select_if("x > 0.5f") }?.len();
    let samples = array_device_seconds(&stream, sampling(config), || {
        // SAFETY: the predicate reads only `x`.
        unsafe { x.select_if("x > 0.5f") }.map(drop)
    })?;
    Ok(Measurement::gbps(&samples, 4 * n + 4 * selected, n as u64))
}

fn unique_i32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let n = array_elements(config);
    let host: Vec<i32> = words(n, 11).map(|w| (w % (1 << 20)) as i32).collect();
    let x = GpuArray::from_slice(&stream, &host)?;
    let samples = array_device_seconds(&stream, sampling(config), || x.unique().map(drop))?;
    Ok(Measurement::gkps(&samples, n, n as u64))
}

fn searchsorted_f32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let stream = bench_stream()?;
    let n = array_elements(config);
    let a = random_f32(&stream, &[n], 12)?.sort()?;
    let q = random_f32(&stream, &[n], 13)?;
    let samples = array_device_seconds(&stream, sampling(config), || {
        a.searchsorted(&q, rucuda_array::sort::Side::Left).map(drop)
    })?;
    Ok(Measurement::gkps(&samples, n, n as u64))
}

/// A sweep of sizes (2^24 to 2^29 keys, 2^20 to 2^24 quick): `sort` sorts random u32
/// keys made with the seed it is given (and the next one for values).
fn sort_sweep(
    config: &Config,
    sort: impl Fn(&Stream, usize, u64) -> Result<Box<dyn Fn() -> rucuda_array::Result<()>>>,
) -> Result<Measurement> {
    let (low, high) = if config.quick { (20, 24) } else { (24, 29) };
    let mut points = Vec::new();
    for p in low..=high {
        let stream = bench_stream()?;
        let n = 1usize << p;
        let call = sort(&stream, n, 10 + p as u64)?;
        let samples = array_device_seconds(
            &stream,
            Sampling {
                warmup: 2,
                reps: if p >= 28 { 7 } else { 15 },
            },
            &call,
        )?;
        points.push(Measurement::gkps(&samples, n, n as u64));
    }
    Ok(Measurement::sweep(points).unwrap_or(Measurement {
        n: 0,
        value: 0.0,
        unit: crate::harness::units::GKPS,
        more: Vec::new(),
    }))
}

fn sort_keys_sweep(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    sort_sweep(config, |stream, n, seed| {
        let x = random_u32(stream, &[n], seed)?;
        Ok(Box::new(move || x.sort().map(drop)))
    })
}

fn sort_pairs_sweep(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    sort_sweep(config, |stream, n, seed| {
        let k = random_u32(stream, &[n], seed)?;
        let v = random_u32(stream, &[n], seed + 1)?;
        Ok(Box::new(move || {
            k.sort_by_key(&v, -1, SortOrder::Ascending).map(drop)
        }))
    })
}
