//! Helpers of the reduction GPU tests: the sizes every method is tried at, the Kahan
//! reference sum and its error bound, uploads and poisoned one-element outputs.
#![allow(dead_code)]

use rucuda_array::{Element, GpuArray};
use rucuda_driver::Stream;

pub const SIZES: [usize; 5] = [0, 1, 31, 1000, (1 << 20) + 7];

/// Kahan-compensated sum of f64 values, and the sum of their magnitudes.
pub fn kahan(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut sum, mut c, mut abs) = (0.0f64, 0.0f64, 0.0f64);
    for v in values {
        abs += v.abs();
        let y = v - c;
        let t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    (sum, abs)
}

/// Asserts a float sum is within `n * eps * sum|x|` (plus `rel * |want|` for the
/// rounding of the result to its type) of the Kahan reference.
pub fn assert_sum_close(
    got: f64,
    want: f64,
    abs_sum: f64,
    n: usize,
    eps: f64,
    rel: f64,
    what: &str,
) {
    let bound = (n as f64 + 64.0) * eps * abs_sum + rel * want.abs() + 1e-30;
    assert!(
        (got - want).abs() <= bound,
        "{what}: got {got}, want {want} (bound {bound}, n {n})"
    );
}

pub fn upload<T: Element>(s: &Stream, v: &[T]) -> GpuArray<T> {
    GpuArray::from_slice(s, v).unwrap()
}

/// Runs `f` into a one-element output filled with `poison` first, through
/// `ReductionKernel::call_into`, and returns the value.
pub fn into_poisoned<T: Element>(
    s: &Stream,
    poison: T,
    f: impl FnOnce(&mut GpuArray<T>) -> rucuda_array::Result<()>,
) -> T {
    let mut out = GpuArray::full(s, &[1], poison).unwrap();
    f(&mut out).unwrap();
    out.to_scalar().unwrap()
}
