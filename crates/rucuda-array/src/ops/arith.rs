//! Arithmetic: `+ - * / // % **`, `maximum`/`minimum`, negation, `abs`, bitwise
//! operations, with arrays and scalars on either side, NumPy broadcasting and NumPy's
//! type promotion; in-place and `out=` forms.
//!
//! **Why the operators return `Result`.** A kernel launch can fail (shapes that do not
//! broadcast, a compile error, a driver error), and this crate does not panic. So
//! `&a + &b` is `Result<GpuArray<_>>`: `(&a + &b)?`. Owned operands work too
//! (`(&a * 2.0)? + &b`), and the fusion API ([`crate::fusion::Expr`]) builds whole
//! expressions infallibly and returns one `Result` at `eval()`. The compound assignments
//! (`+=`) cannot return a `Result` in Rust, so they are methods instead:
//! [`GpuArray::try_add_assign`] and friends, and [`GpuArray::binary_assign`] for any
//! operation.
//!
//! **Scalars.** A Rust scalar of any element type works on the right (`&x * 2.0f32`,
//! `&x * 3u8`) and is weak (NEP 50): `f16 array * 2.0f64` stays `f16`. On the *left*
//! the operators take `i64`, `f64`, `bool`, `f16`, `bf16` and the complex types: one
//! integer and one primitive float type, so that an unsuffixed literal (`3 * &b`,
//! `2.5 * &b`) has exactly one candidate impl and its type is settled at once. With
//! several (`i32` and `i64`, `f32` and `f64`) Rust could not pick the literal's type
//! before the `?` that follows, and chained expressions failed to infer
//! (`((&a - (3.0 * &b)?)? + (-&a)?)?` needed an annotation on every intermediate). A
//! weak scalar gives the array's type whatever its width, so `3 * &b` and `3u8 * &b`
//! would give the same result: for another typed scalar on the left, write it on the
//! right (`&b * x_u8`) or convert it (`i64::from(x_u8) * &b`).
//!
//! ```no_run
//! # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
//! use rucuda_array::GpuArray;
//! let a = GpuArray::from_slice(&stream, &[1.0f32, 2.0, 3.0])?;
//! let b = GpuArray::from_slice(&stream, &[0.5f32, 1.0, 1.5])?;
//! // No annotation on any intermediate: every literal has one candidate type.
//! let c = ((&a - (3.0 * &b)?)? + (-&a)?)?;
//! let d = ((2 * &c)? / (&a + 1)?)?;
//! assert_eq!(c.to_vec()?, vec![-1.5, -3.0, -4.5]);
//! assert_eq!(d.to_vec()?.len(), 3);
//! # Ok::<(), rucuda_array::ArrayError>(())
//! ```
//!
//! **Division.** `/` is NumPy's true division: integer and `bool` operands give `f64`
//! (`<i32 as TrueDivide>::Output == f64`); floats and complex keep their promoted type.
//! [`GpuArray::floor_div`] is NumPy's `//` (floor; integer division by zero gives 0),
//! and `%` is NumPy's `remainder` (the sign of the divisor).

use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Rem, Sub};

use half::{bf16, f16};
use num_complex::Complex;

use super::apply::{binary_assign, binary_into, binary_new, unary_into, unary_new};
use super::operand::{BinaryOperand, Operand};
use super::operations::{BinaryOp, UnaryOp};
use super::promote::{Promote, PromoteWeak, RealPart, TrueDivide};
use crate::dtype::Element;
use crate::elementwise::ScalarValue;
use crate::error::Result;
use crate::GpuArray;

type DivOut<T, O> = <<O as BinaryOperand<T>>::Output as TrueDivide>::Output;

