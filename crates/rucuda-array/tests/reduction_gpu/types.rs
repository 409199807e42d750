//! The reduction methods for every element type where they mean something,
//! at sizes 0, 1, 31, 1000 and 2^20 + 7: integer reductions exact, float and complex sums
//! and dots against Kahan references, exact sums of integer-valued floats (every element
//! counted once), NaN, infinities and ties as NumPy has them.

use crate::common::{stream, RandomElement, RandomVec, Rng};
use crate::{assert_sum_close, kahan, upload, SIZES};
use rucuda_array::{bf16, f16, ArrayError, Complex, Element, GpuArray, SliceArg};
use rucuda_driver::Stream;

/// Integer sums, dots, extremes, argmax/argmin and any/all against exact references.
fn check_integers<T>(rng: &mut Rng, s: &Stream, to_i128: fn(T) -> i128, wrap: fn(i128) -> T)
where
    T: RandomElement + PartialOrd,
{
    for n in SIZES {
        let xh: Vec<T> = rng.vec(n);
        let yh: Vec<T> = rng.vec(n);
        let (x, y) = (upload(s, &xh), upload(s, &yh));
        let what = format!("{} n={n}", T::DTYPE);
        // Wrapping i128 arithmetic keeps every result exact modulo 2^64.
        let sum = xh.iter().fold(0i128, |a, &v| a.wrapping_add(to_i128(v)));
        assert_eq!(
            x.sum().unwrap().to_scalar().unwrap(),
            wrap(sum),
            "sum {what}"
        );
        assert_eq!(
            x.sum_as::<i64>().unwrap().to_scalar().unwrap(),
            sum as i64,
            "sum_as::<i64> {what}"
        );
        let dot = xh.iter().zip(&yh).fold(0i128, |acc, (&a, &b)| {
            acc.wrapping_add(to_i128(a).wrapping_mul(to_i128(b)))
        });
        assert_eq!(
            x.dot(&y).unwrap().to_scalar().unwrap(),
            wrap(dot),
            "dot {what}"
        );
        assert_eq!(
            x.any().unwrap().to_scalar().unwrap(),
            xh.iter().any(|&v| to_i128(v) != 0),
            "any {what}"
        );
        assert_eq!(
            x.all().unwrap().to_scalar().unwrap(),
            xh.iter().all(|&v| to_i128(v) != 0),
            "all {what}"
        );
        if n == 0 {
            assert!(x.max().is_err() && x.argmin().is_err(), "{what}");
            continue;
        }
        let max = xh.iter().copied().map(to_i128).max().unwrap();
        let min = xh.iter().copied().map(to_i128).min().unwrap();
        assert_eq!(
            to_i128(x.max().unwrap().to_scalar().unwrap()),
            max,
            "max {what}"
        );
        assert_eq!(
            to_i128(x.min().unwrap().to_scalar().unwrap()),
            min,
            "min {what}"
        );
        let first = |m: i128| xh.iter().position(|&v| to_i128(v) == m).unwrap() as i64;
        assert_eq!(
            x.argmax().unwrap().to_scalar().unwrap(),
            first(max),
            "argmax {what}"
        );
        assert_eq!(
            x.argmin().unwrap().to_scalar().unwrap(),
            first(min),
            "argmin {what}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn integer_reductions_are_exact_at_every_size() {
    let mut rng = Rng::fresh();
    let s = stream();
    check_integers::<i32>(&mut rng, &s, |v| v as i128, |v| v as i32);
    check_integers::<i64>(&mut rng, &s, |v| v as i128, |v| v as i64);
    check_integers::<u8>(&mut rng, &s, |v| v as i128, |v| v as u8);
    check_integers::<i8>(&mut rng, &s, |v| v as i128, |v| v as i8);
    check_integers::<u16>(&mut rng, &s, |v| v as i128, |v| v as u16);
    check_integers::<u32>(&mut rng, &s, |v| v as i128, |v| v as u32);
    check_integers::<u64>(&mut rng, &s, |v| v as i128, |v| v as u64);
}

/// Float sums and dots against Kahan references, extremes and arg-extremes exactly.
/// Values in [-scale, scale).
fn check_floats<T: Element>(rng: &mut Rng, s: &Stream, scale: f64, eps: f64, rel: f64) {
    let f = |v: T| v.to_complex_f64().0;
    for n in SIZES {
        let xh: Vec<T> = (0..n).map(|_| T::from_f64(rng.unit() * scale)).collect();
        let yh: Vec<T> = (0..n).map(|_| T::from_f64(rng.unit() * scale)).collect();
        let (x, y) = (upload(s, &xh), upload(s, &yh));
        let what = format!("{} n={n}", T::DTYPE);
        let (want, abs) = kahan(xh.iter().map(|&v| f(v)));
        let got = f(x.sum().unwrap().to_scalar().unwrap());
        assert_sum_close(got, want, abs, n, eps, rel, &format!("sum {what}"));
        let (want, abs) = kahan(xh.iter().zip(&yh).map(|(&a, &b)| f(a) * f(b)));
        let got = f(x.dot(&y).unwrap().to_scalar().unwrap());
        assert_sum_close(got, want, abs, n, eps, rel, &format!("dot {what}"));
        let got = x.sum_as::<f64>().unwrap().to_scalar().unwrap();
        let (want, abs) = kahan(xh.iter().map(|&v| f(v)));
        assert_sum_close(
            got,
            want,
            abs,
            n,
            f64::EPSILON,
            0.0,
            &format!("sum_as {what}"),
        );
        if n == 0 {
            assert!(x.min().is_err() && x.argmax().is_err(), "{what}");
            continue;
        }
        let vals: Vec<f64> = xh.iter().map(|&v| f(v)).collect();
        let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
        assert_eq!(f(x.max().unwrap().to_scalar().unwrap()), max, "max {what}");
        assert_eq!(f(x.min().unwrap().to_scalar().unwrap()), min, "min {what}");
        let first = |m: f64| vals.iter().position(|&v| v == m).unwrap() as i64;
        assert_eq!(
            x.argmax().unwrap().to_scalar().unwrap(),
            first(max),
            "argmax {what}"
        );
        assert_eq!(
            x.argmin().unwrap().to_scalar().unwrap(),
            first(min),
            "argmin {what}"
        );
        assert!(x.any().unwrap().to_scalar().unwrap(), "any {what}");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn float_reductions_at_every_size() {
    let mut rng = Rng::fresh();
    let s = stream();
    check_floats::<f32>(&mut rng, &s, 100.0, f32::EPSILON as f64, 0.0);
    check_floats::<f64>(&mut rng, &s, 100.0, f64::EPSILON, 0.0);
    // Half types accumulate in f32; the result is rounded to the half type (values in
    // [-1, 1) keep the sums of 2^20 of them well inside f16's range).
    check_floats::<f16>(&mut rng, &s, 1.0, f32::EPSILON as f64, 1.0 / 1024.0);
    check_floats::<bf16>(&mut rng, &s, 1.0, f32::EPSILON as f64, 1.0 / 128.0);
}

#[test]
#[ignore = "needs a CUDA device"]
fn complex_sums_and_dots() {
    let mut rng = Rng::fresh();
    let s = stream();
    for n in SIZES {
        let xh: Vec<Complex<f32>> = rng.vec(n);
        let yh: Vec<Complex<f32>> = rng.vec(n);
        let (x, y) = (upload(&s, &xh), upload(&s, &yh));
        let c = |v: Complex<f32>| Complex::new(v.re as f64, v.im as f64);
        let sum = x.sum().unwrap().to_scalar().unwrap();
        let dot = x.dot(&y).unwrap().to_scalar().unwrap();
        let eps = f32::EPSILON as f64;
        for (part, get) in [
            ("re", (|z: Complex<f64>| z.re) as fn(Complex<f64>) -> f64),
            ("im", |z: Complex<f64>| z.im),
        ] {
            let (want, abs) = kahan(xh.iter().map(|&v| get(c(v))));
            assert_sum_close(
                get(c(sum)),
                want,
                abs,
                n,
                eps,
                0.0,
                &format!("sum.{part} n={n}"),
            );
            // Each product's part has two terms: compare with both terms' magnitudes.
            let terms = xh.iter().zip(&yh).flat_map(|(&a, &b)| {
                let (a, b) = (c(a), c(b));
                if part == "re" {
                    [a.re * b.re, -a.im * b.im]
                } else {
                    [a.re * b.im, a.im * b.re]
                }
            });
            let (want, abs) = kahan(terms);
            assert_sum_close(
                get(c(dot)),
                want,
                abs,
                2 * n,
                eps,
                0.0,
                &format!("dot.{part} n={n}"),
            );
        }
        assert_eq!(
            x.any().unwrap().to_scalar().unwrap(),
            n > 0,
            "any of random complex n={n}"
        );
    }
    let x = upload(&s, &[Complex::new(1.0f64, 0.0)]);
    assert!(matches!(x.max(), Err(ArrayError::UnsupportedType { .. })));
}

#[test]
#[ignore = "needs a CUDA device"]
fn integer_valued_float_sums_count_every_element_once() {
    // Values in [-8, 8]: every partial sum of up to 2^20 + 7 of them is exact in f32,
    // so a skipped or repeated element (a boundary bug) shows as a wrong sum.
    let mut rng = Rng::fresh();
    let s = stream();
    for n in [
        1usize, 2, 3, 4, 5, 15, 16, 17, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097,
    ]
    .into_iter()
    .chain([262_143, 262_144, 262_145, (1 << 20) + 7])
    {
        let xh: Vec<f32> = (0..n).map(|_| rng.below(17) as f32 - 8.0).collect();
        let want: f64 = xh.iter().map(|&v| v as f64).sum();
        let x = upload(&s, &xh);
        assert_eq!(x.sum().unwrap().to_scalar().unwrap() as f64, want, "n={n}");
        let ones = GpuArray::<f32>::ones(&s, &[n]).unwrap();
        assert_eq!(
            x.dot(&ones).unwrap().to_scalar().unwrap() as f64,
            want,
            "dot n={n}"
        );
        // Misaligned by one element: the contiguous (non-vectorized) path.
        if n > 1 {
            let tail = x.slice(&[SliceArg::range(1, n as isize)]).unwrap();
            let want_tail = want - xh[0] as f64;
            assert_eq!(
                tail.sum().unwrap().to_scalar().unwrap() as f64,
                want_tail,
                "n={n}-1"
            );
        }
        let xd: Vec<f64> = xh.iter().map(|&v| v as f64).collect();
        let xd = upload(&s, &xd);
        assert_eq!(xd.sum().unwrap().to_scalar().unwrap(), want, "f64 n={n}");
        let xb: Vec<u8> = xh.iter().map(|&v| (v + 8.0) as u8).collect();
        let want_b: i64 = xb.iter().map(|&v| v as i64).sum();
        let xb = upload(&s, &xb);
        assert_eq!(
            xb.sum_as::<i64>().unwrap().to_scalar().unwrap(),
            want_b,
            "u8 n={n}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn nan_infinities_and_ties_follow_numpy() {
    let mut rng = Rng::fresh();
    let s = stream();
    for n in [1usize, 31, 1000, (1 << 20) + 7] {
        let mut xh: Vec<f32> = rng.vec(n);
        // Ties: the largest and smallest values appear twice, the first copy first.
        let (hi, lo) = (1000.0f32, -1000.0f32);
        let (a, b) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
        xh[a.min(b)] = hi;
        if a != b {
            xh[a.max(b)] = hi;
        }
        let x = upload(&s, &xh);
        assert_eq!(x.max().unwrap().to_scalar().unwrap(), hi, "n={n}");
        assert_eq!(
            x.argmax().unwrap().to_scalar().unwrap(),
            a.min(b) as i64,
            "n={n}"
        );
        let mut yh = xh.clone();
        let c = rng.below(n as u64) as usize;
        yh[c] = lo;
        yh[n - 1] = lo;
        let y = upload(&s, &yh);
        let first_lo = yh.iter().position(|&v| v == lo).unwrap() as i64;
        assert_eq!(y.argmin().unwrap().to_scalar().unwrap(), first_lo, "n={n}");
        // Infinities are ordinary values.
        yh[c] = f32::NEG_INFINITY;
        let y = upload(&s, &yh);
        assert_eq!(y.min().unwrap().to_scalar().unwrap(), f32::NEG_INFINITY);
        assert_eq!(y.argmin().unwrap().to_scalar().unwrap(), c as i64);
        // NaN propagates through max/min; argmax/argmin give the first NaN.
        let (p, q) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
        let mut zh = xh.clone();
        zh[p] = f32::NAN;
        zh[q] = f32::NAN;
        let z = upload(&s, &zh);
        assert!(z.max().unwrap().to_scalar().unwrap().is_nan(), "n={n}");
        assert!(z.min().unwrap().to_scalar().unwrap().is_nan(), "n={n}");
        assert_eq!(
            z.argmax().unwrap().to_scalar().unwrap(),
            p.min(q) as i64,
            "n={n}"
        );
        assert_eq!(
            z.argmin().unwrap().to_scalar().unwrap(),
            p.min(q) as i64,
            "n={n}"
        );
        assert!(z.sum().unwrap().to_scalar().unwrap().is_nan());
        let zd: Vec<f64> = zh.iter().map(|&v| v as f64).collect();
        let zd = upload(&s, &zd);
        assert!(zd.max().unwrap().to_scalar().unwrap().is_nan());
        assert_eq!(zd.argmin().unwrap().to_scalar().unwrap(), p.min(q) as i64);
        let zf: Vec<f16> = zh.iter().map(|&v| f16::from_f32(v / 16.0)).collect();
        let zf = upload(&s, &zf);
        assert!(zf.min().unwrap().to_scalar().unwrap().is_nan());
        assert_eq!(zf.argmax().unwrap().to_scalar().unwrap(), p.min(q) as i64);
    }
    // All NaN: index 0. any() counts NaN as nonzero; all() of zeros is false.
    let x = upload(&s, &[f64::NAN; 5]);
    assert_eq!(x.argmin().unwrap().to_scalar().unwrap(), 0);
    assert!(x.any().unwrap().to_scalar().unwrap() && x.all().unwrap().to_scalar().unwrap());
    let z = GpuArray::<f32>::zeros(&s, &[100]).unwrap();
    assert!(!z.any().unwrap().to_scalar().unwrap() && !z.all().unwrap().to_scalar().unwrap());
    let b = upload(&s, &[false, true, true]);
    assert_eq!(b.argmax().unwrap().to_scalar().unwrap(), 1);
    assert_eq!(b.sum_as::<i64>().unwrap().to_scalar().unwrap(), 2);
    assert!(!b.all().unwrap().to_scalar().unwrap() && !b.min().unwrap().to_scalar().unwrap());
}
