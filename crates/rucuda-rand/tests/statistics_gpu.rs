//! GPU statistics: for every generator, 10^8 uniform and 10^8 normal floats from our
//! kernels, their mean, variance and a chi-square test over 1024 equiprobable bins
//! (normals binned through the normal CDF), computed on the GPU. Thresholds sit at
//! p ≈ 10^-6 so a correct generator fails about once in a million runs. The quasi-random
//! (Sobol) generators are far more even than random: for them only the upper tails are
//! tested.
//!
//! Under compute-sanitizer (`run.sh sanitize`) each count is 100 × 2^14: the same kernels,
//! instrumented, with the same thresholds (they scale with the count), so the test still
//! means something there while the plain run keeps the full power. The bins are a power
//! of two because a Sobol dimension's first 2^k points fill 2^k equal strata exactly:
//! with 1000 bins and 2^14 points in each of 100 dimensions, every dimension puts 16 or
//! 17 points in the same bins, and the chi-square (1444, measured with the CPU reference)
//! rejects a perfect sequence.

mod common;

use common::ctx;
use rucuda_driver::{Context, DeviceBuffer, LaunchConfig, Stream};
use rucuda_jit::{CompileOptions, SourceModule};
use rucuda_rand::{
    Mrg32k3a, Philox4x32_10, RandomGenerator, ScrambledSobol32, ScrambledSobol64, Sobol32, Sobol64,
    Xorwow,
};

/// Samples per distribution: 10^8, or 100 × 2^14 under compute-sanitizer.
fn samples() -> usize {
    rucuda_testkit::scaled_for_sanitizer(100_000_000, 100 << 14)
}
const BINS: u32 = 1024;
/// Two-sided normal quantile for p = 1e-6 (and nearly the one-sided one for 1e-6/2).
const Z: f64 = 4.89;

const STATS: &str = r#"
extern "C" __global__ void stats_f32(const float* x, unsigned long long n, int normal,
                                     unsigned bins, unsigned long long* hist, double* sums)
{
    extern __shared__ unsigned sh[];
    for (unsigned i = threadIdx.x; i < bins; i += blockDim.x) sh[i] = 0;
    __syncthreads();
    double s = 0.0, s2 = 0.0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        float v = x[i];
        s += v;
        s2 += (double)v * v;
        float u = normal ? normcdff(v) : v;
        int b = (int)(u * bins);
        b = b < 0 ? 0 : (b >= (int)bins ? (int)bins - 1 : b);
        atomicAdd(&sh[b], 1u);
    }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_down_sync(0xffffffffu, s, o);
        s2 += __shfl_down_sync(0xffffffffu, s2, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&sums[0], s);
        atomicAdd(&sums[1], s2);
    }
    __syncthreads();
    for (unsigned i = threadIdx.x; i < bins; i += blockDim.x)
        atomicAdd(&hist[i], (unsigned long long)sh[i]);
}
"#;

struct Stats {
    mean: f64,
    var: f64,
    chi2: f64,
}

fn stats(ctx: &Context, stream: &Stream, x: &DeviceBuffer<f32>, normal: bool) -> Stats {
    let module = SourceModule::for_context(ctx, STATS, &CompileOptions::new().no_extern_c(true))
        .expect("the statistics kernel compiles");
    let f = module.function("stats_f32").unwrap();
    let mut hist = DeviceBuffer::<u64>::zeros(ctx, BINS as usize).unwrap();
    let mut sums = DeviceBuffer::<f64>::zeros(ctx, 2).unwrap();
    let cfg = LaunchConfig::linear(1024, 256).with_shared_mem(BINS * 4);
    // SAFETY: stats_f32(const float* x, u64 n, int normal, unsigned bins, u64* hist,
    // double* sums) reads x[0..n) and adds into hist[0..bins) and sums[0..2).
    unsafe {
        f.launch(
            cfg,
            stream,
            (
                x,
                x.len() as u64,
                i32::from(normal),
                BINS,
                &mut hist,
                &mut sums,
            ),
        )
        .unwrap()
    };
    stream.synchronize().unwrap();
    let hist = hist.to_vec().unwrap();
    let sums = sums.to_vec().unwrap();
    let n = x.len() as f64;
    let mean = sums[0] / n;
    let var = sums[1] / n - mean * mean;
    let expected = n / f64::from(BINS);
    let chi2 = hist
        .iter()
        .map(|&h| (h as f64 - expected).powi(2) / expected)
        .sum();
    assert_eq!(hist.iter().sum::<u64>(), x.len() as u64);
    Stats { mean, var, chi2 }
}

