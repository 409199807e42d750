//! The types an operation computes in and delivers, by NumPy's promotion rules (NEP 50
//! for Rust scalars), or why it is refused.

use super::operations::{BinaryOp, UnaryOp};
use crate::dtype::DType;
use crate::error::{ArrayError, Result};

/// The type arithmetic happens in for values of `d`: `float` for the 16-bit floats,
/// else `d` itself.
pub(crate) fn arith_type(d: DType) -> DType {
    match d {
        DType::F16 | DType::BF16 => DType::F32,
        other => other,
    }
}
/// The result types of a binary operation: `(compute, output)`, or why it is refused.
///
/// `a_weak`/`b_weak` mark Rust scalars (NEP 50's weak scalars: the array's type wins
/// within a category).
pub(crate) fn binary_types(
    op: BinaryOp,
    a: DType,
    b: DType,
    a_weak: bool,
    b_weak: bool,
) -> Result<(DType, DType)> {
    use BinaryOp::*;
    for d in [a, b] {
        if d.is_record() {
            return Err(ArrayError::UnsupportedType {
                operation: op.name(),
                dtype: d,
            });
        }
    }
    let p = match (a_weak, b_weak) {
        (true, false) => b.promote_weak(a),
        (false, true) => a.promote_weak(b),
        _ => a.promote(b),
    };
    let refuse = || ArrayError::UnsupportedType {
        operation: op.name(),
        dtype: p,
    };
    Ok(match op {
        Add | Mul | Maximum | Minimum => (p, p),
        Sub if p == DType::Bool => return Err(refuse()),
        Sub => (p, p),
        Div => {
            let c = if p.is_integer() || p == DType::Bool {
                DType::F64
            } else {
                p
            };
            (c, c)
        }
        FloorDiv | Remainder | Pow if p == DType::Bool || p.is_complex() => {
            if op == Pow && p.is_complex() {
                (p, p)
            } else {
                return Err(refuse());
            }
        }
        FloorDiv | Remainder | Pow => (p, p),
        Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual => (p, DType::Bool),
        LogicalAnd | LogicalOr | LogicalXor => (DType::Bool, DType::Bool),
        BitAnd | BitOr | BitXor if p.is_integer() || p == DType::Bool => (p, p),
        BitAnd | BitOr | BitXor => return Err(refuse()),
        Fmod if p.is_float() => (p, p),
        Fmod => return Err(refuse()),
    })
}

/// The result types of a unary operation: `(compute, output)`.
pub(crate) fn unary_types(op: UnaryOp, a: DType) -> Result<(DType, DType)> {
    let refuse = |name: &'static str| ArrayError::UnsupportedType {
        operation: name,
        dtype: a,
    };
    if a.is_record() {
        return Err(refuse("unary operation"));
    }
    Ok(match op {
        UnaryOp::Neg if a == DType::Bool => return Err(refuse("negative")),
        UnaryOp::Neg | UnaryOp::Conj => (a, a),
        UnaryOp::Abs | UnaryOp::Real | UnaryOp::Imag => (a, a.real_type()),
        UnaryOp::LogicalNot => (DType::Bool, DType::Bool),
        UnaryOp::BitNot if a.is_integer() || a == DType::Bool => (a, a),
        UnaryOp::BitNot => return Err(refuse("invert")),
        UnaryOp::Math(f) => {
            let ok = a.is_float() || (a.is_complex() && f.supports_complex());
            if !ok {
                return Err(refuse(f.c_name()));
            }
            (a, a)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn binary_result_types() {
        use BinaryOp::*;
        assert_eq!(
            binary_types(Add, F32, F32, false, false).unwrap(),
            (F32, F32)
        );
        assert_eq!(binary_types(Add, I8, U8, false, false).unwrap(), (I16, I16));
        assert_eq!(
            binary_types(Add, F16, F64, false, true).unwrap(),
            (F16, F16)
        );
        assert_eq!(
            binary_types(Add, I32, F32, true, false).unwrap(),
            (F32, F32)
        );
        assert_eq!(
            binary_types(Div, I32, I32, false, false).unwrap(),
            (F64, F64)
        );
        assert_eq!(
            binary_types(Div, Bool, Bool, false, false).unwrap(),
            (F64, F64)
        );
        assert_eq!(
            binary_types(Div, F16, I8, false, false).unwrap(),
            (F16, F16)
        );
        assert_eq!(
            binary_types(Less, I32, U32, false, false).unwrap(),
            (I64, Bool)
        );
        assert_eq!(
            binary_types(LogicalAnd, C64, I8, false, false).unwrap(),
            (Bool, Bool)
        );
        assert_eq!(
            binary_types(Pow, C64, F32, false, false).unwrap(),
            (C64, C64)
        );
        assert!(binary_types(Sub, Bool, Bool, false, false).is_err());
        assert!(binary_types(FloorDiv, C64, C64, false, false).is_err());
        assert!(binary_types(Pow, Bool, Bool, false, false).is_err());
        assert!(binary_types(BitAnd, F32, I8, false, false).is_err());
        assert!(binary_types(Fmod, I32, I32, false, false).is_err());
    }
}
