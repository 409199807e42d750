//! The CPU stand-ins for the CUDA math functions cuRAND's transforms call.
//!
//! Each is computed in double precision from the float argument and rounded once, so it is
//! the correctly rounded result in all but rare ties; CUDA's versions are within 1–2 ulp
//! of that (`logf`, `expf`, `erfcinvf`, double `log`, `sincospi`, `erfcinv`), and the
//! hardware approximations (`__sincosf`, `ex2.approx`, `lg2.approx`, `rsqrt.approx`,
//! `rcp.approx`) within about 2^-21 relative (absolute for the sine and cosine).

/// `sqrtf`: IEEE, correctly rounded on both sides.
#[inline]
pub fn sqrtf(x: f32) -> f32 {
    x.sqrt()
}

/// `logf`.
#[inline]
pub fn logf(x: f32) -> f32 {
    f64::from(x).ln() as f32
}

/// `expf`.
#[inline]
pub fn expf(x: f32) -> f32 {
    f64::from(x).exp() as f32
}

/// `__sincosf(x)` as `(sin, cos)`.
#[inline]
pub fn sincosf(x: f32) -> (f32, f32) {
    let (s, c) = f64::from(x).sin_cos();
    (s as f32, c as f32)
}

/// `rsqrt.approx.f32`: 1/√x.
#[inline]
pub fn rsqrt_approx(x: f32) -> f32 {
    (1.0 / f64::from(x).sqrt()) as f32
}

/// `rcp.approx.f32`: 1/x.
#[inline]
pub fn rcp_approx(x: f32) -> f32 {
    (1.0 / f64::from(x)) as f32
}

/// cuRAND's `__cr_exp`: `x · log2(e)` in double rounded to float, then `ex2.approx`.
#[inline]
pub fn exp_approx(x: f32) -> f32 {
    let t = (f64::from(x) * std::f64::consts::LOG2_E) as f32;
    f64::from(t).exp2() as f32
}

/// cuRAND's `__cr_log`: `lg2.approx`, then `· ln 2` in double rounded to float.
#[inline]
pub fn log_approx(x: f32) -> f32 {
    let t = f64::from(x).log2() as f32;
    (f64::from(t) * std::f64::consts::LN_2) as f32
}

/// `sincospi(x)` as `(sin πx, cos πx)`, reducing the argument exactly first.
pub fn sincospi(x: f64) -> (f64, f64) {
    if !x.is_finite() {
        return (f64::NAN, f64::NAN);
    }
    // x = 2m + r with r in [-1, 1]; then r = q/2 + f with f in [-1/4, 1/4]. Both steps
    // subtract exactly representable multiples of 1/2 and are exact.
    let r = x - 2.0 * (x / 2.0).round();
    let q = (2.0 * r).round();
    let f = r - q / 2.0;
    let (s, c) = (std::f64::consts::PI * f).sin_cos();
    // sin(π(f + q/2)), cos(π(f + q/2)) by quadrant.
    match (q as i64).rem_euclid(4) {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// erfc⁻¹(y) for y in [0, 2]: Halley's iteration on `erfc`, safeguarded by bisection.
///
/// ```
/// let x = rucuda_rand::math::erfcinv(0.3);
/// assert!((libm::erfc(x) - 0.3).abs() < 1e-16);
/// ```
pub fn erfcinv(y: f64) -> f64 {
    if y.is_nan() || !(0.0..=2.0).contains(&y) {
        return f64::NAN;
    }
    if y == 0.0 {
        return f64::INFINITY;
    }
    if y == 2.0 {
        return f64::NEG_INFINITY;
    }
    if y > 1.0 {
        // 2 - y is exact for y in [1, 2].
        return -erfcinv(2.0 - y);
    }
    if y == 1.0 {
        return 0.0;
    }
    // erfc is decreasing; the root lies in [lo, hi].
    let (mut lo, mut hi) = (0.0f64, 27.3f64);
    // Start from the tail asymptote, or the linear term near y = 1.
    let mut x = if y < 0.5 {
        let l = -y.ln();
        (l - 0.5 * (std::f64::consts::PI * l).ln()).max(0.01).sqrt()
    } else {
        (1.0 - y) * 0.886_226_925_452_758
    };
    let two_over_sqrt_pi = std::f64::consts::FRAC_2_SQRT_PI;
    for _ in 0..100 {
        let f = libm::erfc(x) - y;
        if f > 0.0 {
            lo = x;
        } else if f < 0.0 {
            hi = x;
        } else {
            return x;
        }
        // Newton step for erfc(x) - y, f' = -2/√π e^{-x²}, f''/f' = -2x; Halley's
        // correction divides by (1 + x·dx).
        let dfdx = -two_over_sqrt_pi * (-x * x).exp();
        let dx = -f / dfdx;
        let step = dx / (1.0 + x * dx);
        let mut next = x + step;
        if !next.is_finite() || next <= lo || next >= hi {
            next = 0.5 * (lo + hi);
        }
        if (next - x).abs() <= 1e-17 * x.abs() {
            return next;
        }
        x = next;
    }
    x
}

/// `erfcinvf`: [`erfcinv`] of the float argument, rounded to float.
#[inline]
pub fn erfcinvf(y: f32) -> f32 {
    erfcinv(f64::from(y)) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfcinv_inverts_erfc() {
        for &y in &[
            1e-300,
            1e-20,
            2.3e-10,
            1e-3,
            0.1,
            0.5,
            0.9,
            0.999_999,
            1.0,
            1.2,
            1.9,
            2.0 - 1e-12,
        ] {
            let x = erfcinv(y);
            let back = libm::erfc(x);
            // erfc's relative slope is about 2x, so x's own rounding moves erfc(x) by
            // 2x·ulp(x) relative.
            let tol = y * (8e-16 + 4.0 * x.abs() * x.abs().max(1.0) * f64::EPSILON);
            assert!((back - y).abs() <= tol, "y={y}: x={x}, erfc(x)={back}");
        }
        assert_eq!(erfcinv(0.0), f64::INFINITY);
        assert_eq!(erfcinv(2.0), f64::NEG_INFINITY);
        assert!(erfcinv(-0.1).is_nan());
    }

    #[test]
    fn sincospi_quadrants() {
        let cases = [
            (0.0, 0.0, 1.0),
            (0.5, 1.0, 0.0),
            (1.0, 0.0, -1.0),
            (1.5, -1.0, 0.0),
            (2.0, 0.0, 1.0),
            (0.25, 0.5f64.sqrt(), 0.5f64.sqrt()),
        ];
        for (x, s, c) in cases {
            let (gs, gc) = sincospi(x);
            assert!(
                (gs - s).abs() < 1e-15 && (gc - c).abs() < 1e-15,
                "x={x}: {gs} {gc}"
            );
        }
        for i in 0..1000 {
            let x = i as f64 * 0.002_1;
            let (s, c) = sincospi(x);
            let (ws, wc) = (std::f64::consts::PI * x).sin_cos();
            assert!((s - ws).abs() < 1e-14 && (c - wc).abs() < 1e-14);
        }
    }
}