impl<T: Element> GpuArray<T> {
    fn me(&self) -> Operand<'_> {
        Operand::Array(self.as_ref())
    }

    /// `self + other` (NumPy's `add`; logical or for `bool`), a new array of the promoted
    /// type. The same as `&self + other`.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::GpuArray;
    /// let a = GpuArray::from_slice(&stream, &[1.0f32, 2.0, 3.0])?;
    /// let b = GpuArray::from_slice(&stream, &[10i16, 20, 30])?;
    /// let c: GpuArray<f32> = a.try_add(&b)?;
    /// assert_eq!(c.to_vec()?, vec![11.0, 22.0, 33.0]);
    /// let d: GpuArray<f32> = (&a + 0.5)?; // an f64 scalar keeps the array's type
    /// assert_eq!(d.to_vec()?, vec![1.5, 2.5, 3.5]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn try_add<O: BinaryOperand<T>>(&self, other: O) -> Result<GpuArray<O::Output>> {
        binary_new(BinaryOp::Add, self.me(), other.as_operand())
    }

    /// `self - other` (refused for `bool`, as in NumPy).
    pub fn try_sub<O: BinaryOperand<T>>(&self, other: O) -> Result<GpuArray<O::Output>> {
        binary_new(BinaryOp::Sub, self.me(), other.as_operand())
    }

    /// `self * other` (logical and for `bool`).
    pub fn try_mul<O: BinaryOperand<T>>(&self, other: O) -> Result<GpuArray<O::Output>> {
        binary_new(BinaryOp::Mul, self.me(), other.as_operand())
    }

    /// True division `self / other`: integers and `bool` give `f64`.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[1i32, -7])?;
    /// let q: rucuda_array::GpuArray<f64> = a.try_div(2)?;
    /// assert_eq!(q.to_vec()?, vec![0.5, -3.5]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn try_div<O: BinaryOperand<T>>(&self, other: O) -> Result<GpuArray<DivOut<T, O>>> {
        binary_new(BinaryOp::Div, self.me(), other.as_operand())
    }

    /// NumPy's floor division `self // other` (integers: by zero gives 0, `MIN // -1`
    /// wraps; floats: NaN and ±inf as NumPy; refused for `bool` and complex).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[7i32, -7, 7])?;
    /// assert_eq!(a.floor_div(2)?.to_vec()?, vec![3, -4, 3]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn floor_div<O: BinaryOperand<T>>(&self, other: O) -> Result<GpuArray<O::Output>> {
        binary_new(BinaryOp::FloorDiv, self.me(), other.as_operand())
    }

    /// NumPy's `remainder` (`%`): the sign of the divisor; by zero gives 0 for integers.
    pub fn remainder<O: BinaryOperand<T>>(&self, other: O) -> Result<GpuArray<O::Output>> {
        binary_new(BinaryOp::Remainder, self.me(), other.as_operand())
    }

    /// `self ** other` (integers: wrapping; a negative integer exponent gives 0 except for
    /// bases ±1; refused for `bool`).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[2.0f64, 9.0])?;
    /// assert_eq!(a.pow(0.5)?.to_vec()?[1], 3.0);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn pow<O: BinaryOperand<T>>(&self, exponent: O) -> Result<GpuArray<O::Output>> {
        binary_new(BinaryOp::Pow, self.me(), exponent.as_operand())
    }

    /// `base ** self` for a scalar base (PyCUDA's reversed pow, `__rpow__`).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let e = rucuda_array::GpuArray::from_slice(&stream, &[0.0f32, 1.0, 3.0])?;
    /// assert_eq!(e.rpow(2.0f32)?.to_vec()?, vec![1.0, 2.0, 8.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn rpow<S: Element>(&self, base: S) -> Result<GpuArray<<T as PromoteWeak<S>>::Output>>
    where
        T: PromoteWeak<S>,
    {
        binary_new(
            BinaryOp::Pow,
            Operand::Scalar(ScalarValue::new(base)),
            self.me(),
        )
    }

    /// Elementwise maximum (NumPy's `maximum`: NaN propagates; complex numbers compare
    /// lexicographically).
    pub fn maximum<O: BinaryOperand<T>>(&self, other: O) -> Result<GpuArray<O::Output>> {
        binary_new(BinaryOp::Maximum, self.me(), other.as_operand())
    }

    /// Elementwise minimum (NumPy's `minimum`: NaN propagates).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[1.0f32, f32::NAN, -3.0])?;
    /// let m: Vec<f32> = a.minimum(0.0)?.to_vec()?;
    /// assert!(m[0] == 0.0 && m[1].is_nan() && m[2] == -3.0);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn minimum<O: BinaryOperand<T>>(&self, other: O) -> Result<GpuArray<O::Output>> {
        binary_new(BinaryOp::Minimum, self.me(), other.as_operand())
    }

    /// Any binary operation into an existing array (NumPy's `out=`): `self` and `other`
    /// broadcast to `out`'s shape, the result is stored in `out`'s type when NumPy's
    /// `same_kind` rule allows it (else [`crate::ArrayError::Casting`]). Runs on `out`'s
    /// home stream; operands that overlap `out` are copied first unless they are exactly
    /// `out`.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{ops::BinaryOp, GpuArray};
    /// let a = GpuArray::from_slice(&stream, &[1.0f64, 2.0])?;
    /// let mut out = GpuArray::<f32>::empty(&stream, &[2])?;
    /// a.binary_into(BinaryOp::Mul, 3.0, &mut out)?;
    /// assert_eq!(out.to_vec()?, vec![3.0, 6.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn binary_into<O: BinaryOperand<T>, R: Element>(
        &self,
        op: BinaryOp,
        other: O,
        out: &mut GpuArray<R>,
    ) -> Result<()> {
        binary_into(op, self.me(), other.as_operand(), out)
    }

    /// `self = op(self, other)` in place (`other` broadcast to this array's shape; the
    /// result stored in this array's type by the `same_kind` rule).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{ops::BinaryOp, GpuArray};
    /// let mut a = GpuArray::from_slice(&stream, &[5i64, 6])?;
    /// a.binary_assign(BinaryOp::Maximum, 6)?;
    /// assert_eq!(a.to_vec()?, vec![6, 6]);
    /// assert!(a.binary_assign(BinaryOp::Div, 2).is_err()); // a float result into int64
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn binary_assign<O: BinaryOperand<T>>(&mut self, op: BinaryOp, other: O) -> Result<()> {
        binary_assign(op, self, other.as_operand())
    }

    /// `self += other` (the compound assignment, which Rust cannot make fallible).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let mut a = rucuda_array::GpuArray::from_slice(&stream, &[1.0f32, 2.0])?;
    /// let b = rucuda_array::GpuArray::from_slice(&stream, &[0.5f32, 0.5])?;
    /// a.try_add_assign(&b)?;
    /// a.try_mul_assign(2)?;
    /// assert_eq!(a.to_vec()?, vec![3.0, 5.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn try_add_assign<O: BinaryOperand<T>>(&mut self, other: O) -> Result<()> {
        binary_assign(BinaryOp::Add, self, other.as_operand())
    }

    /// `self -= other`.
    pub fn try_sub_assign<O: BinaryOperand<T>>(&mut self, other: O) -> Result<()> {
        binary_assign(BinaryOp::Sub, self, other.as_operand())
    }

    /// `self *= other`.
    pub fn try_mul_assign<O: BinaryOperand<T>>(&mut self, other: O) -> Result<()> {
        binary_assign(BinaryOp::Mul, self, other.as_operand())
    }

    /// `self /= other` (true division; refused for integer arrays by `same_kind`).
    pub fn try_div_assign<O: BinaryOperand<T>>(&mut self, other: O) -> Result<()> {
        binary_assign(BinaryOp::Div, self, other.as_operand())
    }

    /// `-self` (integers wrap; refused for `bool`).
    pub fn try_neg(&self) -> Result<Self> {
        unary_new(UnaryOp::Neg, self)
    }

    /// `|self|`: integers wrap (`|MIN| == MIN`); complex gives its real type.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{Complex, GpuArray};
    /// let z = GpuArray::from_slice(&stream, &[Complex::new(3.0f32, -4.0)])?;
    /// let m: GpuArray<f32> = z.abs()?;
    /// assert_eq!(m.to_vec()?, vec![5.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn abs(&self) -> Result<GpuArray<<T as RealPart>::Real>>
    where
        T: RealPart,
    {
        unary_new(UnaryOp::Abs, self)
    }

    /// Any unary operation into an existing array (broadcasting, `same_kind` casting),
    /// on `stream` (default: `out`'s home stream).
    pub fn unary_into<R: Element>(
        &self,
        op: UnaryOp,
        out: &mut GpuArray<R>,
        stream: Option<&rucuda_driver::Stream>,
    ) -> Result<()> {
        unary_into(op, self, out, stream)
    }
}

