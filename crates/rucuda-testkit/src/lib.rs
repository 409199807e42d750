//! Helpers for rucuda's GPU tests.
//!
//! GPU tests are `#[ignore = "needs a CUDA device"]` and run from the bundle that
//! `cargo xtask gpu-test` builds, each in its own process. This crate keeps them short:
//!
//! - [`skip`] and [`skip_test!`]: print the `RUCUDA_SKIPPED: reason` marker that the
//!   bundle's `run.sh` counts as a skip (a test that cannot run here is not a pass).
//! - [`under_sanitizer`], [`skip_under_sanitizer`], [`scaled_for_sanitizer`]: what a test
//!   does under `run.sh sanitize` (compute-sanitizer): skip what provokes driver errors on
//!   purpose, run heavy work at a smaller size.
//! - [`seed!`], [`random_f32`], [`random_f64`], [`random_i32`], [`TestRng`]: reproducible
//!   random inputs with a fresh seed per run, printed so a failure can be replayed with
//!   `RUCUDA_TEST_SEED` (`TestRng::new` for a fixed seed); the one SplitMix64 of the
//!   workspace's tests.
//! - [`poison`]: byte patterns to fill output buffers with, so a kernel that skips an
//!   element leaves a value no correct result can have.
//! - [`assert_close`] and [`check_close`]: element-wise comparison in `f64` with a
//!   message that names the first bad index.
//! - [`nvrtc_or_skip!`]: the one way a test that needs NVRTC skips where it is not
//!   installed (one line naming `cargo xtask test`, which installs it).
//! - [`log_to_stderr`]: the library's log records on stderr (child processes whose
//!   warnings a test reads).
//! - [`child_test`]: one test of the same binary again, in a child process (IPC, faults,
//!   process-wide settings).
//!
//! ```
//! use rucuda_testkit::{assert_close, random_f32, seed};
//! let x = random_f32(1000, seed!());
//! let doubled: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
//! let want: Vec<f32> = x.iter().map(|v| v + v).collect();
//! assert_close(&doubled, &want, 1e-6);
//! ```

mod child;
mod compare;
mod log_stderr;
mod nvrtc;
pub mod poison;
mod random;
mod sanitizer;
mod skip;

pub use child::child_test;
pub use compare::{assert_close, check_close, Mismatch};
pub use log_stderr::log_to_stderr;
pub use nvrtc::{nvrtc_present_or_say_so, nvrtc_skip_line, NVRTC_COMMAND};
pub use random::{
    base_seed, random_f32, random_f64, random_i32, seed_for, SplitMix64, TestRng, SEED_ENV,
};
pub use sanitizer::{
    gpu_shared, sanitizer, scaled_for_sanitizer, skip_under_sanitizer, skip_under_sanitizer_tools,
    under_sanitizer, SANITIZER_ENV, SHARED_GPU_ENV,
};
pub use skip::{skip, SkipReturn, SKIP_MARKER};
