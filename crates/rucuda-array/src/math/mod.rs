//! PyCUDA's `cumath`: elementwise math functions on float arrays, out of place, into an
//! `out` array, and on a chosen stream.
//!
//! Every function exists in three forms, e.g. for `sin`:
//! - `sin(&a)`: a new array, computed on `a`'s home stream;
//! - `sin_on(&a, &stream)`: a new array computed on `stream` (its home stream);
//! - `sin_into(&a, &mut out, stream)`: into `out` (any float type the result can be
//!   stored in; `a` broadcast to `out`'s shape), on `stream` or `out`'s home stream.
//!
//! Types: `f32` and `f64` use CUDA's `sinf`/`sin`... (a few ULP, see the CUDA math API);
//! `f16` and `bf16` compute in `f32` and round once. `sin`, `cos`, `tan`, `sinh`,
//! `cosh`, `tanh`, `exp`, `log`, `log10` and `sqrt` also take `Complex<f32>` and
//! `Complex<f64>` (principal branches, as NumPy). The two-output functions `frexp` and
//! `modf` return a pair of arrays; `ldexp` takes `i32` exponents (an array or a scalar);
//! `fmod` takes an array or a scalar divisor.
//!
//! ```no_run
//! # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
//! use rucuda_array::{math, GpuArray};
//! let x = GpuArray::from_slice(&stream, &[0.0f32, 1.0, 4.0])?;
//! assert_eq!(math::sqrt(&x)?.to_vec()?, vec![0.0, 1.0, 2.0]);
//! let (m, e) = math::frexp(&x)?;
//! assert_eq!((m.to_vec()?[2], e.to_vec()?[2]), (0.5, 3));
//! # Ok::<(), rucuda_array::ArrayError>(())
//! ```

use half::{bf16, f16};
use num_complex::Complex;
use rucuda_driver::Stream;

use crate::convert::check_writable;
use crate::dtype::Element;
use crate::elementwise::ScalarValue;
use crate::error::{ArrayError, Result};
use crate::ops::apply::{binary_into, binary_new, unary_into, unary_new, unary_on};
use crate::ops::engine::{run, Arg};
use crate::ops::key::MathSpecial;
use crate::ops::key::OpKey;
use crate::ops::operand::BinaryOperand;
use crate::ops::operations::BinaryOp;
use crate::ops::operations::MathFn;
use crate::ops::operations::UnaryOp;
use crate::ordering::{after_on, before_on};
use crate::GpuArray;

mod sealed {
    pub trait Sealed {}
}

/// Element types the cumath functions take: `f16`, `bf16`, `f32`, `f64` and the complex
/// types (for the functions that support them).
pub trait MathElement: Element + sealed::Sealed {}

/// The real float types: `f16`, `bf16`, `f32`, `f64`.
pub trait RealFloat: MathElement {}

macro_rules! math_types {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl MathElement for $t {}
    )*};
}
math_types!(f16, bf16, f32, f64, Complex<f32>, Complex<f64>);
impl RealFloat for f16 {}
impl RealFloat for bf16 {}
impl RealFloat for f32 {}
impl RealFloat for f64 {}