macro_rules! scalar_left {
    ($Trait:ident, $method:ident, $op:expr, $out:ident; $($s:ty),*) => {$(
        impl<'a, T: Element + PromoteWeak<$s>> $Trait<&'a GpuArray<T>> for $s {
            type Output = Result<GpuArray<$out!(<T as PromoteWeak<$s>>::Output)>>;
            fn $method(self, rhs: &'a GpuArray<T>) -> Self::Output {
                binary_new($op, Operand::Scalar(ScalarValue::new(self)), rhs.me())
            }
        }
        impl<T: Element + PromoteWeak<$s>> $Trait<GpuArray<T>> for $s {
            type Output = Result<GpuArray<$out!(<T as PromoteWeak<$s>>::Output)>>;
            fn $method(self, rhs: GpuArray<T>) -> Self::Output {
                binary_new($op, Operand::Scalar(ScalarValue::new(self)), rhs.me())
            }
        }
    )*};
}

macro_rules! same {
    ($t:ty) => {
        $t
    };
}

macro_rules! true_div {
    ($t:ty) => {
        <$t as TrueDivide>::Output
    };
}

macro_rules! std_binop {
    ($Trait:ident, $method:ident, $op:expr, $out:ident) => {
        impl<'a, 'b, T: Element + Promote<U>, U: Element> $Trait<&'b GpuArray<U>> for &'a GpuArray<T> {
            type Output = Result<GpuArray<$out!(<T as Promote<U>>::Output)>>;
            fn $method(self, rhs: &'b GpuArray<U>) -> Self::Output {
                binary_new($op, self.me(), rhs.me())
            }
        }
        impl<'b, T: Element + Promote<U>, U: Element> $Trait<&'b GpuArray<U>> for GpuArray<T> {
            type Output = Result<GpuArray<$out!(<T as Promote<U>>::Output)>>;
            fn $method(self, rhs: &'b GpuArray<U>) -> Self::Output {
                binary_new($op, self.me(), rhs.me())
            }
        }
        impl<'a, T: Element + Promote<U>, U: Element> $Trait<GpuArray<U>> for &'a GpuArray<T> {
            type Output = Result<GpuArray<$out!(<T as Promote<U>>::Output)>>;
            fn $method(self, rhs: GpuArray<U>) -> Self::Output {
                binary_new($op, self.me(), rhs.me())
            }
        }
        impl<T: Element + Promote<U>, U: Element> $Trait<GpuArray<U>> for GpuArray<T> {
            type Output = Result<GpuArray<$out!(<T as Promote<U>>::Output)>>;
            fn $method(self, rhs: GpuArray<U>) -> Self::Output {
                binary_new($op, self.me(), rhs.me())
            }
        }
        impl<'a, T: Element + PromoteWeak<S>, S: Element> $Trait<S> for &'a GpuArray<T> {
            type Output = Result<GpuArray<$out!(<T as PromoteWeak<S>>::Output)>>;
            fn $method(self, rhs: S) -> Self::Output {
                binary_new($op, self.me(), Operand::Scalar(ScalarValue::new(rhs)))
            }
        }
        impl<T: Element + PromoteWeak<S>, S: Element> $Trait<S> for GpuArray<T> {
            type Output = Result<GpuArray<$out!(<T as PromoteWeak<S>>::Output)>>;
            fn $method(self, rhs: S) -> Self::Output {
                binary_new($op, self.me(), Operand::Scalar(ScalarValue::new(rhs)))
            }
        }
        // One integer and one primitive float type on the left (see the module docs).
        scalar_left!($Trait, $method, $op, $out;
            bool, i64, f16, bf16, f64, Complex<f32>, Complex<f64>);
    };
}