/// Wilson–Hilferty: the chi-square quantile with `df` degrees of freedom at normal
/// quantile `z`.
fn chi2_quantile(df: f64, z: f64) -> f64 {
    let a = 2.0 / (9.0 * df);
    df * (1.0 - a + z * a.sqrt()).powi(3)
}

fn check<G: RandomGenerator>(g: &mut G, quasi: bool) {
    let ctx = g.context().clone();
    let stream = Stream::null(&ctx);
    let samples = samples();
    let mut x = DeviceBuffer::<f32>::uninit(&ctx, samples).unwrap();
    let n = samples as f64;
    let df = f64::from(BINS - 1);
    let (lo, hi) = (chi2_quantile(df, -Z), chi2_quantile(df, Z));

    g.fill_uniform(&mut x, &stream).unwrap();
    let u = stats(&ctx, &stream, &x, false);
    let zm = (u.mean - 0.5) / (1.0 / 12.0 / n).sqrt();
    let zv = (u.var - 1.0 / 12.0) / ((1.0 / 80.0 - 1.0 / 144.0) / n).sqrt();
    println!(
        "{} uniform: mean {:.7} (z {zm:.2}), variance {:.7} (z {zv:.2}), chi2 {:.1} \
         (df {df}, accepted {lo:.1}..{hi:.1})",
        g.name(),
        u.mean,
        u.var,
        u.chi2
    );
    assert!(
        zm.abs() < Z && zv.abs() < Z,
        "{}: uniform moments",
        g.name()
    );
    assert!(u.chi2 < hi, "{}: uniform chi-square too large", g.name());
    assert!(
        quasi || u.chi2 > lo,
        "{}: uniform chi-square too small",
        g.name()
    );

    g.fill_normal(&mut x, &stream).unwrap();
    let s = stats(&ctx, &stream, &x, true);
    let zm = s.mean / (1.0 / n).sqrt();
    let zv = (s.var - 1.0) / (2.0 / n).sqrt();
    println!(
        "{} normal: mean {:.7} (z {zm:.2}), variance {:.7} (z {zv:.2}), chi2 {:.1}",
        g.name(),
        s.mean,
        s.var,
        s.chi2
    );
    assert!(zm.abs() < Z && zv.abs() < Z, "{}: normal moments", g.name());
    assert!(s.chi2 < hi, "{}: normal chi-square too large", g.name());
    assert!(
        quasi || s.chi2 > lo,
        "{}: normal chi-square too small",
        g.name()
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn philox_statistics() {
    check(
        &mut Philox4x32_10::new(&ctx(), rucuda_rand::seed::entropy()).unwrap(),
        false,
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn xorwow_statistics() {
    check(
        &mut Xorwow::new(&ctx(), rucuda_rand::seed::entropy()).unwrap(),
        false,
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn mrg32k3a_statistics() {
    check(
        &mut Mrg32k3a::new(&ctx(), rucuda_rand::seed::entropy()).unwrap(),
        false,
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn sobol_statistics() {
    let ctx = ctx();
    let seed = rucuda_rand::seed::entropy();
    check(&mut Sobol32::new(&ctx, 100, 0).unwrap(), true);
    check(
        &mut ScrambledSobol32::new(&ctx, 100, seed, 0).unwrap(),
        true,
    );
    check(&mut Sobol64::new(&ctx, 100, 0).unwrap(), true);
    check(
        &mut ScrambledSobol64::new(&ctx, 100, seed, 0).unwrap(),
        true,
    );
}
