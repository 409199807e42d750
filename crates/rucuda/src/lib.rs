//! rucuda: everything PyCUDA gives a Python user, for Rust.
//!
//! This facade re-exports each rucuda crate as a module and adds PyCUDA's tools
//! (`pycuda.tools`, `pycuda.autoinit`): a default context, device metadata,
//! per-context memoization, memory pools and a test helper.
//!
//! | module | crate | PyCUDA |
//! |---|---|---|
//! | [`driver`] | `rucuda-driver` | `pycuda.driver` |
//! | [`jit`] | `rucuda-jit` | `pycuda.compiler` |
//! | [`array`](mod@array) | `rucuda-array` | `pycuda.gpuarray`, `pycuda.elementwise` |
//! | `gl` (feature `gl`, on by default) | `rucuda-gl` | `pycuda.gl` |
//! | `rand` (feature `rand`, on by default) | `rucuda-rand` | `pycuda.curandom` |
//! | `nccl` (feature `nccl`, on by default) | `rucuda-nccl` | (beyond PyCUDA: collectives across GPUs and hosts through NCCL) |
//! | [`tools`] | this crate | `pycuda.tools`, `pycuda.autoinit`, `pycuda.autoprimaryctx` |
//! | [`characterize`] | this crate | `pycuda.characterize` |
//! | [`sys`] | `rucuda-driver-sys` | (the raw C API) |
//!
//! [`prelude`] brings in the types most programs use. [`Error`] takes the error of every
//! crate, so `?` works across them in a function returning [`Result`].
//!
//! ```no_run
//! use rucuda::prelude::*;
//! let ctx = autoprimaryctx()?;
//! println!("running on {}", ctx.device.name()?);
//! let module = SourceModule::for_context(ctx, r#"
//!     __global__ void twice(float *x, int n) {
//!         int i = blockIdx.x * blockDim.x + threadIdx.x;
//!         if (i < n) x[i] *= 2.0f;
//!     }"#, &CompileOptions::new())?;
//! let mut x = DeviceBuffer::from_slice(ctx, &[1.0f32, 2.0, 3.0])?;
//! // SAFETY: twice(float *x, int n) touches x[0..n).
//! unsafe {
//!     module.function("twice")?
//!         .launch(LaunchConfig::for_elements(3, 128), &Stream::null(ctx), (&mut x, 3i32))?
//! };
//! assert_eq!(x.to_vec()?, [2.0, 4.0, 6.0]);
//! # Ok::<(), rucuda::Error>(())
//! ```
//!
//! The crates whose types the API uses are re-exported, so your versions are ours:
//! [`half`] (`f16`, `bf16`), [`num_complex`] (`Complex`) and, with the `ndarray`
//! feature, `ndarray`.
//!
//! # Features
//!
//! All on by default; `default-features = false` keeps the driver, jit, array and tools
//! parts only, and each of these adds its part back:
//!
//! | feature | brings |
//! |---|---|
//! | `gl` | `rucuda::gl`, OpenGL interop |
//! | `nccl` | `rucuda::nccl`, collectives through NCCL |
//! | `rand` | `rucuda::rand`, random number generators |
//! | `ndarray` | `GpuArray::from_ndarray`/`to_ndarray` and the `rucuda::ndarray` re-export |
//!
//! The [`guide`] (getting started, one chapter per crate, the PyCUDA-to-rucuda table) is
//! part of these docs; its Markdown sources are the crate's `guide/` folder.

pub mod characterize;
mod error;
mod testing;
pub mod tools;

pub use error::{Error, Result};

#[doc(hidden)]
pub use testing::__test_context;

/// NumPy-style GPU arrays and kernel generators (`rucuda-array`): PyCUDA's
/// `pycuda.gpuarray` and `pycuda.elementwise`.
pub use rucuda_array as array;
/// CUDA graphs of array code: capture once, replay with one launch
/// (`rucuda_array::graph`; the guide's arrays chapter, "Graphs").
pub use rucuda_array::graph;
/// The safe driver layer (`rucuda-driver`): PyCUDA's `pycuda.driver`.
pub use rucuda_driver as driver;
/// The raw driver bindings (`rucuda-driver-sys`).
pub use rucuda_driver_sys as sys;
/// OpenGL interop (`rucuda-gl`): PyCUDA's `pycuda.gl`.
#[cfg(feature = "gl")]
pub use rucuda_gl as gl;
/// Run-time compilation, the kernel cache and linking (`rucuda-jit`): PyCUDA's
/// `pycuda.compiler`.
pub use rucuda_jit as jit;
/// Collectives across GPUs and hosts through NCCL, loaded at run time (`rucuda-nccl`):
/// communicators, all-reduce and friends, groups.
#[cfg(feature = "nccl")]
pub use rucuda_nccl as nccl;
/// Random numbers from our own kernels, bit-compatible with cuRAND's device API
/// (`rucuda-rand`): PyCUDA's `pycuda.curandom`.
#[cfg(feature = "rand")]
pub use rucuda_rand as rand;

/// The `half` crate (`f16`, `bf16`) that rucuda's element types come from.
pub use rucuda_array::half;
/// The `ndarray` crate that `GpuArray::from_ndarray` and `to_ndarray` use (feature
/// `ndarray`).
#[cfg(feature = "ndarray")]
pub use rucuda_array::ndarray;
/// The `num-complex` crate (`Complex<f32>`, `Complex<f64>`) of rucuda's complex elements.
pub use rucuda_array::num_complex;

pub mod guide;
pub mod prelude;

/// The version of rucuda as `(major, minor, patch)`, like PyCUDA's `VERSION`.
pub const VERSION: (u32, u32, u32) = (0, 1, 0);
/// The release status, like PyCUDA's `VERSION_STATUS` (empty for a release).
pub const VERSION_STATUS: &str = "dev";
/// The version as text, like PyCUDA's `VERSION_TEXT`.
pub const VERSION_TEXT: &str = env!("CARGO_PKG_VERSION");

#[cfg(test)]
mod tests {
    #[test]
    fn version_tuple_matches_the_crate_version() {
        let (major, minor, patch) = super::VERSION;
        let text = format!("{major}.{minor}.{patch}");
        assert!(
            super::VERSION_TEXT.starts_with(&text),
            "VERSION {text} vs VERSION_TEXT {}",
            super::VERSION_TEXT
        );
    }
}
