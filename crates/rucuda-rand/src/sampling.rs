//! cuRAND's transforms that draw from a generator's state, not from given outputs: the
//! Box–Muller normals of XORWOW, Philox and MRG32k3a with their cached second value, and
//! those generators' Poisson sampler (its rejection loop draws as many uniforms as it
//! needs). The arithmetic on outputs they call is in [`crate::distributions`].

use crate::distributions::{
    box_muller, box_muller_double, lgamma_integer, pgammainc, pgammaincinv,
};
use crate::math;
use crate::reference::{BoxMullerCache, CurandState};

/// A generator whose normals come from Box–Muller pairs of its own outputs (XORWOW,
/// Philox) or uniforms (MRG32k3a), with a cache of the second value.
pub(crate) trait BoxMullerSource: CurandState<Raw = u32> {
    fn cache(&mut self) -> &mut BoxMullerCache;
    /// One Box–Muller pair of floats: by default `_curand_box_muller` of two outputs.
    fn pair(&mut self) -> (f32, f32) {
        let x = self.curand();
        let y = self.curand();
        box_muller(x, y)
    }
    /// One Box–Muller pair of doubles: by default `_curand_box_muller_double` of four
    /// outputs.
    fn pair_double(&mut self) -> (f64, f64) {
        let x0 = self.curand();
        let x1 = self.curand();
        let y0 = self.curand();
        let y1 = self.curand();
        box_muller_double(x0, x1, y0, y1)
    }
}

/// `curand_normal` of a Box–Muller generator.
pub(crate) fn cached_normal<S: BoxMullerSource>(s: &mut S) -> f32 {
    if s.cache().flag != BoxMullerCache::NORMAL {
        let (a, b) = s.pair();
        let c = s.cache();
        c.extra = b;
        c.flag = BoxMullerCache::NORMAL;
        return a;
    }
    let c = s.cache();
    c.flag = 0;
    c.extra
}

/// `curand_normal_double` of a Box–Muller generator.
pub(crate) fn cached_normal_double<S: BoxMullerSource>(s: &mut S) -> f64 {
    if s.cache().flag_double != BoxMullerCache::NORMAL {
        let (a, b) = s.pair_double();
        let c = s.cache();
        c.extra_double = b;
        c.flag_double = BoxMullerCache::NORMAL;
        return a;
    }
    let c = s.cache();
    c.flag_double = 0;
    c.extra_double
}

/// `curand_log_normal` of a Box–Muller generator.
pub(crate) fn cached_log_normal<S: BoxMullerSource>(s: &mut S, mean: f32, stddev: f32) -> f32 {
    if s.cache().flag != BoxMullerCache::LOG_NORMAL {
        let (a, b) = s.pair();
        let c = s.cache();
        c.extra = math::expf(stddev.mul_add(b, mean));
        c.flag = BoxMullerCache::LOG_NORMAL;
        return math::expf(stddev.mul_add(a, mean));
    }
    let c = s.cache();
    c.flag = 0;
    c.extra
}

/// `curand_log_normal_double` of a Box–Muller generator.
pub(crate) fn cached_log_normal_double<S: BoxMullerSource>(
    s: &mut S,
    mean: f64,
    stddev: f64,
) -> f64 {
    if s.cache().flag_double != BoxMullerCache::LOG_NORMAL {
        let (a, b) = s.pair_double();
        let c = s.cache();
        c.extra_double = stddev.mul_add(b, mean).exp();
        c.flag_double = BoxMullerCache::LOG_NORMAL;
        return stddev.mul_add(a, mean).exp();
    }
    let c = s.cache();
    c.flag_double = 0;
    c.extra_double
}

/// `curand_poisson` of XORWOW, Philox and MRG32k3a: Knuth's product of uniforms below
/// λ = 64, a normal approximation above 4000, and between them a rejection method built
/// on an approximation of the regularized incomplete gamma function.
pub(crate) fn pseudo_poisson<S: CurandState>(s: &mut S, lambda: f64) -> u32 {
    if lambda < 64.0 {
        return poisson_knuth(s, lambda as f32);
    }
    if lambda > 4000.0 {
        return (lambda.sqrt().mul_add(s.normal_double(), lambda) + 0.5) as u32;
    }
    poisson_gammainc(s, lambda as f32)
}

/// `curand_poisson_knuth`: multiply uniforms into `e^λ` until the product is ≤ 1.
fn poisson_knuth<S: CurandState>(s: &mut S, lambda: f32) -> u32 {
    let mut k: u32 = 0;
    let mut p = math::expf(lambda);
    loop {
        k = k.wrapping_add(1);
        p *= s.uniform();
        if f64::from(p) <= 1.0 {
            break;
        }
    }
    k.wrapping_sub(1)
}

/// `curand_poisson_gammainc`: rejection sampling with the approximate incomplete gamma
/// function as the envelope.
fn poisson_gammainc<S: CurandState>(s: &mut S, lambda: f32) -> u32 {
    let logl = math::log_approx(lambda);
    loop {
        let y = s.uniform();
        let x = pgammaincinv(lambda, y).floor();
        let z = s.uniform();
        let v = (pgammainc(lambda, x + 1.0) - pgammainc(lambda, x)) * 1.3;
        let z = z * v;
        let lg = lgamma_integer((1.0 + x) as i32) as f32;
        let t = math::exp_approx(x.mul_add(logl, -lambda) - lg);
        if z < t && f64::from(v) >= 1e-20 {
            return x as u32;
        }
    }
}

/// The [`CurandState`] methods a [`BoxMullerSource`] shares with the other two (normals
/// and log-normals through its cache, Poisson counts through [`pseudo_poisson`]), written
/// inside its `impl CurandState`.
macro_rules! box_muller_state_methods {
    () => {
        fn normal(&mut self) -> f32 {
            $crate::sampling::cached_normal(self)
        }

        fn normal_double(&mut self) -> f64 {
            $crate::sampling::cached_normal_double(self)
        }

        fn log_normal(&mut self, mean: f32, stddev: f32) -> f32 {
            $crate::sampling::cached_log_normal(self, mean, stddev)
        }

        fn log_normal_double(&mut self, mean: f64, stddev: f64) -> f64 {
            $crate::sampling::cached_log_normal_double(self, mean, stddev)
        }

        fn poisson(&mut self, lambda: f64) -> u32 {
            $crate::sampling::pseudo_poisson(self, lambda)
        }
    };
}

pub(crate) use box_muller_state_methods;
