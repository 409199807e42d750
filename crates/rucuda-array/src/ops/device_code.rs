//! The CUDA C++ that every built-in operation and every fused expression is made of:
//! a helper preamble with NumPy's semantics (`cuda/helpers.cuh`, and
//! `cuda/complex_helpers.cuh` for complex types), explicit casts between every pair of
//! element types, and the C expression of one operation node.
//!
//! One generator serves the single-operation kernels and the fusion API, so a fused
//! expression computes each node exactly as the unfused operation does. Floating-point
//! `+ - * /` go through the `__f*_rn`/`__d*_rn` intrinsics, which the compiler never
//! contracts into fused multiply-adds: results are bit-identical fused or not, and equal
//! to NumPy's (which does not contract either).
//!
//! Semantics (NumPy's unless said otherwise):
//! - integers wrap on overflow (arithmetic is done in the unsigned type of the same size,
//!   so there is no undefined behaviour);
//! - integer `floor_div` and `remainder` by zero give 0 (NumPy gives 0 with a warning);
//!   `MIN // -1` wraps to `MIN`;
//! - an integer to a negative integer power gives `1` for base 1, `±1` for base -1 and
//!   `0` otherwise (NumPy raises an error, which a kernel cannot);
//! - `maximum`/`minimum` propagate NaN; complex numbers order lexicographically;
//! - float-to-integer casts truncate toward zero; to 8-, 16- and 32-bit unsigned targets
//!   they go through a wider signed integer and wrap (what NumPy does on x86-64); values
//!   outside the widest integer's range saturate and NaN becomes 0 (CUDA's conversions;
//!   NumPy's result there is platform-defined);
//! - casts to `bool` test `!= 0` (NaN is `true`); complex to real takes the real part.

use std::fmt::Write as _;

use super::operations::{BinaryOp, UnaryOp};
use super::typing::arith_type;
use crate::codegen::prelude::PreludeBlocks;
use crate::dtype::DType;

/// Helpers for integer and real arithmetic, needed by every built-in kernel.
const HELPERS: &str = include_str!("cuda/helpers.cuh");
/// Helpers for complex arithmetic, comparisons and functions (needs the complex prelude).
const COMPLEX_HELPERS: &str = include_str!("cuda/complex_helpers.cuh");
/// `rucuda_scatter_store`: the relaxed gpu-scope stores of scatters (`put`, `put_axis`,
/// `multi_take_put`), whose indices may repeat.
const SCATTER_STORE: &str = include_str!("cuda/scatter_store.cuh");

