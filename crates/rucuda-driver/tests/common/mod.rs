//! Helpers shared by this crate's GPU tests: the test context, kernels, random inputs,
//! comparisons; `arrays` and `memory` hold those of the array and memory suites.
#![allow(dead_code, unused_imports)]

pub mod arrays;
pub mod memory;

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

/// The kernels of the extras (`tests/kernels/extras.cu`).
pub fn extras_module(ctx: &Context) -> Module {
    module(ctx, include_str!("../kernels/extras.ptx"))
}

/// Waits for the legacy default stream. A synchronous copy from pageable host memory
/// (`DeviceBuffer::from_slice`, `copy_from_host`) may return before its DMA has landed;
/// the DMA is ordered on the legacy stream, which work on NON_BLOCKING streams does not
/// wait for.
pub fn settle(ctx: &Context) -> rucuda_driver::Result<()> {
    rucuda_driver::Stream::null(ctx).synchronize()
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
