//! The element types of the collective suite, each with a CPU model of NCCL's arithmetic:
//! how to draw inputs fit for a reduction and how NCCL reduces and averages them.

use rucuda_array::{bf16, f16, Complex, Element};
use rucuda_nccl::ReduceOp;
use rucuda_testkit::SplitMix64;

/// An element type of the suite: how to draw inputs and reduce them on the CPU.
pub trait TestElem: Element {
    /// Its name in messages.
    const NAME: &'static str;
    /// The reductions it supports.
    const OPS: &'static [ReduceOp];
    /// A random value fit for `op` (small values where an average must not overflow,
    /// values near 1 where products must stay finite).
    fn random(rng: &mut SplitMix64, op: Option<ReduceOp>) -> Self;
    /// `op` of two values, as NCCL computes it.
    fn reduce(op: ReduceOp, a: Self, b: Self) -> Self;
    /// The average of `n` values whose sum is `sum`.
    fn average(sum: Self, n: usize) -> Self;
    /// Whether `got` is close enough to `want` for a reduction over `n` ranks.
    fn close(got: Self, want: Self, n: usize) -> bool;
}

macro_rules! int_elem {
    ($($t:ty, $avg_lo:expr, $avg_hi:expr);* $(;)?) => {$(
        impl TestElem for $t {
            const NAME: &'static str = stringify!($t);
            const OPS: &'static [ReduceOp] = &ReduceOp::ALL;
            fn random(rng: &mut SplitMix64, op: Option<ReduceOp>) -> Self {
                match op {
                    Some(ReduceOp::Avg) => rng.next_i32_in($avg_lo, $avg_hi) as $t,
                    _ => rng.next_u64() as $t,
                }
            }
            fn reduce(op: ReduceOp, a: Self, b: Self) -> Self {
                match op {
                    ReduceOp::Sum | ReduceOp::Avg => a.wrapping_add(b),
                    ReduceOp::Prod => a.wrapping_mul(b),
                    ReduceOp::Max => a.max(b),
                    ReduceOp::Min => a.min(b),
                }
            }
            fn average(sum: Self, n: usize) -> Self {
                // Truncating division (toward zero), as NCCL divides integer sums.
                sum / (n as $t)
            }
            fn close(got: Self, want: Self, _: usize) -> bool {
                got == want
            }
        }
    )*};
}

int_elem! {
    i8, -8, 8; u8, 0, 16; i32, -1000, 1000; u32, 0, 1000; i64, -1000, 1000; u64, 0, 1000;
}

fn random_float(rng: &mut SplitMix64, op: Option<ReduceOp>) -> f64 {
    let x = rng.next_f64();
    match op {
        // Products of values near 1 stay finite and keep their precision.
        Some(ReduceOp::Prod) => 1.0 + 0.25 * x,
        _ => x,
    }
}

fn reduce_f64(op: ReduceOp, a: f64, b: f64) -> f64 {
    match op {
        ReduceOp::Sum | ReduceOp::Avg => a + b,
        ReduceOp::Prod => a * b,
        ReduceOp::Max => a.max(b),
        ReduceOp::Min => a.min(b),
    }
}

macro_rules! float_elem {
    ($($t:ty, $tol:expr, $to:expr, $from:expr);* $(;)?) => {$(
        impl TestElem for $t {
            const NAME: &'static str = stringify!($t);
            const OPS: &'static [ReduceOp] = &ReduceOp::ALL;
            fn random(rng: &mut SplitMix64, op: Option<ReduceOp>) -> Self {
                $from(random_float(rng, op))
            }
            fn reduce(op: ReduceOp, a: Self, b: Self) -> Self {
                $from(reduce_f64(op, $to(a), $to(b)))
            }
            fn average(sum: Self, n: usize) -> Self {
                $from($to(sum) / n as f64)
            }
            fn close(got: Self, want: Self, n: usize) -> bool {
                let (g, w) = ($to(got), $to(want));
                (g - w).abs() <= $tol * (n as f64) * w.abs().max(1.0)
            }
        }
    )*};
}

float_elem! {
    f32, 1e-5, f64::from, |v: f64| v as f32;
    f64, 1e-12, |v: f64| v, |v: f64| v;
    f16, 4e-3, f16::to_f64, f16::from_f64;
    bf16, 3e-2, bf16::to_f64, bf16::from_f64;
}

macro_rules! complex_elem {
    ($($t:ty, $tol:expr);* $(;)?) => {$(
        impl TestElem for Complex<$t> {
            const NAME: &'static str = concat!("Complex<", stringify!($t), ">");
            const OPS: &'static [ReduceOp] = &[ReduceOp::Sum, ReduceOp::Avg];
            fn random(rng: &mut SplitMix64, _: Option<ReduceOp>) -> Self {
                Complex::new(rng.next_f64() as $t, rng.next_f64() as $t)
            }
            fn reduce(_: ReduceOp, a: Self, b: Self) -> Self {
                a + b
            }
            fn average(sum: Self, n: usize) -> Self {
                sum / (n as $t)
            }
            fn close(got: Self, want: Self, n: usize) -> bool {
                let tol = $tol * n as f64;
                ((got.re - want.re) as f64).abs() <= tol * (want.re.abs() as f64).max(1.0)
                    && ((got.im - want.im) as f64).abs() <= tol * (want.im.abs() as f64).max(1.0)
            }
        }
    )*};
}

complex_elem! { f32, 1e-5; f64, 1e-12 }

impl TestElem for bool {
    const NAME: &'static str = "bool";
    const OPS: &'static [ReduceOp] = &[ReduceOp::Max, ReduceOp::Min];
    fn random(rng: &mut SplitMix64, _: Option<ReduceOp>) -> Self {
        rng.next_u64() & 1 == 1
    }
    fn reduce(op: ReduceOp, a: Self, b: Self) -> Self {
        match op {
            ReduceOp::Max => a || b,
            _ => a && b,
        }
    }
    fn average(sum: Self, _: usize) -> Self {
        sum
    }
    fn close(got: Self, want: Self, _: usize) -> bool {
        got == want
    }
}

macro_rules! move_only_elem {
    ($($t:ty),*) => {$(
        impl TestElem for $t {
            const NAME: &'static str = stringify!($t);
            const OPS: &'static [ReduceOp] = &[];
            fn random(rng: &mut SplitMix64, _: Option<ReduceOp>) -> Self {
                rng.next_u64() as $t
            }
            fn reduce(_: ReduceOp, a: Self, _: Self) -> Self {
                a
            }
            fn average(sum: Self, _: usize) -> Self {
                sum
            }
            fn close(got: Self, want: Self, _: usize) -> bool {
                got == want
            }
        }
    )*};
}

move_only_elem!(i16, u16);