macro_rules! unary_fns {
    ($bound:ident; $($(#[$doc:meta])* $f:ident, $on:ident, $into:ident => $m:ident;)*) => {$(
        $(#[$doc])*
        pub fn $f<T: $bound>(a: &GpuArray<T>) -> Result<GpuArray<T>> {
            unary_new(UnaryOp::Math(MathFn::$m), a)
        }

        #[doc = concat!("[`", stringify!($f), "`] computed on `stream` (the result's home stream).")]
        pub fn $on<T: $bound>(a: &GpuArray<T>, stream: &Stream) -> Result<GpuArray<T>> {
            unary_on(UnaryOp::Math(MathFn::$m), a, stream)
        }

        #[doc = concat!("[`", stringify!($f), "`] into `out` (`a` broadcast to its shape), on `stream` or `out`'s home stream.")]
        pub fn $into<T: $bound, R: Element>(
            a: &GpuArray<T>,
            out: &mut GpuArray<R>,
            stream: Option<&Stream>,
        ) -> Result<()> {
            unary_into(UnaryOp::Math(MathFn::$m), a, out, stream)
        }
    )*};
}

unary_fns! { MathElement;
    /// Sine (radians).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let x = rucuda_array::GpuArray::from_slice(&stream, &[0.0f64, std::f64::consts::FRAC_PI_2])?;
    /// assert_eq!(rucuda_array::math::sin(&x)?.to_vec()?, vec![0.0, 1.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    sin, sin_on, sin_into => Sin;
    /// Cosine (radians).
    cos, cos_on, cos_into => Cos;
    /// Tangent (radians).
    tan, tan_on, tan_into => Tan;
    /// Hyperbolic sine.
    sinh, sinh_on, sinh_into => Sinh;
    /// Hyperbolic cosine.
    cosh, cosh_on, cosh_into => Cosh;
    /// Hyperbolic tangent.
    tanh, tanh_on, tanh_into => Tanh;
    /// `e^x`.
    exp, exp_on, exp_into => Exp;
    /// Natural logarithm (NaN below 0, -inf at 0 for reals).
    log, log_on, log_into => Log;
    /// Base-10 logarithm.
    log10, log10_on, log10_into => Log10;
    /// Square root (NaN below 0 for reals; the principal root for complex).
    sqrt, sqrt_on, sqrt_into => Sqrt;
}

unary_fns! { RealFloat;
    /// Arc sine (NaN outside [-1, 1]).
    asin, asin_on, asin_into => Asin;
    /// Arc cosine (NaN outside [-1, 1]).
    acos, acos_on, acos_into => Acos;
    /// Arc tangent.
    atan, atan_on, atan_into => Atan;
    /// Absolute value.
    fabs, fabs_on, fabs_into => Fabs;
    /// The smallest integral value not below `x`.
    ceil, ceil_on, ceil_into => Ceil;
    /// The largest integral value not above `x`.
    floor, floor_on, floor_into => Floor;
}

/// C's `fmod(a, b)`: the remainder of `a / b` with the sign of `a` (NaN for `b == 0`);
/// `b` an array (broadcast) or a scalar.
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// let a = rucuda_array::GpuArray::from_slice(&stream, &[5.5f32, -5.5])?;
/// assert_eq!(rucuda_array::math::fmod(&a, 2.0f32)?.to_vec()?, vec![1.5, -1.5]);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn fmod<T: RealFloat, O: BinaryOperand<T>>(
    a: &GpuArray<T>,
    b: O,
) -> Result<GpuArray<O::Output>> {
    binary_new(
        BinaryOp::Fmod,
        crate::ops::operand::Operand::Array(a.as_ref()),
        b.as_operand(),
    )
}

/// [`fmod`] into `out`, on `out`'s home stream.
pub fn fmod_into<T: RealFloat, O: BinaryOperand<T>, R: Element>(
    a: &GpuArray<T>,
    b: O,
    out: &mut GpuArray<R>,
) -> Result<()> {
    binary_into(
        BinaryOp::Fmod,
        crate::ops::operand::Operand::Array(a.as_ref()),
        b.as_operand(),
        out,
    )
}

/// `x * 2^e` elementwise with `i32` exponents (`e` broadcast to `x`'s shape).
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// use rucuda_array::{math, GpuArray};
/// let x = GpuArray::from_slice(&stream, &[1.5f64, 3.0])?;
/// let e = GpuArray::from_slice(&stream, &[2i32, -1])?;
/// assert_eq!(math::ldexp(&x, &e)?.to_vec()?, vec![6.0, 1.5]);
/// assert_eq!(math::ldexp_scalar(&x, 1)?.to_vec()?, vec![3.0, 6.0]);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn ldexp<T: RealFloat>(x: &GpuArray<T>, e: &GpuArray<i32>) -> Result<GpuArray<T>> {
    let out = GpuArray::<T>::empty(x.stream(), x.shape())?;
    ldexp_run(x, Exponent::Array(e), &out, x.stream())?;
    Ok(out)
}

/// `x * 2^e` with one exponent for every element.
pub fn ldexp_scalar<T: RealFloat>(x: &GpuArray<T>, e: i32) -> Result<GpuArray<T>> {
    let out = GpuArray::<T>::empty(x.stream(), x.shape())?;
    ldexp_run(x, Exponent::Scalar(e), &out, x.stream())?;
    Ok(out)
}

/// [`ldexp`] into `out` (of `x`'s shape), on `stream` or `out`'s home stream.
pub fn ldexp_into<T: RealFloat>(
    x: &GpuArray<T>,
    e: &GpuArray<i32>,
    out: &mut GpuArray<T>,
    stream: Option<&Stream>,
) -> Result<()> {
    ldexp_run(x, Exponent::Array(e), out, stream.unwrap_or(out.stream()))
}

enum Exponent<'a> {
    Array(&'a GpuArray<i32>),
    Scalar(i32),
}

fn check_two<T: Element, U: Element>(x: &GpuArray<T>, out: &GpuArray<U>) -> Result<()> {
    check_writable(out.layout())?;
    if out.shape() != x.shape() {
        return Err(crate::layout::LayoutError::BroadcastTo {
            from: x.shape().to_vec(),
            to: out.shape().to_vec(),
        }
        .into());
    }
    if out.context() != x.context() {
        return Err(ArrayError::ContextMismatch);
    }
    if out.shares_buffer_with(x) {
        return Err(ArrayError::InvalidArgument(
            "the output of ldexp/frexp/modf must not share memory with the input".into(),
        ));
    }
    Ok(())
}

