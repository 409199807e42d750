//! Running one binary or unary operation: result shape by broadcasting, the result's
//! allocation (stream-ordered, on the first array operand's home stream), `out=` and
//! in-place forms with NumPy's `same_kind` casting rule and overlap handling, and the
//! launch through the engine.

use std::borrow::Cow;

use super::engine::{run, Arg};
use super::key::OpKey;
use super::operand::{check_context, ArrayRef, Operand};
use super::operations::{BinaryOp, UnaryOp};
use super::typing::{binary_types, unary_types};
use crate::convert::{check_writable, contiguous_copy};
use crate::dtype::{DType, DTypeKind, Element};
use crate::error::{ArrayError, Result};
use crate::layout::broadcast_shapes;
use crate::ordering::{after_on, before_on};
use crate::GpuArray;

/// NumPy's `same_kind` rule, with signed and unsigned integers as one kind: a result may
/// be stored into a type of the same or a higher category (bool < integer < float <
/// complex).
pub(crate) fn can_store(from: DType, to: DType) -> bool {
    fn cat(d: DType) -> u8 {
        match d.kind() {
            DTypeKind::Bool => 0,
            DTypeKind::SignedInt | DTypeKind::UnsignedInt => 1,
            DTypeKind::Float => 2,
            DTypeKind::Complex => 3,
            DTypeKind::Record => 4,
        }
    }
    // Struct types store only into themselves.
    if from.is_record() || to.is_record() {
        return from == to;
    }
    cat(from) <= cat(to)
}

fn casting_error(operation: &'static str, from: DType, to: DType) -> ArrayError {
    ArrayError::Casting {
        operation,
        from,
        to,
    }
}

/// The broadcast shape of two operands (borrowed when one shape serves).
fn operand_shape<'s>(a: &'s Operand<'_>, b: &'s Operand<'_>) -> Result<Cow<'s, [usize]>> {
    Ok(match (a.array(), b.array()) {
        (Some(x), Some(y)) if x.layout.shape() == y.layout.shape() => {
            Cow::Borrowed(x.layout.shape())
        }
        (Some(x), Some(y)) => Cow::Owned(broadcast_shapes(x.layout.shape(), y.layout.shape())?),
        (Some(x), None) => Cow::Borrowed(x.layout.shape()),
        (None, Some(y)) => Cow::Borrowed(y.layout.shape()),
        (None, None) => {
            return Err(ArrayError::InvalidArgument(
                "an operation needs at least one array operand".into(),
            ))
        }
    })
}

fn home<'o>(a: &'o Operand<'_>, b: &'o Operand<'_>) -> Result<&'o ArrayRef<'o>> {
    a.array().or(b.array()).ok_or_else(|| {
        ArrayError::InvalidArgument("an operation needs at least one array operand".into())
    })
}

/// `op(a, b)` as a new array of the natural result type `R`.
pub(crate) fn binary_new<R: Element>(
    op: BinaryOp,
    a: Operand<'_>,
    b: Operand<'_>,
) -> Result<GpuArray<R>> {
    let (_, out_t) = binary_types(op, a.dtype(), b.dtype(), a.is_scalar(), b.is_scalar())?;
    if out_t != R::DTYPE {
        return Err(casting_error(op.name(), out_t, R::DTYPE));
    }
    let stream = home(&a, &b)?.stream;
    check_context(stream, &[&a, &b])?;
    let shape = operand_shape(&a, &b)?;
    let homes = [
        a.array().map_or(stream, |x| x.stream),
        b.array().map_or(stream, |x| x.stream),
    ];
    before_on(stream, &homes)?;
    // F-ordered operands give an F-ordered result (NumPy's `K`), keeping the fast path.
    let out = match (a.array(), b.array()) {
        (Some(x), Some(y)) => {
            GpuArray::<R>::empty_for_operands(stream, &shape, &[x.layout, y.layout])?
        }
        (Some(x), None) | (None, Some(x)) => {
            GpuArray::<R>::empty_for_operands(stream, &shape, &[x.layout])?
        }
        (None, None) => GpuArray::<R>::empty(stream, &shape)?,
    };
    let key = OpKey::Binary {
        op,
        a: a.dtype(),
        b: b.dtype(),
        a_scalar: a.is_scalar(),
        b_scalar: b.is_scalar(),
        out: R::DTYPE,
        in_place: false,
    };
    let o = out.as_ref();
    run(stream, key, &shape, &[a.as_in(), b.as_in(), o.as_out()])?;
    after_on(stream, &homes)?;
    Ok(out)
}

