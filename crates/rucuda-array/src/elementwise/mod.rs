//! PyCUDA's `ElementwiseKernel`: an operation over the indices of array arguments,
//! generated as CUDA source, compiled once per context and variant.
//!
//! - [`ElementwiseSpec`]: the definition (typed arguments from the Rust builder or
//!   PyCUDA's C string, operation, preamble, loop_prep, after_loop, name).
//! - [`Variant`] and [`ElementwiseSpec::render`]: the source of each kernel variant
//!   (contiguous, vectorized, ranged, strided) and its parameter layout.
//! - [`ElementwiseKernel`]: checked calls (`call`, `call_range`, `call_slice`) that choose a
//!   variant; scalar arguments convert to their declared types ([`ScalarValue::convert_to`]).

mod call_args;
mod kernel;
mod render;
mod scalar_convert;
mod spec;

#[cfg(test)]
mod render_tests;

pub(crate) use call_args::convert_scalars;
pub use call_args::{ArrayValue, KernelValue, ScalarValue};
pub use kernel::{ElementwiseKernel, DEFAULT_BLOCK_SIZE};
pub use render::{Param, RenderedKernel, Variant, MAX_STRIDED_DIMS};
pub use spec::{ElementwiseBuilder, ElementwiseSpec};
