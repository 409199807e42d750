//! NumPy-style GPU arrays and PyCUDA's kernel generators, in Rust.
//!
//! - [`GpuArray`]: an n-dimensional array in device memory (a shared buffer plus a
//!   [`layout::Layout`]: shape, strides in elements, offset), for every [`Element`] type:
//!   `bool`, the integers, `f16`, `bf16`, `f32`, `f64`, `Complex<f32>`, `Complex<f64>`.
//!   Also CUDA's vector types ([`vec`](mod@crate::vec): `float3`, `double2`, ...) and `#[repr(C)]` structs
//!   of yours ([`struct_element!`]), for fills, copies, gathers and your own kernels.
//!   Created from slices and `ndarray` arrays of any layout, brought back as `ndarray`
//!   arrays (views gathered), sliced, transposed and reshaped without copies.
//! - [`elementwise::ElementwiseKernel`]: PyCUDA's `ElementwiseKernel` with typed
//!   arguments (or PyCUDA's C argument strings), 64-bit indices, ranged calls, strided
//!   (non-contiguous and broadcast) arguments, and a vectorized contiguous path.
//! - Memory order ([`Order`]: C, F, A, K as NumPy) on creation, `*_like`, copies, casts,
//!   reshapes and ravels; F-ordered arrays are first class (ndarray in and out as they
//!   lie, operators through the contiguous kernels). [`GpuArray::view_as`] sees the bytes
//!   as another element type of any size.
//! - Memory rucuda did not allocate: [`GpuArray::from_device_ptr`] (PyCUDA's `gpudata=`)
//!   and [`dlpack`] (export and import of DLPack tensors, no copy).
//! - [`DType`] and [`DType::promote`]: NumPy's type promotion for mixed-type operations.
//! - [`ops`]: NumPy-style operations as built-in kernels memoized per (context, kernel
//!   signature): `+ - * / // % **` (std operators returning `Result`), comparisons,
//!   logical operations, `maximum`/`minimum`, `where`/`if_positive`, `take`/`put` and
//!   their multi forms, `concatenate`/`stack`, `real`/`imag`/`conj`, with broadcasting,
//!   mixed types and scalars on either side; `astype`, `fill`, strided copies,
//!   `reinterpret`; async `get`/`set` through pinned staging.
//! - [`math`]: PyCUDA's `cumath` (sin ... frexp) for f16/bf16/f32/f64 and complex types.
//! - [`axis_reduce`]: NumPy's reductions along axes (`sum_axes`, `mean_axes`, `var_axes`,
//!   `argmax_axis`...) with `keepdims`, `ddof` and NumPy's result types, one kernel per call
//!   on any strides.
//! - [`fusion`]: a whole expression compiled into one kernel ([`fuse!`], [`fusion::Expr`]).
//!
//! ```no_run
//! use rucuda_array::{GpuArray, SliceArg};
//! use rucuda_driver::{Device, Stream};
//! let ctx = Device::get(0)?.primary_context()?;
//! let stream = Stream::null(&ctx);
//! let a = GpuArray::<f32>::arange(&stream, 0.0, 12.0, 1.0)?.reshape(&[3, 4])?;
//! let b = a.slice(&[SliceArg::All, SliceArg::stepped(None, None, -2)])?;
//! assert_eq!(b.to_vec()?, vec![3.0, 1.0, 7.0, 5.0, 11.0, 9.0]);
//!
//! use rucuda_array::elementwise::ElementwiseKernel;
//! let x = GpuArray::from_slice(&stream, &[1.0f32, 2.0, 3.0])?;
//! let y = GpuArray::from_slice(&stream, &[10.0f32, 20.0, 30.0])?;
//! let mut z = GpuArray::<f32>::empty(&stream, &[3])?;
//! let saxpy = unsafe { ElementwiseKernel::new("float a, const float *x, const float *y, float *z",
//!                                    "z[i] = a * x[i] + y[i]", "saxpy") }?;
//! saxpy.call(&stream, &[2.0f32.into(), (&x).into(), (&y).into(), (&mut z).into()])?;
//! assert_eq!(z.to_vec()?, vec![12.0, 24.0, 36.0]);
//!
//! let w = ((&x * 2.0)? + &y)?;                         // two kernels, one temporary
//! let f: GpuArray<f32> = rucuda_array::fuse!(x, y => 2.0 * x + y).eval()?; // one kernel
//! assert_eq!(w.to_vec()?, f.to_vec()?);
//! let s = rucuda_array::math::sqrt(&f.maximum(0.0f32)?)?;
//! # Ok::<(), rucuda_array::ArrayError>(())
//! ```

pub mod allocator;
mod array;
mod array_reduce;
pub mod axis_reduce;
pub mod codegen;
mod compile;
mod convert;
mod device_copy;
pub mod dlpack;
pub mod dtype;
pub mod elementwise;
mod error;
pub mod fusion;
pub mod graph;
mod launch_shape;
pub mod layout;
pub mod math;
mod memory;
pub mod ops;
mod ordering;
mod pool;
mod reduce_with;
pub mod reduction;
pub mod scan;
pub mod sort;
mod transfer;
pub mod vec;

pub use array::GpuArray;
pub use axis_reduce::AxisElement;
pub use compile::{
    default_compiler, set_default_compiler, JitCompiler, KernelCompiler, LoadedKernels,
};
pub use dtype::{DType, DTypeKind, Element, StructElement};
pub use error::{ArrayError, Result};
pub use layout::{Layout, LayoutError, Order, SliceArg};
pub use transfer::{PendingGet, PendingSet};

pub use half::{bf16, f16};
pub use num_complex::Complex;

// The crates whose types this crate's API takes and returns, re-exported so that a user's
// versions are ours without a dependency of their own (`rucuda_array::half::f16`).
/// The `half` crate (`f16`, `bf16`), as this crate uses it.
pub use half;
/// The `ndarray` crate, as `from_ndarray`/`to_ndarray` use it (feature `ndarray`).
#[cfg(feature = "ndarray")]
pub use ndarray;
/// The `num-complex` crate (`Complex<f32>`, `Complex<f64>`), as this crate uses it.
pub use num_complex;

/// What [`struct_element!`] expands to; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use bytemuck;
}
