//! Run-time compilation of CUDA C++ for rucuda: what `pycuda.compiler` gives Python.
//!
//! - [`compile`] turns source into a cubin, PTX, fatbin or LTO-IR with no GPU and no
//!   context, through NVRTC (loaded at run time, see [`nvrtc`]) or nvcc (a subprocess).
//! - Every compile goes through a disk cache ([`cache`]): the key is a SHA-256 of the
//!   compiler's identity, the options, the target, the source and every header it
//!   includes; entries are checksummed, written atomically and evicted least recently
//!   used past a size cap.
//! - [`CompileOptions`] carries PyCUDA's `SourceModule` arguments (`options`, `keep`,
//!   `no_extern_c`, `arch`, `code`, `cache_dir`, `include_dirs`) plus name expressions
//!   for C++ templates; [`CompileError`] carries the log, the command line and the
//!   source lines around the first error.
//!
//! ```no_run
//! use rucuda_jit::{compile, Arch, CompileOptions};
//! let src = "__global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }";
//! let out = compile(src, &CompileOptions::new().arch(Arch::SM_90))?;
//! println!("cubin of {} bytes (cache: {:?})", out.image.len(), out.cache);
//! # Ok::<(), rucuda_jit::Error>(())
//! ```

pub mod cache;
mod compile;
mod error;
mod nvcc;
pub mod nvrtc;
mod options;
mod scratch;

pub use compile::{compile, CacheStatus, Compiled};
pub use error::{CompileError, Error, Result};
pub use options::{Arch, Backend, CompileOptions, OutputKind, DEFAULT_CACHE_MAX_BYTES};
