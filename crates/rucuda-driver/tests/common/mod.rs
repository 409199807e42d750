//! Helpers shared by this crate's GPU tests: the test context, kernels, random inputs,
//! comparisons.
#![allow(dead_code, unused_imports)]

use rucuda_driver::{Context, Device, Module};

/// The primary context of device 0 (the bundle sets CUDA_VISIBLE_DEVICES per pass).
pub fn ctx() -> Context {
    Device::get(0)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)")
}

/// Loads a committed PTX file of `tests/kernels/`.
pub fn module(ctx: &Context, ptx: &str) -> Module {
    Module::load_data(ctx, ptx.as_bytes()).expect("PTX loads")
}

/// The core kernels (`tests/kernels/core.cu`).
pub fn core_module(ctx: &Context) -> Module {
    module(ctx, include_str!("../kernels/core.ptx"))
}

/// Prints the marker the bundle counts as a skip.
pub use rucuda_testkit::skip;

/// Fresh random inputs per test (seed printed; `RUCUDA_TEST_SEED` replays a run).
pub use rucuda_testkit::TestRng as Rng;

/// Asserts |got - want| <= tol * max(1, |want|) elementwise, naming the first bad index.
pub use rucuda_testkit::assert_close;

/// Floats widened for [`assert_close`] against an f64 reference.
pub fn f64s(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}