std_binop!(Add, add, BinaryOp::Add, same);
std_binop!(Sub, sub, BinaryOp::Sub, same);
std_binop!(Mul, mul, BinaryOp::Mul, same);
std_binop!(Div, div, BinaryOp::Div, true_div);
std_binop!(Rem, rem, BinaryOp::Remainder, same);
std_binop!(BitAnd, bitand, BinaryOp::BitAnd, same);
std_binop!(BitOr, bitor, BinaryOp::BitOr, same);
std_binop!(BitXor, bitxor, BinaryOp::BitXor, same);

impl<T: Element> Neg for &GpuArray<T> {
    type Output = Result<GpuArray<T>>;
    fn neg(self) -> Self::Output {
        unary_new(UnaryOp::Neg, self)
    }
}

impl<T: Element> Neg for GpuArray<T> {
    type Output = Result<GpuArray<T>>;
    fn neg(self) -> Self::Output {
        unary_new(UnaryOp::Neg, &self)
    }
}

/// `!a`: logical not for `bool` arrays, bitwise not for integers (NumPy's `invert`).
impl<T: Element> Not for &GpuArray<T> {
    type Output = Result<GpuArray<T>>;
    fn not(self) -> Self::Output {
        unary_new(UnaryOp::BitNot, self)
    }
}

