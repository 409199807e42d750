//! rucuda: everything PyCUDA gives a Python user, for Rust.
//!
//! This facade re-exports each rucuda crate as a module and adds PyCUDA's tools
//! (`pycuda.tools`, `pycuda.autoinit`): a default context, device metadata,
//! per-context memoization and memory pools.
//!
//! ```no_run
//! let ctx = rucuda::tools::autoprimaryctx()?;
//! println!("running on {}", ctx.device.name()?);
//! # Ok::<(), rucuda::driver::Error>(())
//! ```

pub mod tools;

/// The raw driver bindings (`cuda-driver-sys`).
pub use cuda_driver_sys as sys;
/// The safe driver layer (`rucuda-driver`): PyCUDA's `pycuda.driver`.
pub use rucuda_driver as driver;

/// The version of rucuda as `(major, minor, patch)`, like PyCUDA's `VERSION`.
pub const VERSION: (u32, u32, u32) = (0, 1, 0);
/// The release status, like PyCUDA's `VERSION_STATUS` (empty for a release).
pub const VERSION_STATUS: &str = "dev";
/// The version as text, like PyCUDA's `VERSION_TEXT`.
pub const VERSION_TEXT: &str = env!("CARGO_PKG_VERSION");
