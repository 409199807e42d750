//! PyCUDA's `ReductionKernel`, and the reductions behind the array methods (`sum`,
//! `dot`, `max`, `min`, `argmax`, `argmin`, `any`, `all` and the `subset_*` forms).
//!
//! - [`ReductionSpec`]: the definition (output and accumulator types, element types or
//!   structs of your own, neutral, reduce and map expressions, typed arguments from the
//!   Rust builder or PyCUDA's C string, preamble, name).
//! - [`Variant`] and [`ReductionSpec::render`]: the source of stage 1 in each variant
//!   (vectorized, contiguous, strided) with stage 2 (see [`render`] for the design).
//! - [`ReductionKernel`]: checked calls returning a device scalar, writing into `out`,
//!   or bringing the value to the host.
//!
//! ```no_run
//! use rucuda_array::{GpuArray, reduction::{ReductionKernel, ReductionSpec}};
//! # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
//! // PyCUDA's struct reduction: the minimum and the maximum in one pass.
//! #[repr(C)]
//! #[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
//! struct MinMax { lo: f32, hi: f32 }
//! // SAFETY: two f32, no padding; any bits are a valid value.
//! unsafe impl rucuda_driver::DeviceRepr for MinMax { const C_TYPE: &'static str = "minmax"; }
//! let spec = ReductionSpec::builder("minmax_of")
//!     .preamble("struct minmax { float lo, hi; };
//!                __device__ minmax mm(float lo, float hi) { minmax r; r.lo = lo; r.hi = hi; return r; }")
//!     .output_struct::<MinMax>("minmax")
//!     .neutral("mm(3.0e38f, -3.0e38f)")
//!     .reduce("mm(fminf(a.lo, b.lo), fmaxf(a.hi, b.hi))")
//!     .map("mm(x[i], x[i])")
//!     .input::<f32>("x")
//!     .build()?;
//! let k = unsafe { ReductionKernel::from_spec(spec) };
//! let x = GpuArray::from_slice(&stream, &[3.0f32, -1.0, 7.5])?;
//! let r: MinMax = k.call_struct_to_host(&stream, &[(&x).into()])?;
//! assert_eq!((r.lo, r.hi), (-1.0, 7.5));
//! # Ok::<(), rucuda_array::ArrayError>(())
//! ```

mod builtin;
mod kernel;
mod ranged;
pub mod render;
mod spec;

#[cfg(test)]
mod render_tests;

pub use builtin::builtin_specs;
pub(crate) use builtin::{
    argpair_preamble, extreme, kernel as builtin_kernel, nonzero, pick_expr, Builtin,
};
pub(crate) use kernel::to_host_scalar;
pub use kernel::ReductionKernel;
pub use ranged::ReductionRange;
pub use render::{RenderedReduction, Variant, BLOCK_SIZE, MAX_STRIDED_DIMS};
pub use spec::{ReductionBuilder, ReductionSpec, ReductionType};
