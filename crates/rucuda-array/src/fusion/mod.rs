//! Fusion: a whole elementwise expression over arrays and scalars compiled into one
//! kernel and run in one pass over memory (CuPy's `fuse`, explicit).
//!
//! [`Expr`] is a lazy expression: build it from arrays (`Expr::from(&x)`), scalars and
//! operators/methods, then [`Expr::eval`] (a new array), [`Expr::eval_on`] (on a
//! stream) or [`Expr::eval_into`] (into an existing array, which may be one of the
//! expression's arrays). The [`fuse!`](crate::fuse) macro turns named arrays into
//! expressions so that an expression reads as it would on arrays.
//!
//! **Kernel identity.** The kernel is memoized per context by the expression's
//! *structure*: its nodes and their types, which leaves are the same array, and the
//! output type. Scalars are kernel arguments, so `2.0 * x + y` and `3.5 * x + y`
//! share one kernel. Contiguous 16-byte-aligned operands take the vectorized path
//! (16-byte loads and stores); others the strided one.
//!
//! **Semantics.** Each node is computed exactly as the corresponding single operation
//! (same promotion, same compute type, same rounding; no contraction into fused
//! multiply-adds), so fused and unfused results are bit-identical.
//!
//! ```no_run
//! # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
//! use rucuda_array::{fuse, GpuArray};
//! let x = GpuArray::<f32>::arange(&stream, 0.0, 1024.0, 1.0)?;
//! let y = GpuArray::<f32>::ones(&stream, &[1024])?;
//! // One kernel: 12 bytes of traffic per element.
//! let z: GpuArray<f32> = fuse!(x, y => 2.0 * x + y).eval()?;
//! // Any depth, functions and comparisons included.
//! let w: GpuArray<f32> = fuse!(x, y => (x * x + y).sqrt().minimum(10.0)).eval()?;
//! # Ok::<(), rucuda_array::ArrayError>(())
//! ```

pub(crate) mod expr;
pub(crate) mod kernel;
pub(crate) mod source;

pub use expr::Expr;

/// Builds a fused [`Expr`](crate::fusion::Expr) from an expression over named arrays:
/// `fuse!(x, y => 2.0 * x + y)` binds each listed name (a `GpuArray`) as an expression
/// leaf, so the body reads like arithmetic on arrays. Evaluate the result with
/// `.eval()`, `.eval_on(&stream)` or `.eval_into(&mut out)`.
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// use rucuda_array::{fuse, GpuArray};
/// let a = GpuArray::from_slice(&stream, &[1.0f64, -2.0])?;
/// let b = GpuArray::from_slice(&stream, &[3.0f64, 4.0])?;
/// let c: GpuArray<f64> = fuse!(a, b => (a * a + b * b).sqrt() - a.abs()).eval()?;
/// assert_eq!(c.to_vec()?[1], 20f64.sqrt() - 2.0);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
#[macro_export]
macro_rules! fuse {
    ($($name:ident),+ => $body:expr) => {{
        $(
            #[allow(unused_variables)]
            let $name = &$crate::fusion::Expr::from(&$name);
        )+
        $crate::fusion::Expr::from($body)
    }};
}