fn ldexp_run<T: RealFloat>(
    x: &GpuArray<T>,
    e: Exponent<'_>,
    out: &GpuArray<T>,
    stream: &Stream,
) -> Result<()> {
    check_two(x, out)?;
    let (xr, or) = (x.as_ref(), out.as_ref());
    let mut homes = vec![x.stream(), out.stream()];
    let (f, e_arg) = match &e {
        Exponent::Array(a) => {
            a.layout().broadcast_to(x.shape())?;
            if a.context() != x.context() {
                return Err(ArrayError::ContextMismatch);
            }
            homes.push(a.stream());
            (
                MathSpecial::Ldexp,
                Arg::In {
                    mem: a.memory(),
                    layout: a.layout(),
                },
            )
        }
        Exponent::Scalar(v) => (MathSpecial::LdexpScalar, Arg::Scalar(ScalarValue::new(*v))),
    };
    before_on(stream, &homes)?;
    let key = OpKey::MathSpecial { f, dtype: T::DTYPE };
    run(stream, key, x.shape(), &[xr.as_in(), e_arg, or.as_out()])?;
    after_on(stream, &homes)
}

/// `(mantissa, exponent)` with `x = mantissa * 2^exponent`, `|mantissa|` in `[0.5, 1)`
/// (0 for 0; NaN and ±inf as C's `frexp`).
pub fn frexp<T: RealFloat>(x: &GpuArray<T>) -> Result<(GpuArray<T>, GpuArray<i32>)> {
    let m = GpuArray::<T>::empty(x.stream(), x.shape())?;
    let e = GpuArray::<i32>::empty(x.stream(), x.shape())?;
    two_outputs(x, MathSpecial::Frexp, &m, &e, x.stream())?;
    Ok((m, e))
}

/// [`frexp`] into `mantissa` and `exponent` (of `x`'s shape), on `stream` or the
/// mantissa's home stream.
pub fn frexp_into<T: RealFloat>(
    x: &GpuArray<T>,
    mantissa: &mut GpuArray<T>,
    exponent: &mut GpuArray<i32>,
    stream: Option<&Stream>,
) -> Result<()> {
    let s = stream.unwrap_or(mantissa.stream()).clone();
    two_outputs(x, MathSpecial::Frexp, mantissa, exponent, &s)
}

/// `(fractional part, integral part)` of every element, both with the sign of `x`.
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// let x = rucuda_array::GpuArray::from_slice(&stream, &[-2.25f32])?;
/// let (f, w) = rucuda_array::math::modf(&x)?;
/// assert_eq!((f.to_vec()?[0], w.to_vec()?[0]), (-0.25, -2.0));
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn modf<T: RealFloat>(x: &GpuArray<T>) -> Result<(GpuArray<T>, GpuArray<T>)> {
    let f = GpuArray::<T>::empty(x.stream(), x.shape())?;
    let w = GpuArray::<T>::empty(x.stream(), x.shape())?;
    two_outputs(x, MathSpecial::Modf, &f, &w, x.stream())?;
    Ok((f, w))
}

/// [`modf`] into `frac` and `whole` (of `x`'s shape), on `stream` or `frac`'s home
/// stream.
pub fn modf_into<T: RealFloat>(
    x: &GpuArray<T>,
    frac: &mut GpuArray<T>,
    whole: &mut GpuArray<T>,
    stream: Option<&Stream>,
) -> Result<()> {
    let s = stream.unwrap_or(frac.stream()).clone();
    two_outputs(x, MathSpecial::Modf, frac, whole, &s)
}

fn two_outputs<T: RealFloat, U: Element>(
    x: &GpuArray<T>,
    f: MathSpecial,
    first: &GpuArray<T>,
    second: &GpuArray<U>,
    stream: &Stream,
) -> Result<()> {
    check_two(x, first)?;
    check_two(x, second)?;
    if first.shares_buffer_with(second) {
        return Err(ArrayError::InvalidArgument(
            "the two outputs of frexp/modf must not share memory".into(),
        ));
    }
    let (xr, a, b) = (x.as_ref(), first.as_ref(), second.as_ref());
    let homes = [x.stream(), first.stream(), second.stream()];
    before_on(stream, &homes)?;
    let key = OpKey::MathSpecial { f, dtype: T::DTYPE };
    run(
        stream,
        key,
        x.shape(),
        &[xr.as_in(), a.as_out(), b.as_out()],
    )?;
    after_on(stream, &homes)
}
