//! NumPy-style GPU arrays and PyCUDA's kernel generators, in Rust.
//!
//! - [`GpuArray`]: an n-dimensional array in device memory (a shared buffer plus a
//!   [`layout::Layout`]: shape, strides in elements, offset), for every [`Element`] type:
//!   `bool`, the integers, `f16`, `bf16`, `f32`, `f64`, `Complex<f32>`, `Complex<f64>`.
//!   Created from slices and `ndarray` arrays of any layout, brought back as `ndarray`
//!   arrays (views gathered), sliced, transposed and reshaped without copies.
//! - [`elementwise::ElementwiseKernel`]: PyCUDA's `ElementwiseKernel` with typed
//!   arguments (or PyCUDA's C argument strings), 64-bit indices, ranged calls, strided
//!   (non-contiguous and broadcast) arguments, and a vectorized contiguous path.
//! - [`DType`] and [`DType::promote`]: NumPy's type promotion for mixed-type operations.
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
//! let saxpy = ElementwiseKernel::new("float a, const float *x, const float *y, float *z",
//!                                    "z[i] = a * x[i] + y[i]", "saxpy")?;
//! saxpy.call(&stream, &[2.0f32.into(), (&x).into(), (&y).into(), (&mut z).into()])?;
//! assert_eq!(z.to_vec()?, vec![12.0, 24.0, 36.0]);
//! # Ok::<(), rucuda_array::ArrayError>(())
//! ```

mod array;
mod array_reduce;
pub mod codegen;
mod compile;
mod device_copy;
pub mod dtype;
pub mod elementwise;
mod error;
pub mod layout;
mod pool;
pub mod reduction;
pub mod scan;

#[cfg(test)]
mod test_rng;

pub use array::GpuArray;
pub use compile::{
    default_compiler, set_default_compiler, JitCompiler, KernelCompiler, LoadedKernels,
};
pub use dtype::{DType, DTypeKind, Element};
pub use error::{ArrayError, Result};
pub use layout::{Layout, LayoutError, Order, SliceArg};

pub use half::{bf16, f16};
pub use num_complex::Complex;
