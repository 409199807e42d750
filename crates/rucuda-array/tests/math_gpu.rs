//! GPU tests of cumath: every function on f32 and f64 against Rust's f64 std functions
//! (a few ULP of the result type, plus a small absolute term near zero), f16/bf16 through
//! f32 (one rounding), complex functions against num-complex, fmod/ldexp/frexp/modf, NaN
//! and infinities, `out` arrays and streams. Fresh random inputs, outputs poisoned.

mod common;

use common::{stream, Rng};
use rucuda_array::{bf16, f16, math, Complex, Element, GpuArray, SliceArg};
use rucuda_driver::{Stream, StreamFlags};

type Dev<T> = fn(&GpuArray<T>) -> rucuda_array::Result<GpuArray<T>>;

struct Case {
    name: &'static str,
    f32: Dev<f32>,
    f64: Dev<f64>,
    f16: Dev<f16>,
    bf16: Dev<bf16>,
    reference: fn(f64) -> f64,
    lo: f64,
    hi: f64,
}

macro_rules! case {
    ($f:ident, $r:expr, $lo:expr, $hi:expr) => {
        Case {
            name: stringify!($f),
            f32: math::$f::<f32>,
            f64: math::$f::<f64>,
            f16: math::$f::<f16>,
            bf16: math::$f::<bf16>,
            reference: $r,
            lo: $lo,
            hi: $hi,
        }
    };
}

fn cases() -> Vec<Case> {
    vec![
        case!(sin, f64::sin, -100.0, 100.0),
        case!(cos, f64::cos, -100.0, 100.0),
        case!(tan, f64::tan, -1.5, 1.5),
        case!(asin, f64::asin, -1.0, 1.0),
        case!(acos, f64::acos, -1.0, 1.0),
        case!(atan, f64::atan, -50.0, 50.0),
        case!(sinh, f64::sinh, -10.0, 10.0),
        case!(cosh, f64::cosh, -10.0, 10.0),
        case!(tanh, f64::tanh, -5.0, 5.0),
        case!(exp, f64::exp, -20.0, 10.0),
        case!(log, f64::ln, 1e-3, 1e4),
        case!(log10, f64::log10, 1e-3, 1e4),
        case!(sqrt, f64::sqrt, 0.0, 1e4),
        case!(fabs, f64::abs, -100.0, 100.0),
        case!(ceil, f64::ceil, -100.0, 100.0),
        case!(floor, f64::floor, -100.0, 100.0),
    ]
}

fn uniform(rng: &mut Rng, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    (0..n)
        .map(|_| lo + (rng.unit() + 1.0) * 0.5 * (hi - lo))
        .collect()
}

/// |got - want| <= rel * |want| + abs, NaN matching NaN, infinities exactly.
fn check(name: &str, got: &[f64], want: &[f64], rel: f64, abs: f64) {
    assert_eq!(got.len(), want.len());
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = (g.is_nan() && w.is_nan())
            || g == w
            || (g.is_finite() && w.is_finite() && (g - w).abs() <= rel * w.abs() + abs);
        assert!(ok, "{name}: element {k}: got {g:e}, want {w:e}");
    }
}

