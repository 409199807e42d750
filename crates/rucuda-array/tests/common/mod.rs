//! Helpers shared by this crate's GPU tests: the test context and stream, fresh random
//! values of every element type (the testkit's generator), and the testkit's comparison.
#![allow(dead_code, unused_imports)]

use rucuda_array::{bf16, f16, Complex, Element};
use rucuda_driver::{Context, Device, Stream};

/// The primary context of device 0 (the bundle sets CUDA_VISIBLE_DEVICES per pass).
pub fn ctx() -> Context {
    Device::get(0)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)")
}

/// A fresh non-blocking stream on the test context.
pub fn stream() -> Stream {
    Stream::new(&ctx(), rucuda_driver::StreamFlags::NON_BLOCKING).expect("a stream")
}

/// Random inputs, fresh per test unless `RUCUDA_TEST_SEED` is set (the testkit's
/// generator and seed).
pub use rucuda_testkit::TestRng as Rng;

/// `rng.vec::<T>(n)`: `n` random values of any element type.
pub trait RandomVec {
    fn vec<T: RandomElement>(&mut self, n: usize) -> Vec<T>;
}

impl RandomVec for Rng {
    fn vec<T: RandomElement>(&mut self, n: usize) -> Vec<T> {
        (0..n).map(|_| T::random(self)).collect()
    }
}

/// Random values of an element type (never all zeros: full-range bits for integers,
/// [-100, 100) for floats).
pub trait RandomElement: Element {
    fn random(rng: &mut Rng) -> Self;
}

macro_rules! random_int {
    ($($t:ty),*) => {$(
        impl RandomElement for $t {
            fn random(rng: &mut Rng) -> $t { rng.next_u64() as $t }
        }
    )*};
}
random_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl RandomElement for bool {
    fn random(rng: &mut Rng) -> bool {
        rng.next_u64() & 1 == 1
    }
}
impl RandomElement for f32 {
    fn random(rng: &mut Rng) -> f32 {
        (rng.unit() * 100.0) as f32
    }
}
impl RandomElement for f64 {
    fn random(rng: &mut Rng) -> f64 {
        rng.unit() * 100.0
    }
}
impl RandomElement for f16 {
    fn random(rng: &mut Rng) -> f16 {
        f16::from_f64(rng.unit() * 100.0)
    }
}
impl RandomElement for bf16 {
    fn random(rng: &mut Rng) -> bf16 {
        bf16::from_f64(rng.unit() * 100.0)
    }
}
impl RandomElement for Complex<f32> {
    fn random(rng: &mut Rng) -> Self {
        Complex::new((rng.unit() * 100.0) as f32, (rng.unit() * 100.0) as f32)
    }
}
impl RandomElement for Complex<f64> {
    fn random(rng: &mut Rng) -> Self {
        Complex::new(rng.unit() * 100.0, rng.unit() * 100.0)
    }
}

/// Asserts |got - want| <= tol * max(1, |want|) elementwise, naming the first bad index.
pub use rucuda_testkit::assert_close;