/// A copy of `x` when it overlaps `out` other than as exactly the same elements.
fn detach<'x>(x: &'x Operand<'x>, out: &ArrayRef<'_>) -> Result<Option<Box<dyn ErasedArray>>> {
    match x {
        Operand::Array(a) if a.overlaps(out) => Ok(Some(copy_erased(a)?)),
        _ => Ok(None),
    }
}

/// A contiguous copy of a type-erased array, kept alive while the operation runs.
pub(crate) trait ErasedArray {
    fn operand(&self) -> Operand<'_>;
}

impl<T: Element> ErasedArray for GpuArray<T> {
    fn operand(&self) -> Operand<'_> {
        Operand::Array(self.as_ref())
    }
}

/// Copies the elements of `a` (any type) into a new contiguous array on its stream.
fn copy_erased(a: &ArrayRef<'_>) -> Result<Box<dyn ErasedArray>> {
    macro_rules! by_type {
        ($($d:ident => $t:ty),*) => {
            match a.dtype {
                $(DType::$d => Box::new(copy_typed::<$t>(a)?) as Box<dyn ErasedArray>,)*
                // The operations that copy overlapping operands refuse struct types.
                DType::Record(_) => {
                    return Err(ArrayError::UnsupportedType {
                        operation: "copy of an overlapping operand",
                        dtype: a.dtype,
                    })
                }
            }
        };
    }
    Ok(by_type!(
        Bool => bool, I8 => i8, I16 => i16, I32 => i32, I64 => i64,
        U8 => u8, U16 => u16, U32 => u32, U64 => u64,
        F16 => half::f16, BF16 => half::bf16, F32 => f32, F64 => f64,
        C64 => num_complex::Complex<f32>, C128 => num_complex::Complex<f64>
    ))
}

fn copy_typed<T: Element>(a: &ArrayRef<'_>) -> Result<GpuArray<T>> {
    let out = GpuArray::<T>::empty(a.stream, a.layout.shape())?;
    let o = out.as_ref();
    let key = OpKey::Cast {
        from: a.dtype,
        to: T::DTYPE,
    };
    run(a.stream, key, a.layout.shape(), &[a.as_in(), o.as_out()])?;
    Ok(out)
}

/// `op(a, b)` stored into `out` (cast to its type by the `same_kind` rule), with `a` and
/// `b` broadcast to `out`'s shape. Runs on `out`'s home stream.
pub(crate) fn binary_into<R: Element>(
    op: BinaryOp,
    a: Operand<'_>,
    b: Operand<'_>,
    out: &GpuArray<R>,
) -> Result<()> {
    check_writable(out.layout())?;
    let (_, out_t) = binary_types(op, a.dtype(), b.dtype(), a.is_scalar(), b.is_scalar())?;
    if !can_store(out_t, R::DTYPE) {
        return Err(casting_error(op.name(), out_t, R::DTYPE));
    }
    let o = out.as_ref();
    let shape = operand_shape(&a, &b)?;
    if broadcast_shapes(&shape, out.shape())? != out.shape() {
        return Err(crate::layout::LayoutError::BroadcastTo {
            from: shape.to_vec(),
            to: out.shape().to_vec(),
        }
        .into());
    }
    let stream = out.stream();
    check_context(stream, &[&a, &b])?;
    // Exactly the same elements as `a`: the in-place kernel (one pointer, no aliasing).
    if let Operand::Array(x) = &a {
        if x.same_elements(&o) && !b.array().is_some_and(|y| y.overlaps(&o)) {
            return binary_assign_ref(op, &o, b);
        }
    }
    let a_copy = detach(&a, &o)?;
    let b_copy = detach(&b, &o)?;
    let a = a_copy.as_ref().map_or(a, |c| c.operand());
    let b = b_copy.as_ref().map_or(b, |c| c.operand());
    let homes = [
        a.array().map_or(stream, |x| x.stream),
        b.array().map_or(stream, |x| x.stream),
    ];
    before_on(stream, &homes)?;
    let key = OpKey::Binary {
        op,
        a: a.dtype(),
        b: b.dtype(),
        a_scalar: a.is_scalar(),
        b_scalar: b.is_scalar(),
        out: R::DTYPE,
        in_place: false,
    };
    run(
        stream,
        key,
        out.shape(),
        &[a.as_in(), b.as_in(), o.as_out()],
    )?;
    after_on(stream, &homes)
}

/// `x = op(x, b)` in place (`x`'s type kept by the `same_kind` rule).
pub(crate) fn binary_assign<T: Element>(
    op: BinaryOp,
    x: &GpuArray<T>,
    b: Operand<'_>,
) -> Result<()> {
    check_writable(x.layout())?;
    let r = x.as_ref();
    check_context(x.stream(), &[&b])?;
    if let Operand::Array(y) = &b {
        broadcast_shapes(y.layout.shape(), x.shape())
            .ok()
            .filter(|s| s.as_slice() == x.shape())
            .ok_or_else(|| crate::layout::LayoutError::BroadcastTo {
                from: y.layout.shape().to_vec(),
                to: x.shape().to_vec(),
            })?;
    }
    binary_assign_ref(op, &r, b)
}

