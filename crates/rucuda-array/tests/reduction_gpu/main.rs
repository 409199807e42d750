//! GPU tests of the reductions, one file per topic: `types` (the array methods for every
//! element type) and `forms` (subset forms, struct and string-form kernels, views, large
//! sizes, refusals). Fresh random inputs (never all zeros); CPU references in f64 (Kahan)
//! or exact integer arithmetic; results written into poisoned outputs where the API takes
//! one.

#[path = "../common/mod.rs"]
mod common;

mod forms;
mod types;

use rucuda_array::{Element, GpuArray};
use rucuda_driver::Stream;

const SIZES: [usize; 5] = [0, 1, 31, 1000, (1 << 20) + 7];

/// Kahan-compensated sum of f64 values, and the sum of their magnitudes.
fn kahan(values: impl Iterator<Item = f64>) -> (f64, f64) {
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
fn assert_sum_close(got: f64, want: f64, abs_sum: f64, n: usize, eps: f64, rel: f64, what: &str) {
    let bound = (n as f64 + 64.0) * eps * abs_sum + rel * want.abs() + 1e-30;
    assert!(
        (got - want).abs() <= bound,
        "{what}: got {got}, want {want} (bound {bound}, n {n})"
    );
}

fn upload<T: Element>(s: &Stream, v: &[T]) -> GpuArray<T> {
    GpuArray::from_slice(s, v).unwrap()
}

/// Runs `f` into a one-element output filled with `poison` first, through
/// `ReductionKernel::call_into`, and returns the value.
fn into_poisoned<T: Element>(
    s: &Stream,
    poison: T,
    f: impl FnOnce(&mut GpuArray<T>) -> rucuda_array::Result<()>,
) -> T {
    let mut out = GpuArray::full(s, &[1], poison).unwrap();
    f(&mut out).unwrap();
    out.to_scalar().unwrap()
}
