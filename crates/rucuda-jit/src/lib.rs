//! Run-time compilation of CUDA C++ for rucuda: what `pycuda.compiler` gives Python.
//!
//! - [`compile`] turns source into a cubin, PTX, fatbin or LTO-IR with no GPU and no
//!   context, through NVRTC (loaded at run time, see [`nvrtc`]) or nvcc (a subprocess).
//! - [`SourceModule`] compiles for a context's device (a cubin for its `sm_XY` by
//!   default) and loads the result; a per-context memo ([`memo`]) returns the same
//!   module when asked again.
//! - [`Linker`] links several sources, PTX, cubins and libraries with `cuLink*`,
//!   including `libcudadevrt.a` for kernels that launch kernels.
//! - Every compile goes through a disk cache ([`cache`]): the key is a SHA-256 of the
//!   compiler's identity, the options, the target, the source and every header it
//!   includes; entries are checksummed, written atomically and evicted least recently
//!   used past a size cap. `RUCUDA_CACHE_DIR`, `RUCUDA_DISABLE_CACHE` and
//!   `RUCUDA_CACHE_MAX_SIZE` set it up.
//! - NVRTC has no C library headers: [`std_headers`] serves small ones of rucuda's own
//!   (`<stdio.h>`, `<cstdint>`, `<climits>`, `<cfloat>`, `<cmath>`, `<cstddef>`,
//!   `<assert.h>`...) to sources that include them, and a source NVRTC still cannot open
//!   a header of goes to nvcc where it is installed ([`Compiled::compiler`] says which
//!   compiled). [`get_nvcc_version`] and [`preprocess_source`] are PyCUDA's nvcc helpers.
//! - [`CompileOptions`] carries PyCUDA's `SourceModule` arguments (`options`, `keep`,
//!   `no_extern_c`, `arch`, `code`, `cache_dir`, `include_dirs`) plus defines and name
//!   expressions for C++ templates; [`CompileError`] carries the log, the command line
//!   and the source lines around the first error.
//!
//! ```no_run
//! use rucuda_jit::{compile, Arch, CompileOptions};
//! let src = "__global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }";
//! let out = compile(src, &CompileOptions::new().arch(Arch::SM_90))?;
//! println!("cubin of {} bytes (cache: {:?})", out.image.len(), out.cache);
//! # Ok::<(), rucuda_jit::Error>(())
//! ```

// Lets this crate's unit tests use `rucuda_testkit::nvrtc_or_skip!()`, which names
// `::rucuda_jit`.
#[cfg(test)]
extern crate self as rucuda_jit;

// The modules, bottom up; each uses only those on lines above its own:
//   std_headers (the C/C++ standard headers served to NVRTC)
//   toolkit (where a CUDA toolkit keeps files)
//   nvrtc (the library: bindings, table, loader, getters)
//   error, scratch, output
//   arch
//   options (CompileOptions; its defaults name the cache folder and cap)
//   memo (loaded modules per context)
//   cache (the disk cache; re-exports memo and the defaults at their old paths)
//   backend (NVRTC and nvcc runs), nvcc_tools (nvcc's version, preprocessing)
//   target (which architecture for a device)
//   fallback (nvcc in NVRTC's place when a header cannot be opened)
//   compile
//   module (SourceModule), link, fuzzing
mod arch;
mod backend;
pub mod cache;
mod compile;
mod error;
mod fallback;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod link;
pub mod memo;
mod module;
mod nvcc_tools;
pub mod nvrtc;
mod options;
mod output;
mod scratch;
pub mod std_headers;
mod target;
mod toolkit;

pub use arch::Arch;
pub use compile::{compile, CacheStatus, Compiled};
pub use error::{CompileError, Error, Result};
pub use link::{find_cudadevrt, LinkInput, LinkOptions, LinkedModule, Linker};
pub use module::SourceModule;
pub use nvcc_tools::{get_nvcc_version, preprocess_source};
pub use options::defaults::DEFAULT_CACHE_MAX_BYTES;
pub use options::{Backend, CompileOptions};
pub use output::OutputKind;
pub use target::device_arch;