fn binary_assign_ref(op: BinaryOp, x: &ArrayRef<'_>, b: Operand<'_>) -> Result<()> {
    let (_, out_t) = binary_types(op, x.dtype, b.dtype(), false, b.is_scalar())?;
    if !can_store(out_t, x.dtype) {
        return Err(casting_error(op.name(), out_t, x.dtype));
    }
    let b_copy = detach(&b, x)?;
    let b = b_copy.as_ref().map_or(b, |c| c.operand());
    let stream = x.stream;
    let homes = [b.array().map_or(stream, |y| y.stream)];
    before_on(stream, &homes)?;
    let key = OpKey::Binary {
        op,
        a: x.dtype,
        b: b.dtype(),
        a_scalar: false,
        b_scalar: b.is_scalar(),
        out: x.dtype,
        in_place: true,
    };
    let args = [
        Arg::Out {
            mem: x.mem,
            layout: x.layout,
        },
        b.as_in(),
    ];
    run(stream, key, x.layout.shape(), &args)?;
    after_on(stream, &homes)
}

/// `op(a)` as a new array of the natural result type `R`.
pub(crate) fn unary_new<T: Element, R: Element>(
    op: UnaryOp,
    a: &GpuArray<T>,
) -> Result<GpuArray<R>> {
    let (_, out_t) = unary_types(op, T::DTYPE)?;
    if out_t != R::DTYPE {
        return Err(casting_error("unary operation", out_t, R::DTYPE));
    }
    let out = GpuArray::<R>::empty_for_operands(a.stream(), a.shape(), &[a.layout()])?;
    let (x, o) = (a.as_ref(), out.as_ref());
    let key = OpKey::Unary {
        op,
        a: T::DTYPE,
        out: R::DTYPE,
        in_place: false,
    };
    run(a.stream(), key, a.shape(), &[x.as_in(), o.as_out()])?;
    Ok(out)
}

/// `op(a)` into `out` (broadcasting `a`), on `stream` (default: `out`'s home stream).
pub(crate) fn unary_into<T: Element, R: Element>(
    op: UnaryOp,
    a: &GpuArray<T>,
    out: &GpuArray<R>,
    stream: Option<&rucuda_driver::Stream>,
) -> Result<()> {
    check_writable(out.layout())?;
    let (_, out_t) = unary_types(op, T::DTYPE)?;
    if !can_store(out_t, R::DTYPE) {
        return Err(casting_error("unary operation", out_t, R::DTYPE));
    }
    a.layout().broadcast_to(out.shape())?;
    if a.context() != out.context() {
        return Err(ArrayError::ContextMismatch);
    }
    let stream = stream.unwrap_or(out.stream());
    let o = out.as_ref();
    let x = a.as_ref();
    if x.same_elements(&o) {
        let key = OpKey::Unary {
            op,
            a: T::DTYPE,
            out: R::DTYPE,
            in_place: true,
        };
        before_on(stream, &[a.stream()])?;
        run(stream, key, out.shape(), &[o.as_out()])?;
        return after_on(stream, &[a.stream()]);
    }
    let copy;
    let x = if x.overlaps(&o) {
        copy = contiguous_copy(a)?;
        copy.as_ref()
    } else {
        x
    };
    let homes = [x.stream, out.stream()];
    before_on(stream, &homes)?;
    let key = OpKey::Unary {
        op,
        a: T::DTYPE,
        out: R::DTYPE,
        in_place: false,
    };
    run(stream, key, out.shape(), &[x.as_in(), o.as_out()])?;
    after_on(stream, &homes)
}

/// `op(a)` as a new array on `stream` (which becomes the result's home stream).
pub(crate) fn unary_on<T: Element, R: Element>(
    op: UnaryOp,
    a: &GpuArray<T>,
    stream: &rucuda_driver::Stream,
) -> Result<GpuArray<R>> {
    if stream.raw() == a.stream().raw() {
        return unary_new(op, a);
    }
    let out = GpuArray::<R>::empty_for_operands(stream, a.shape(), &[a.layout()])?;
    unary_into(op, a, &out, Some(stream))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_kind_rule() {
        assert!(can_store(DType::F64, DType::F32));
        assert!(can_store(DType::I64, DType::U8));
        assert!(can_store(DType::Bool, DType::C64));
        assert!(!can_store(DType::F32, DType::I32));
        assert!(!can_store(DType::C64, DType::F64));
        assert!(!can_store(DType::I8, DType::Bool));
    }
}