/// The C expression converting `e` (of type `from`) to `to`, with NumPy's cast rules
/// (see the module documentation).
///
/// ```text
/// cast_expr("x", F32, U8) == "((unsigned char)rucuda_float_to_i32(x))"
/// ```
pub(crate) fn cast_expr(e: &str, from: DType, to: DType) -> String {
    use DType::*;
    if from == to {
        return e.to_string();
    }
    match (from, to) {
        (C64 | C128, Bool) => format!("((bool)((({e}).re != 0) | (({e}).im != 0)))"),
        (C64 | C128, C64 | C128) => format!("{}({e})", to.c_type()),
        (C64 | C128, _) => cast_expr(&format!("({e}).re"), from.real_type(), to),
        (_, C64 | C128) => {
            let real = if to == C64 { F32 } else { F64 };
            format!("{}({})", to.c_type(), cast_expr(e, from, real))
        }
        (F16 | BF16, Bool) => format!("((float)({e}) != 0.0f)"),
        (_, Bool) => format!("(({e}) != 0)"),
        (F16 | BF16, _) => cast_expr(&format!("((float)({e}))"), F32, to),
        (F64 | I32 | I64 | U32 | U64, F16) => format!("rucuda_half((double)({e}))"),
        (_, F16) => format!("rucuda_half((float)({e}))"),
        (F64 | I32 | I64 | U32 | U64, BF16) => {
            format!("rucuda_bfloat16(rucuda_f64_to_f32_odd((double)({e})))")
        }
        (_, BF16) => format!("rucuda_bfloat16((float)({e}))"),
        (F32 | F64, I8 | I16 | I32 | I64 | U8 | U16 | U32 | U64) => {
            let f = if from == F32 { "float" } else { "double" };
            match to {
                // The hardware conversions give the most negative integer for NaN (seen on
                // the H100 for __double2int_rz and __float2ll_rz): NaN → 0 as documented.
                I8 | I16 | I32 | U8 | U16 => format!("(({})rucuda_{f}_to_i32({e}))", to.c_type()),
                U32 | I64 => format!("(({})rucuda_{f}_to_i64({e}))", to.c_type()),
                _ => format!("rucuda_{f}_to_u64({e})"),
            }
        }
        _ => format!("(({})({e}))", to.c_type()),
    }
}
/// The C expression of `op(a, b)` where `a` is of type `a_t` and `b` of `b_t`, computed
/// in `compute` (from [`binary_types`]) and delivered as `out`.
pub(crate) fn binary_c(
    op: BinaryOp,
    a: &str,
    a_t: DType,
    b: &str,
    b_t: DType,
    compute: DType,
    out: DType,
) -> String {
    use BinaryOp::*;
    let f = match op {
        LogicalAnd | LogicalOr | LogicalXor => {
            let (x, y) = (
                cast_expr(a, a_t, DType::Bool),
                cast_expr(b, b_t, DType::Bool),
            );
            let e = match op {
                LogicalAnd => format!("((bool)({x} & {y}))"),
                LogicalOr => format!("((bool)({x} | {y}))"),
                _ => format!("((bool)({x} != {y}))"),
            };
            return cast_expr(&e, DType::Bool, out);
        }
        Add => "rucuda_add",
        Sub => "rucuda_sub",
        Mul => "rucuda_mul",
        Div => "rucuda_div",
        FloorDiv => "rucuda_floor_div",
        Remainder => "rucuda_remainder",
        Pow => "rucuda_pow",
        Maximum => "rucuda_maximum",
        Minimum => "rucuda_minimum",
        Equal => "rucuda_eq",
        NotEqual => "rucuda_ne",
        Less => "rucuda_lt",
        LessEqual => "rucuda_le",
        Greater => "rucuda_gt",
        GreaterEqual => "rucuda_ge",
        BitAnd => "rucuda_bitand",
        BitOr => "rucuda_bitor",
        BitXor => "rucuda_bitxor",
        Fmod => "rucuda_fmod",
    };
    let at = arith_type(compute);
    let x = cast_expr(&cast_expr(a, a_t, compute), compute, at);
    let y = cast_expr(&cast_expr(b, b_t, compute), compute, at);
    let r = format!("{f}({x}, {y})");
    if op.is_comparison() {
        cast_expr(&r, DType::Bool, out)
    } else {
        cast_expr(&cast_expr(&r, at, compute), compute, out)
    }
}

/// The C expression of `op(a)` where `a` is of type `a_t` (types from [`unary_types`]).
pub(crate) fn unary_c(op: UnaryOp, a: &str, a_t: DType, compute: DType, out: DType) -> String {
    if op == UnaryOp::LogicalNot {
        return cast_expr(
            &format!("(!{})", cast_expr(a, a_t, DType::Bool)),
            DType::Bool,
            out,
        );
    }
    let at = arith_type(compute);
    let x = cast_expr(&cast_expr(a, a_t, compute), compute, at);
    let (r, r_t) = match op {
        UnaryOp::Neg => (format!("rucuda_neg({x})"), at),
        UnaryOp::Abs => (format!("rucuda_abs({x})"), at.real_type()),
        UnaryOp::BitNot => (format!("rucuda_bitnot({x})"), at),
        UnaryOp::Conj => {
            if compute.is_complex() {
                (format!("conj({x})"), at)
            } else {
                (x, at)
            }
        }
        UnaryOp::Real => {
            if compute.is_complex() {
                (format!("({x}).re"), at.real_type())
            } else {
                (x, at)
            }
        }
        UnaryOp::Imag => {
            if compute.is_complex() {
                (format!("({x}).im"), at.real_type())
            } else {
                (format!("(({})0)", at.c_type()), at)
            }
        }
        UnaryOp::Math(f) => (format!("rucuda_m_{}({x})", f.c_name()), at),
        UnaryOp::LogicalNot => (x, at),
    };
    let stored = if r_t == at { compute } else { out };
    cast_expr(&cast_expr(&r, r_t, stored), stored, out)
}
/// The preamble of a built-in or fused kernel: the prelude blocks that the kernel's
/// internal types need but its argument types do not bring (the generator's header adds
/// those), then the helpers.
pub(crate) fn preamble(
    used: impl IntoIterator<Item = DType>,
    args: impl IntoIterator<Item = DType>,
) -> String {
    let used = PreludeBlocks::of(used);
    let args = PreludeBlocks::of(args);
    let mut s = used.without(&args).text();
    s.push_str(HELPERS);
    s.push_str(SCATTER_STORE);
    if used.complex || args.complex {
        s.push_str(COMPLEX_HELPERS);
    }
    s
}

