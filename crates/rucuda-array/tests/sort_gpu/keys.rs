//! Test key types: a host order matching the library's (NaNs last in both orders, `-0.0`
//! before `+0.0`), equality that treats every NaN alike, and generators per distribution.

use std::cmp::Ordering;

use crate::common::Rng;
use rucuda_array::{bf16, f16, Element};

/// How test keys are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dist {
    Uniform,
    AllEqual,
    Sorted,
    Reversed,
    FewDistinct,
    /// Floats: NaNs, infinities, signed zeros among the values (integers: extremes).
    Special,
}

pub const DISTS: [Dist; 6] = [
    Dist::Uniform,
    Dist::AllEqual,
    Dist::Sorted,
    Dist::Reversed,
    Dist::FewDistinct,
    Dist::Special,
];

pub trait TestKey: Element + Copy + std::fmt::Debug + Send + Sync {
    /// Ascending order with NaNs last and -0.0 < +0.0.
    fn cmp_asc(&self, other: &Self) -> Ordering;
    /// A value from raw random bits (full range for integers, ±100-ish for floats).
    fn from_random(bits: u64) -> Self;
    /// Special values (NaN, ±inf, ±0 for floats; MIN, MAX, 0 for integers).
    fn specials() -> Vec<Self>;
    /// Same value (every NaN alike).
    fn same(&self, other: &Self) -> bool {
        self.cmp_asc(other) == Ordering::Equal
    }
    /// A NaN.
    fn is_nan_key(&self) -> bool {
        false
    }
    /// A float zero of either sign.
    fn is_zero_float(&self) -> bool {
        false
    }
}

/// NumPy's value order (searchsorted, unique): the sort order with -0.0 equal to +0.0.
pub fn cmp_value<T: TestKey>(a: &T, b: &T) -> Ordering {
    if a.is_zero_float() && b.is_zero_float() {
        Ordering::Equal
    } else {
        a.cmp_asc(b)
    }
}

/// The library's order: `descending` reverses it but keeps NaNs last.
pub fn cmp_order<T: TestKey>(a: &T, b: &T, descending: bool) -> Ordering {
    let o = a.cmp_asc(b);
    if !descending {
        return o;
    }
    match (a.is_nan_key(), b.is_nan_key()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => o.reverse(),
    }
}

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl TestKey for $t {
            fn cmp_asc(&self, other: &Self) -> Ordering { self.cmp(other) }
            fn from_random(bits: u64) -> Self { bits as $t }
            fn specials() -> Vec<Self> { vec![<$t>::MIN, <$t>::MAX, 0 as $t, 1 as $t] }
        }
    )*};
}
int_key!(i8, i16, i32, i64, u8, u16, u32, u64);

impl TestKey for bool {
    fn cmp_asc(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn from_random(bits: u64) -> Self {
        bits & 1 == 1
    }
    fn specials() -> Vec<Self> {
        vec![false, true]
    }
}

fn float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.total_cmp(&b),
    }
}

/// A float in about [-100, 100) from random bits, with a few exact repeats likely.
fn unit(bits: u64) -> f64 {
    ((bits >> 11) as f64 / (1u64 << 53) as f64) * 200.0 - 100.0
}

macro_rules! float_key {
    ($t:ty, $from:expr, $to:expr) => {
        impl TestKey for $t {
            fn cmp_asc(&self, other: &Self) -> Ordering {
                let to: fn($t) -> f64 = $to;
                float_cmp(to(*self), to(*other))
            }
            fn is_nan_key(&self) -> bool {
                let to: fn($t) -> f64 = $to;
                to(*self).is_nan()
            }
            fn is_zero_float(&self) -> bool {
                let to: fn($t) -> f64 = $to;
                to(*self) == 0.0
            }
            fn from_random(bits: u64) -> Self {
                let from: fn(f64) -> $t = $from;
                from(unit(bits))
            }
            fn specials() -> Vec<Self> {
                let from: fn(f64) -> $t = $from;
                vec![
                    from(f64::NAN),
                    from(-f64::NAN),
                    from(f64::INFINITY),
                    from(f64::NEG_INFINITY),
                    from(0.0),
                    from(-0.0),
                    from(1.5),
                ]
            }
        }
    };
}
float_key!(f32, |x| x as f32, |x| x as f64);
float_key!(f64, |x| x, |x| x);
float_key!(f16, f16::from_f64, f16::to_f64);
float_key!(bf16, bf16::from_f64, bf16::to_f64);

/// `n` keys of distribution `dist`.
pub fn draw<T: TestKey>(rng: &mut Rng, n: usize, dist: Dist) -> Vec<T> {
    let mut v: Vec<T> = match dist {
        Dist::Uniform | Dist::Sorted | Dist::Reversed => {
            (0..n).map(|_| T::from_random(rng.next_u64())).collect()
        }
        Dist::AllEqual => vec![T::from_random(rng.next_u64()); n],
        Dist::FewDistinct => {
            let pool: Vec<T> = (0..5).map(|_| T::from_random(rng.next_u64())).collect();
            (0..n)
                .map(|_| pool[(rng.next_u64() % 5) as usize])
                .collect()
        }
        Dist::Special => {
            let sp = T::specials();
            (0..n)
                .map(|_| {
                    let r = rng.next_u64();
                    if r % 3 == 0 {
                        sp[(r >> 8) as usize % sp.len()]
                    } else {
                        T::from_random(rng.next_u64())
                    }
                })
                .collect()
        }
    };
    match dist {
        Dist::Sorted => v.sort_by(|a, b| a.cmp_asc(b)),
        Dist::Reversed => v.sort_by(|a, b| b.cmp_asc(a)),
        _ => {}
    }
    v
}