impl<T: Element> Not for GpuArray<T> {
    type Output = Result<GpuArray<T>>;
    fn not(self) -> Self::Output {
        unary_new(UnaryOp::BitNot, &self)
    }
}

/// Compile-time checks that the operator forms type-check as documented (never run).
#[allow(dead_code, clippy::diverging_sub_expression)]
fn operator_forms_type_check(
    a: &GpuArray<f32>,
    b: &GpuArray<i16>,
    h: &GpuArray<f16>,
    i: &GpuArray<i32>,
) -> Result<()> {
    let _: GpuArray<f32> = (a + b)?;
    let _: GpuArray<f32> = (a * 2.0)?;
    let _: GpuArray<f32> = (2.0 * a)?;
    let _: GpuArray<f32> = (2 * a)?;
    let _: GpuArray<f16> = (h * 2.0)?;
    let _: GpuArray<f64> = (i / 2)?;
    let _: GpuArray<f64> = (i / b)?;
    let _: GpuArray<i32> = (i % 3)?;
    let _: GpuArray<f32> = ((a * 2.0)? + a)?;
    let _: GpuArray<f32> = (-a)?;
    let _: GpuArray<i32> = (!i)?;
    let _: GpuArray<f32> = a.maximum(0.0)?;
    let _: GpuArray<f32> = a.pow(2)?;
    let _: GpuArray<Complex<f32>> = (a + Complex::new(0.0f32, 1.0))?;
    Ok(())
}

/// Compile-time checks that chained expressions infer with no annotation (never run).
#[allow(dead_code, clippy::diverging_sub_expression)]
fn chained_expressions_infer(
    a: &GpuArray<f32>,
    b: &GpuArray<f32>,
    i: &GpuArray<i32>,
) -> Result<()> {
    let c = ((a - (3.0 * b)?)? + (-a)?)?;
    let d = ((a - (3 * b)?)? * (b * 2.0)?)?;
    let e = ((2 * i)? + (i % 3)?)?;
    let f = ((1.5 * &c)? - (&d / 2)?)?;
    let g = (true * a)?;
    let (_, _, _, _): (GpuArray<f32>, GpuArray<i32>, GpuArray<f32>, GpuArray<f32>) = (d, e, f, g);
    let _ = c.len();
    Ok(())
}