/// Every helper the built-in and fused kernels use, after the full prelude (all of our
/// half, bfloat16 and complex types): what a program holding many generated kernels at
/// once needs before their `extern "C"` definitions.
pub fn kernel_helpers() -> String {
    let mut s = crate::codegen::full_prelude();
    s.push_str(HELPERS);
    s.push_str(SCATTER_STORE);
    s.push_str(COMPLEX_HELPERS);
    s
}

/// A C identifier fragment naming a type (`float32`), for kernel names.
pub(crate) fn type_tag(d: DType) -> &'static str {
    d.name()
}

/// Appends `_tag` for each type to a kernel name.
pub(crate) fn kernel_name(base: &str, types: &[DType]) -> String {
    let mut s = String::from(base);
    for d in types {
        let _ = write!(s, "_{}", type_tag(*d));
    }
    s
}
#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn casts_are_explicit_and_follow_the_rules() {
        assert_eq!(cast_expr("x", F32, F32), "x");
        assert_eq!(
            cast_expr("x", F32, U8),
            "((unsigned char)rucuda_float_to_i32(x))"
        );
        assert_eq!(cast_expr("x", F64, U64), "rucuda_double_to_u64(x)");
        assert_eq!(
            cast_expr("x", F32, U32),
            "((unsigned int)rucuda_float_to_i64(x))"
        );
        assert_eq!(cast_expr("x", C64, F32), "(x).re");
        assert_eq!(
            cast_expr("x", C128, Bool),
            "((bool)(((x).re != 0) | ((x).im != 0)))"
        );
        assert_eq!(cast_expr("x", F16, Bool), "((float)(x) != 0.0f)");
        assert_eq!(cast_expr("x", I32, F16), "rucuda_half((double)(x))");
        assert_eq!(cast_expr("x", U8, F16), "rucuda_half((float)(x))");
        assert_eq!(
            cast_expr("x", F64, BF16),
            "rucuda_bfloat16(rucuda_f64_to_f32_odd((double)(x)))"
        );
        assert_eq!(
            cast_expr("x", F16, I8),
            "((signed char)rucuda_float_to_i32(((float)(x))))"
        );
        assert_eq!(cast_expr("x", I8, C128), "rucuda_complex128(((double)(x)))");
        assert_eq!(cast_expr("x", C64, C128), "rucuda_complex128(x)");
        assert_eq!(cast_expr("x", Bool, I64), "((long long)(x))");
        // Every pair produces something.
        for a in DType::ALL {
            for b in DType::ALL {
                assert!(!cast_expr("v", a, b).is_empty());
            }
        }
    }

    #[test]
    fn half_arithmetic_happens_in_float_and_rounds_once() {
        let e = binary_c(BinaryOp::Add, "a[i]", F16, "b[i]", I8, F16, F16);
        assert_eq!(
            e,
            "rucuda_half((float)(rucuda_add(((float)(a[i])), ((float)(rucuda_half((float)(b[i])))))))"
        );
        let c = binary_c(BinaryOp::Less, "a", I32, "b", U32, I64, Bool);
        assert_eq!(c, "rucuda_lt(((long long)(a)), ((long long)(b)))");
        let n = unary_c(UnaryOp::Abs, "z", C64, C64, F32);
        assert_eq!(n, "rucuda_abs(z)");
        let l = unary_c(UnaryOp::LogicalNot, "x", F32, Bool, Bool);
        assert_eq!(l, "(!((x) != 0))");
    }

    #[test]
    fn preamble_adds_only_missing_prelude_blocks() {
        let p = preamble([F32, C64], [F32]);
        assert!(p.contains("struct rucuda_complex"));
        assert!(p.contains("rucuda_complex<R> rucuda_mul"));
        let p = preamble([C64], [C64]);
        assert!(!p.contains("struct rucuda_complex"));
        assert!(p.contains("rucuda_complex<R> rucuda_mul"));
        let p = preamble([F32], [F32]);
        assert!(!p.contains("rucuda_complex"));
    }
}
