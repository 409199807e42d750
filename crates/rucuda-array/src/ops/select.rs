//! Selection: NumPy's `where` and PyCUDA's `if_positive`.

use super::engine::run;
use super::key::OpKey;
use super::operand::{check_context, BinaryOperand, Operand};
use super::operations::BinaryOp;
use super::typing::binary_types;
use crate::dtype::Element;
use crate::elementwise::ScalarValue;
use crate::error::{ArrayError, Result};
use crate::layout::broadcast_shapes_many;
use crate::ordering::{after_on, before_on};
use crate::GpuArray;

/// NumPy's `where(cond, a, b)`: `a` where `cond` is nonzero, else `b`, with `cond`, `a`
/// and `b` broadcast together; the result has the promoted type of `a` and `b` (a scalar
/// `b` is weak). Runs on `cond`'s home stream.
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// use rucuda_array::{ops, GpuArray};
/// let x = GpuArray::from_slice(&stream, &[-1.0f32, 2.0, -3.0])?;
/// let pos = x.greater(0)?;
/// let r: GpuArray<f32> = ops::where_(&pos, &x, 0.0)?;
/// assert_eq!(r.to_vec()?, vec![0.0, 2.0, 0.0]);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn where_<C: Element, T: Element, O: BinaryOperand<T>>(
    cond: &GpuArray<C>,
    a: &GpuArray<T>,
    b: O,
) -> Result<GpuArray<O::Output>> {
    select(cond, Operand::Array(a.as_ref()), b.as_operand(), false)
}

/// [`where_`] with two scalars: `a` where `cond` is nonzero, else `b`.
pub fn where_scalars<C: Element, S: Element>(
    cond: &GpuArray<C>,
    a: S,
    b: S,
) -> Result<GpuArray<S>> {
    select(
        cond,
        Operand::Scalar(ScalarValue::new(a)),
        Operand::Scalar(ScalarValue::new(b)),
        false,
    )
}

/// PyCUDA's `if_positive(criterion, then_, else_)`: `a` where `criterion > 0`, else `b`
/// (NaN is not positive). Broadcasting and types as [`where_`]; complex criteria are
/// refused.
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// use rucuda_array::{ops, GpuArray};
/// let c = GpuArray::from_slice(&stream, &[1i8, 0, -1])?;
/// let a = GpuArray::from_slice(&stream, &[1.0f64, 2.0, 3.0])?;
/// assert_eq!(ops::if_positive(&c, &a, -1.0)?.to_vec()?, vec![1.0, -1.0, -1.0]);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn if_positive<C: Element, T: Element, O: BinaryOperand<T>>(
    criterion: &GpuArray<C>,
    a: &GpuArray<T>,
    b: O,
) -> Result<GpuArray<O::Output>> {
    select(criterion, Operand::Array(a.as_ref()), b.as_operand(), true)
}

fn select<C: Element, R: Element>(
    cond: &GpuArray<C>,
    a: Operand<'_>,
    b: Operand<'_>,
    positive: bool,
) -> Result<GpuArray<R>> {
    // The result type is the promotion of `a` and `b` (what `add` gives, for every type).
    let (out_t, _) = binary_types(
        BinaryOp::Add,
        a.dtype(),
        b.dtype(),
        a.is_scalar(),
        b.is_scalar(),
    )?;
    if out_t != R::DTYPE {
        return Err(ArrayError::Casting {
            operation: "where",
            from: out_t,
            to: R::DTYPE,
        });
    }
    let stream = cond.stream();
    check_context(stream, &[&a, &b])?;
    let mut shapes: Vec<&[usize]> = vec![cond.shape()];
    shapes.extend(a.array().map(|x| x.layout.shape()));
    shapes.extend(b.array().map(|x| x.layout.shape()));
    let shape = broadcast_shapes_many(&shapes)?;
    let homes = [
        a.array().map_or(stream, |x| x.stream),
        b.array().map_or(stream, |x| x.stream),
    ];
    before_on(stream, &homes)?;
    let out = GpuArray::<R>::empty(stream, &shape)?;
    let (c, o) = (cond.as_ref(), out.as_ref());
    let key = OpKey::Where {
        cond: C::DTYPE,
        a: a.dtype(),
        b: b.dtype(),
        a_scalar: a.is_scalar(),
        b_scalar: b.is_scalar(),
        out: R::DTYPE,
        positive,
    };
    run(
        stream,
        key,
        &shape,
        &[c.as_in(), a.as_in(), b.as_in(), o.as_out()],
    )?;
    after_on(stream, &homes)?;
    Ok(out)
}