fn poison_pool(s: &Stream) {
    drop(GpuArray::<u32>::full(s, &[1 << 22], 0xA5A5_A5A5).unwrap());
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_function_on_f32_and_f64_matches_std() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 4099;
    for c in cases() {
        let xs = uniform(&mut rng, n, c.lo, c.hi);
        // f64: a couple of ULP.
        let x = GpuArray::from_slice(&s, &xs).unwrap();
        poison_pool(&s);
        let got = (c.f64)(&x).unwrap().to_vec().unwrap();
        let want: Vec<f64> = xs.iter().map(|&v| (c.reference)(v)).collect();
        check(&format!("{} f64", c.name), &got, &want, 1e-14, 1e-300);
        // f32: inputs rounded to f32 first; the reference in f64 from those inputs.
        let x32: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
        let x = GpuArray::from_slice(&s, &x32).unwrap();
        let got: Vec<f64> = (c.f32)(&x)
            .unwrap()
            .to_vec()
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect();
        let want: Vec<f64> = x32.iter().map(|&v| (c.reference)(v as f64)).collect();
        // sin/cos of large arguments lose relative accuracy near zeros: an absolute term.
        check(&format!("{} f32", c.name), &got, &want, 6e-7 * 4.0, 4e-7);
        // f16 and bf16: computed in f32, rounded once (one unit of the result type).
        let h: Vec<f16> = xs.iter().map(|&v| f16::from_f64(v)).collect();
        let hv = GpuArray::from_slice(&s, &h).unwrap();
        let got: Vec<f64> = (c.f16)(&hv)
            .unwrap()
            .to_vec()
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect();
        let want: Vec<f64> = h
            .iter()
            .map(|&v| f16::from_f64((c.reference)(v.to_f64())).to_f64())
            .collect();
        check(&format!("{} f16", c.name), &got, &want, 1e-3, 1e-4);
        let b: Vec<bf16> = xs.iter().map(|&v| bf16::from_f64(v)).collect();
        let bv = GpuArray::from_slice(&s, &b).unwrap();
        let got: Vec<f64> = (c.bf16)(&bv)
            .unwrap()
            .to_vec()
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect();
        let want: Vec<f64> = b
            .iter()
            .map(|&v| bf16::from_f64((c.reference)(v.to_f64())).to_f64())
            .collect();
        check(&format!("{} bf16", c.name), &got, &want, 1e-2, 1e-3);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn nan_infinities_and_domain_edges() {
    let s = stream();
    let x = GpuArray::from_slice(
        &s,
        &[
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1.0,
            0.0,
            -0.0,
            2.0,
        ],
    )
    .unwrap();
    let v = |a: GpuArray<f64>| a.to_vec().unwrap();
    let sq = v(math::sqrt(&x).unwrap());
    assert!(sq[0].is_nan() && sq[1] == f64::INFINITY && sq[2].is_nan() && sq[3].is_nan());
    assert!(sq[4] == 0.0 && sq[5] == 0.0 && sq[5].is_sign_negative());
    let lg = v(math::log(&x).unwrap());
    assert!(lg[0].is_nan() && lg[1] == f64::INFINITY && lg[2].is_nan() && lg[3].is_nan());
    assert!(lg[4] == f64::NEG_INFINITY && lg[5] == f64::NEG_INFINITY);
    let ex = v(math::exp(&x).unwrap());
    assert!(ex[0].is_nan() && ex[1] == f64::INFINITY && ex[2] == 0.0 && ex[4] == 1.0);
    let th = v(math::tanh(&x).unwrap());
    assert!(th[0].is_nan() && th[1] == 1.0 && th[2] == -1.0);
    let asn = v(math::asin(&x).unwrap());
    assert!(asn[0].is_nan() && asn[1].is_nan() && asn[6].is_nan());
    assert!((asn[3] + std::f64::consts::FRAC_PI_2).abs() < 1e-15);
    let fl = v(math::floor(&x).unwrap());
    assert!(fl[0].is_nan() && fl[1] == f64::INFINITY && fl[5] == 0.0 && fl[5].is_sign_negative());
    let h =
        GpuArray::from_slice(&s, &[f16::NAN, f16::from_f32(-4.0), f16::from_f32(65504.0)]).unwrap();
    let hs = math::sqrt(&h).unwrap().to_vec().unwrap();
    assert!(hs[0].is_nan() && hs[1].is_nan() && (hs[2].to_f32() - 255.94).abs() < 0.2);
}

#[test]
#[ignore = "needs a CUDA device"]
fn complex_functions_match_num_complex() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 1031;
    let zs: Vec<Complex<f64>> = (0..n)
        .map(|_| Complex::new(rng.unit() * 3.0, rng.unit() * 3.0))
        .collect();
    type C = Complex<f64>;
    type Reference = (&'static str, fn(C) -> C);
    let refs: Vec<Reference> = vec![
        ("sin", C::sin),
        ("cos", C::cos),
        ("tan", C::tan),
        ("sinh", C::sinh),
        ("cosh", C::cosh),
        ("tanh", C::tanh),
        ("exp", C::exp),
        ("log", C::ln),
        ("log10", C::log10),
        ("sqrt", C::sqrt),
    ];
    let z64 = GpuArray::from_slice(&s, &zs).unwrap();
    let z32h: Vec<Complex<f32>> = zs
        .iter()
        .map(|c| Complex::new(c.re as f32, c.im as f32))
        .collect();
    let z32 = GpuArray::from_slice(&s, &z32h).unwrap();
    for (name, r) in refs {
        let (d64, d32) = match name {
            "sin" => (math::sin(&z64), math::sin(&z32)),
            "cos" => (math::cos(&z64), math::cos(&z32)),
            "tan" => (math::tan(&z64), math::tan(&z32)),
            "sinh" => (math::sinh(&z64), math::sinh(&z32)),
            "cosh" => (math::cosh(&z64), math::cosh(&z32)),
            "tanh" => (math::tanh(&z64), math::tanh(&z32)),
            "exp" => (math::exp(&z64), math::exp(&z32)),
            "log" => (math::log(&z64), math::log(&z32)),
            "log10" => (math::log10(&z64), math::log10(&z32)),
            _ => (math::sqrt(&z64), math::sqrt(&z32)),
        };
        let g64 = d64.unwrap().to_vec().unwrap();
        let g32 = d32.unwrap().to_vec().unwrap();
        // num-complex's tan and tanh divide by cosh(2y) + cos(2x) (resp. cosh(2x) +
        // cos(2y)), which cancels near the poles: skip points where that reference is
        // itself inaccurate.
        let near_pole = |z: C| match name {
            "tan" => (2.0 * z.re).cos() + (2.0 * z.im).cosh() < 0.05,
            "tanh" => (2.0 * z.re).cosh() + (2.0 * z.im).cos() < 0.05,
            _ => false,
        };
        for k in 0..n {
            if near_pole(zs[k]) {
                continue;
            }
            let w = r(zs[k]);
            let scale = w.re.abs().max(w.im.abs()).max(1e-300);
            // Relative to the larger component, with an absolute term (log near 1).
            let e64 = (g64[k] - w).norm();
            assert!(
                e64 <= 1e-13 * scale + 1e-15,
                "{name} c128 at {:?}: got {:?}, want {w:?}",
                zs[k],
                g64[k]
            );
            let w32 = r(Complex::new(z32h[k].re as f64, z32h[k].im as f64));
            let g = Complex::new(g32[k].re as f64, g32[k].im as f64);
            let scale = w32.re.abs().max(w32.im.abs()).max(1e-30);
            assert!(
                (g - w32).norm() <= 3e-6 * scale + 4e-7,
                "{name} c64 at {:?}: got {g:?}, want {w32:?}",
                z32h[k]
            );
        }
    }
    // The principal square root of negative reals; exp of a pure real.
    let z = GpuArray::from_slice(
        &s,
        &[
            Complex::new(-4.0f64, 0.0),
            Complex::new(-4.0, -0.0),
            Complex::new(1.0, 0.0),
        ],
    )
    .unwrap();
    let r = math::sqrt(&z).unwrap().to_vec().unwrap();
    assert_eq!(r[0], Complex::new(0.0, 2.0));
    assert_eq!(r[1], Complex::new(0.0, -2.0));
    assert_eq!(
        math::exp(&z).unwrap().to_vec().unwrap()[2],
        Complex::new(std::f64::consts::E, 0.0)
    );
}

fn frexp_ref(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let mut e = x.abs().log2().floor() as i32 + 1;
    let mut m = x / 2f64.powi(e);
    // Correct log2 rounding at exact powers of two.
    if m.abs() >= 1.0 {
        m /= 2.0;
        e += 1;
    } else if m.abs() < 0.5 {
        m *= 2.0;
        e -= 1;
    }
    (m, e)
}

#[test]
#[ignore = "needs a CUDA device"]
fn fmod_ldexp_frexp_and_modf() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 2053;
    let xs = uniform(&mut rng, n, -1e3, 1e3);
    let ds: Vec<f64> = uniform(&mut rng, n, 0.5, 40.0)
        .into_iter()
        .enumerate()
        .map(|(k, v)| if k % 2 == 0 { v } else { -v })
        .collect();
    let x = GpuArray::from_slice(&s, &xs).unwrap();
    let d = GpuArray::from_slice(&s, &ds).unwrap();
    let got = math::fmod(&x, &d).unwrap().to_vec().unwrap();
    let want: Vec<f64> = xs.iter().zip(&ds).map(|(a, b)| a % b).collect();
    assert_eq!(got, want, "fmod is exact");
    let got: Vec<f32> = math::fmod(&x.astype::<f32>().unwrap(), 3.0f32)
        .unwrap()
        .to_vec()
        .unwrap();
    let want: Vec<f32> = xs.iter().map(|&a| (a as f32) % 3.0).collect();
    assert_eq!(got, want);
    let zero: Vec<f64> = math::fmod(&x, 0.0).unwrap().to_vec().unwrap();
    assert!(zero.iter().all(|v| v.is_nan()));
    // ldexp with arrays and a scalar exponent.
    let es: Vec<i32> = (0..n).map(|_| rng.below(60) as i32 - 30).collect();
    let e = GpuArray::from_slice(&s, &es).unwrap();
    let got = math::ldexp(&x, &e).unwrap().to_vec().unwrap();
    let want: Vec<f64> = xs
        .iter()
        .zip(&es)
        .map(|(&a, &k)| a * 2f64.powi(k))
        .collect();
    assert_eq!(got, want);
    let got = math::ldexp_scalar(&x, -3).unwrap().to_vec().unwrap();
    assert_eq!(got, xs.iter().map(|&a| a / 8.0).collect::<Vec<_>>());
    // frexp and modf; with special values.
    let mut xs2 = xs.clone();
    xs2[0] = 0.0;
    xs2[1] = -0.5;
    xs2[2] = 1024.0;
    xs2[3] = f64::INFINITY;
    xs2[4] = f64::NAN;
    let x2 = GpuArray::from_slice(&s, &xs2).unwrap();
    let (m, ex) = math::frexp(&x2).unwrap();
    let (m, ex) = (m.to_vec().unwrap(), ex.to_vec().unwrap());
    for k in 0..n {
        let (wm, we) = frexp_ref(xs2[k]);
        if xs2[k].is_nan() {
            assert!(m[k].is_nan());
            continue;
        }
        assert_eq!(m[k], wm, "frexp mantissa of {}", xs2[k]);
        if xs2[k].is_finite() {
            assert_eq!(ex[k], we, "frexp exponent of {}", xs2[k]);
        }
    }
    let (f, w) = math::modf(&x2).unwrap();
    let (f, w) = (f.to_vec().unwrap(), w.to_vec().unwrap());
    for k in 5..n {
        assert_eq!(f[k], xs2[k].fract(), "{}", xs2[k]);
        assert_eq!(w[k], xs2[k].trunc(), "{}", xs2[k]);
    }
    assert_eq!((f[3], w[3]), (0.0, f64::INFINITY));
    // f32 and f16 through the same kernels.
    let h: Vec<f16> = [0.75f32, -3.5, 1000.0].map(f16::from_f32).to_vec();
    let (hm, he) = math::frexp(&GpuArray::from_slice(&s, &h).unwrap()).unwrap();
    assert_eq!(
        hm.to_vec().unwrap(),
        [0.75f32, -0.875, 0.9765625].map(f16::from_f32)
    );
    assert_eq!(he.to_vec().unwrap(), vec![0, 2, 10]);
    // Outputs that overlap the input are refused.
    let mut same = x.view();
    assert!(math::ldexp_into(&x, &e, &mut same, None).is_err());
}

#[test]
#[ignore = "needs a CUDA device"]
fn out_arrays_streams_and_views() {
    let mut rng = Rng::fresh();
    let s = stream();
    let other = Stream::new(&common::ctx(), StreamFlags::NON_BLOCKING).unwrap();
    let n = 1000;
    let xs: Vec<f32> = uniform(&mut rng, 3 * n, -3.0, 3.0)
        .into_iter()
        .map(|v| v as f32)
        .collect();
    let x = GpuArray::from_slice(&s, &xs).unwrap();
    // A strided view, into an f64 output (same_kind), on another stream.
    let v = x.slice(&[SliceArg::stepped(None, None, 3)]).unwrap();
    let mut out = GpuArray::<f64>::full(&s, &[n], f64::NAN).unwrap();
    math::exp_into(&v, &mut out, Some(&other)).unwrap();
    let got = out.to_vec().unwrap();
    for k in 0..n {
        let w = (xs[3 * k]).exp() as f64;
        assert!(
            (got[k] - w).abs() <= 6e-7 * w.abs(),
            "{k}: {} vs {w}",
            got[k]
        );
    }
    // Into an integer array: refused (same_kind).
    let mut bad = GpuArray::<i32>::zeros(&s, &[n]).unwrap();
    assert!(math::sin_into(&v, &mut bad, None).is_err());
    // In place (out is the input).
    let y = GpuArray::from_slice(&s, &xs).unwrap();
    let mut yy = y.view();
    math::cos_into(&y, &mut yy, None).unwrap();
    let want: Vec<f32> = xs.iter().map(|v| v.cos()).collect();
    let got = y.to_vec().unwrap();
    for k in 0..3 * n {
        assert!((got[k] - want[k]).abs() <= 1e-6, "{k}");
    }
    // On another stream: the result's home stream is that stream.
    let r = math::sqrt_on(&x.maximum(0.0f32).unwrap(), &other).unwrap();
    assert_eq!(r.stream().raw(), other.raw());
    let got = r.to_vec().unwrap();
    for k in 0..3 * n {
        assert!((got[k] - xs[k].max(0.0).sqrt()).abs() <= 1e-6 * (1.0 + xs[k].abs()));
    }
    // Broadcasting a row into a matrix output.
    let row = GpuArray::from_slice(&s, &[0.0f64, 1.0, 2.0]).unwrap();
    let mut m = GpuArray::<f64>::zeros(&s, &[2, 3]).unwrap();
    math::exp_into(&row, &mut m, None).unwrap();
    let e = [
        1.0,
        std::f64::consts::E,
        std::f64::consts::E * std::f64::consts::E,
    ];
    let got = m.to_vec().unwrap();
    for (k, g) in got.iter().enumerate() {
        assert!((g - e[k % 3]).abs() < 1e-15 * e[k % 3] * 4.0, "{k}");
    }
    assert_eq!(f32::DTYPE, rucuda_array::DType::F32);
}
