//! The CUDA C++ that every built-in operation and every fused expression is made of:
//! a helper preamble with NumPy's semantics, explicit casts between every pair of
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

use crate::codegen::prelude_for;
use crate::dtype::DType;
use crate::error::{ArrayError, Result};

/// Binary operations of the built-in kernels and the fusion API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b` (logical or on `bool`).
    Add,
    /// `a - b` (refused on `bool`, as in NumPy).
    Sub,
    /// `a * b` (logical and on `bool`).
    Mul,
    /// True division: integers and `bool` give `f64` (NumPy's `/`).
    Div,
    /// NumPy's `//`: floor division.
    FloorDiv,
    /// NumPy's `%`: the remainder with the sign of the divisor.
    Remainder,
    /// `a ** b`.
    Pow,
    /// Elementwise maximum, NaN propagating.
    Maximum,
    /// Elementwise minimum, NaN propagating.
    Minimum,
    /// `a == b`, to `bool`.
    Equal,
    /// `a != b`, to `bool`.
    NotEqual,
    /// `a < b`, to `bool`.
    Less,
    /// `a <= b`, to `bool`.
    LessEqual,
    /// `a > b`, to `bool`.
    Greater,
    /// `a >= b`, to `bool`.
    GreaterEqual,
    /// Both nonzero, to `bool`.
    LogicalAnd,
    /// Either nonzero, to `bool`.
    LogicalOr,
    /// Exactly one nonzero, to `bool`.
    LogicalXor,
    /// Bitwise and (integers and `bool`).
    BitAnd,
    /// Bitwise or (integers and `bool`).
    BitOr,
    /// Bitwise exclusive or (integers and `bool`).
    BitXor,
    /// C's `fmod` (remainder with the sign of the dividend; real floats).
    Fmod,
}

impl BinaryOp {
    /// The operation's name, as NumPy spells the ufunc.
    pub fn name(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "add",
            Sub => "subtract",
            Mul => "multiply",
            Div => "true_divide",
            FloorDiv => "floor_divide",
            Remainder => "remainder",
            Pow => "power",
            Maximum => "maximum",
            Minimum => "minimum",
            Equal => "equal",
            NotEqual => "not_equal",
            Less => "less",
            LessEqual => "less_equal",
            Greater => "greater",
            GreaterEqual => "greater_equal",
            LogicalAnd => "logical_and",
            LogicalOr => "logical_or",
            LogicalXor => "logical_xor",
            BitAnd => "bitwise_and",
            BitOr => "bitwise_or",
            BitXor => "bitwise_xor",
            Fmod => "fmod",
        }
    }

    fn is_comparison(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual
        )
    }
}

/// One-operand operations: arithmetic ones and the cumath functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-a` (wraps for integers; refused on `bool`).
    Neg,
    /// `|a|` (complex gives its real type).
    Abs,
    /// `a == 0`, to `bool`.
    LogicalNot,
    /// Bitwise not (`!` on `bool`).
    BitNot,
    /// Complex conjugate (identity on real types).
    Conj,
    /// The real part (identity on real types).
    Real,
    /// The imaginary part (zero on real types).
    Imag,
    /// A cumath function.
    Math(MathFn),
}

/// The one-argument functions of cumath.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MathFn {
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Tangent.
    Tan,
    /// Arc sine.
    Asin,
    /// Arc cosine.
    Acos,
    /// Arc tangent.
    Atan,
    /// Hyperbolic sine.
    Sinh,
    /// Hyperbolic cosine.
    Cosh,
    /// Hyperbolic tangent.
    Tanh,
    /// `e^x`.
    Exp,
    /// Natural logarithm.
    Log,
    /// Base-10 logarithm.
    Log10,
    /// Square root.
    Sqrt,
    /// Absolute value of a real float.
    Fabs,
    /// Round up.
    Ceil,
    /// Round down.
    Floor,
}

impl MathFn {
    /// Every function, in declaration order.
    pub const ALL: [MathFn; 16] = [
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Asin,
        MathFn::Acos,
        MathFn::Atan,
        MathFn::Sinh,
        MathFn::Cosh,
        MathFn::Tanh,
        MathFn::Exp,
        MathFn::Log,
        MathFn::Log10,
        MathFn::Sqrt,
        MathFn::Fabs,
        MathFn::Ceil,
        MathFn::Floor,
    ];

    /// The C name of the double-precision function (`sin`, `log10`, ...).
    pub fn c_name(self) -> &'static str {
        use MathFn::*;
        match self {
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Exp => "exp",
            Log => "log",
            Log10 => "log10",
            Sqrt => "sqrt",
            Fabs => "fabs",
            Ceil => "ceil",
            Floor => "floor",
        }
    }

    /// True when the function is defined here for complex arguments too.
    pub fn supports_complex(self) -> bool {
        use MathFn::*;
        matches!(
            self,
            Sin | Cos | Tan | Sinh | Cosh | Tanh | Exp | Log | Log10 | Sqrt
        )
    }
}

/// The type arithmetic happens in for values of `d`: `float` for the 16-bit floats,
/// else `d` itself.
pub(crate) fn arith_type(d: DType) -> DType {
    match d {
        DType::F16 | DType::BF16 => DType::F32,
        other => other,
    }
}

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

/// Helpers for integer and real arithmetic, needed by every built-in kernel.
const BASE: &str = r#"// rucuda-array's operation helpers: NumPy semantics, no FMA contraction.
template <int S> struct rucuda_uint_of { typedef unsigned int type; };
template <> struct rucuda_uint_of<8> { typedef unsigned long long type; };
template <typename T> struct rucuda_is_signed { static const bool value = (T)-1 < (T)0; };
template <typename T, bool S = rucuda_is_signed<T>::value> struct rucuda_int {
  typedef typename rucuda_uint_of<sizeof(T)>::type U;
  static __device__ __forceinline__ T abs(T a) { return a; }
  static __device__ __forceinline__ T floor_div(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); }
  static __device__ __forceinline__ T rem(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }
  static __device__ __forceinline__ T pow(T a, T b) {
    U r = 1, x = (U)a, e = (U)b;
    while (e) { if (e & 1u) r *= x; x *= x; e >>= 1; }
    return (T)r;
  }
};
template <typename T> struct rucuda_int<T, true> {
  typedef typename rucuda_uint_of<sizeof(T)>::type U;
  static __device__ __forceinline__ T abs(T a) { return a < (T)0 ? (T)(U)((U)0 - (U)a) : a; }
  static __device__ __forceinline__ T floor_div(T a, T b) {
    if (b == 0) return (T)0;
    if (b == (T)-1) return (T)(U)((U)0 - (U)a);
    T q = (T)(a / b);
    if ((T)(a % b) != 0 && ((a < 0) != (b < 0))) q = (T)(q - 1);
    return q;
  }
  static __device__ __forceinline__ T rem(T a, T b) {
    if (b == 0 || b == (T)-1) return (T)0;
    T r = (T)(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);
    return r;
  }
  static __device__ __forceinline__ T pow(T a, T b) {
    if (b < 0) { if (a == 1) return (T)1; if (a == (T)-1) return (b & 1) ? (T)-1 : (T)1; return (T)0; }
    U r = 1, x = (U)a, e = (U)b;
    while (e) { if (e & 1u) r *= x; x *= x; e >>= 1; }
    return (T)r;
  }
};
template <typename T> __device__ __forceinline__ T rucuda_add(T a, T b) { typedef typename rucuda_uint_of<sizeof(T)>::type U; return (T)(U)((U)a + (U)b); }
template <typename T> __device__ __forceinline__ T rucuda_sub(T a, T b) { typedef typename rucuda_uint_of<sizeof(T)>::type U; return (T)(U)((U)a - (U)b); }
template <typename T> __device__ __forceinline__ T rucuda_mul(T a, T b) { typedef typename rucuda_uint_of<sizeof(T)>::type U; return (T)(U)((U)a * (U)b); }
template <typename T> __device__ __forceinline__ T rucuda_neg(T a) { typedef typename rucuda_uint_of<sizeof(T)>::type U; return (T)(U)((U)0 - (U)a); }
template <typename T> __device__ __forceinline__ T rucuda_abs(T a) { return rucuda_int<T>::abs(a); }
template <typename T> __device__ __forceinline__ T rucuda_floor_div(T a, T b) { return rucuda_int<T>::floor_div(a, b); }
template <typename T> __device__ __forceinline__ T rucuda_remainder(T a, T b) { return rucuda_int<T>::rem(a, b); }
template <typename T> __device__ __forceinline__ T rucuda_pow(T a, T b) { return rucuda_int<T>::pow(a, b); }
template <typename T> __device__ __forceinline__ T rucuda_bitand(T a, T b) { return (T)(a & b); }
template <typename T> __device__ __forceinline__ T rucuda_bitor(T a, T b) { return (T)(a | b); }
template <typename T> __device__ __forceinline__ T rucuda_bitxor(T a, T b) { return (T)(a ^ b); }
template <typename T> __device__ __forceinline__ T rucuda_bitnot(T a) { return (T)~a; }
__device__ __forceinline__ bool rucuda_bitnot(bool a) { return !a; }
template <typename T> __device__ __forceinline__ T rucuda_select(bool c, T a, T b) { return c ? a : b; }
template <typename T> __device__ __forceinline__ T rucuda_maximum(T a, T b) { return a >= b ? a : b; }
template <typename T> __device__ __forceinline__ T rucuda_minimum(T a, T b) { return a <= b ? a : b; }
template <typename T> __device__ __forceinline__ bool rucuda_eq(T a, T b) { return a == b; }
template <typename T> __device__ __forceinline__ bool rucuda_ne(T a, T b) { return a != b; }
template <typename T> __device__ __forceinline__ bool rucuda_lt(T a, T b) { return a < b; }
template <typename T> __device__ __forceinline__ bool rucuda_le(T a, T b) { return a <= b; }
template <typename T> __device__ __forceinline__ bool rucuda_gt(T a, T b) { return a > b; }
template <typename T> __device__ __forceinline__ bool rucuda_ge(T a, T b) { return a >= b; }
__device__ __forceinline__ float rucuda_add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double rucuda_add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float rucuda_sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double rucuda_sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float rucuda_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double rucuda_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float rucuda_div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double rucuda_div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float rucuda_neg(float a) { return -a; }
__device__ __forceinline__ double rucuda_neg(double a) { return -a; }
__device__ __forceinline__ float rucuda_abs(float a) { return fabsf(a); }
__device__ __forceinline__ double rucuda_abs(double a) { return fabs(a); }
__device__ __forceinline__ float rucuda_maximum(float a, float b) { return (a >= b || a != a) ? a : b; }
__device__ __forceinline__ double rucuda_maximum(double a, double b) { return (a >= b || a != a) ? a : b; }
__device__ __forceinline__ float rucuda_minimum(float a, float b) { return (a <= b || a != a) ? a : b; }
__device__ __forceinline__ double rucuda_minimum(double a, double b) { return (a <= b || a != a) ? a : b; }
__device__ __forceinline__ float rucuda_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double rucuda_pow(double a, double b) { return pow(a, b); }
__device__ __forceinline__ float rucuda_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double rucuda_fmod(double a, double b) { return fmod(a, b); }
__device__ __forceinline__ float rucuda_floor_(float a) { return floorf(a); }
__device__ __forceinline__ double rucuda_floor_(double a) { return floor(a); }
__device__ __forceinline__ float rucuda_copysign(float a, float b) { return copysignf(a, b); }
__device__ __forceinline__ double rucuda_copysign(double a, double b) { return copysign(a, b); }
template <typename F> __device__ __forceinline__ F rucuda_fdivmod(F a, F b, F *m) {
  F mod = rucuda_fmod(a, b);
  if (b == (F)0) { *m = mod; return rucuda_div(a, b); }
  F div = rucuda_div(rucuda_sub(a, mod), b);
  if (mod != (F)0) {
    if ((b < (F)0) != (mod < (F)0)) { mod = rucuda_add(mod, b); div = rucuda_sub(div, (F)1); }
  } else {
    mod = rucuda_copysign((F)0, b);
  }
  F fd;
  if (div != (F)0) {
    fd = rucuda_floor_(div);
    if (rucuda_sub(div, fd) > (F)0.5) fd = rucuda_add(fd, (F)1);
  } else {
    fd = rucuda_copysign((F)0, rucuda_div(a, b));
  }
  *m = mod;
  return fd;
}
__device__ __forceinline__ float rucuda_floor_div(float a, float b) { float m; return rucuda_fdivmod(a, b, &m); }
__device__ __forceinline__ double rucuda_floor_div(double a, double b) { double m; return rucuda_fdivmod(a, b, &m); }
__device__ __forceinline__ float rucuda_remainder(float a, float b) { float m; rucuda_fdivmod(a, b, &m); return m; }
__device__ __forceinline__ double rucuda_remainder(double a, double b) { double m; rucuda_fdivmod(a, b, &m); return m; }
__device__ __forceinline__ float rucuda_f64_to_f32_odd(double d) {
  float f = __double2float_rz(d);
  if ((double)f != d && f == f) f = __uint_as_float(__float_as_uint(f) | 1u);
  return f;
}
__device__ __forceinline__ unsigned long long rucuda_float_to_u64(float x) { return x != x ? 0ull : x < 0.0f ? (unsigned long long)__float2ll_rz(x) : __float2ull_rz(x); }
__device__ __forceinline__ unsigned long long rucuda_double_to_u64(double x) { return x != x ? 0ull : x < 0.0 ? (unsigned long long)__double2ll_rz(x) : __double2ull_rz(x); }
__device__ __forceinline__ long long rucuda_float_to_i64(float x) { return x != x ? 0ll : __float2ll_rz(x); }
__device__ __forceinline__ int rucuda_float_to_i32(float x) { return x != x ? 0 : __float2int_rz(x); }
__device__ __forceinline__ int rucuda_double_to_i32(double x) { return x != x ? 0 : __double2int_rz(x); }
__device__ __forceinline__ long long rucuda_double_to_i64(double x) { return x != x ? 0ll : __double2ll_rz(x); }
__device__ __forceinline__ float rucuda_m_sin(float x) { return sinf(x); }
__device__ __forceinline__ double rucuda_m_sin(double x) { return sin(x); }
__device__ __forceinline__ float rucuda_m_cos(float x) { return cosf(x); }
__device__ __forceinline__ double rucuda_m_cos(double x) { return cos(x); }
__device__ __forceinline__ float rucuda_m_tan(float x) { return tanf(x); }
__device__ __forceinline__ double rucuda_m_tan(double x) { return tan(x); }
__device__ __forceinline__ float rucuda_m_asin(float x) { return asinf(x); }
__device__ __forceinline__ double rucuda_m_asin(double x) { return asin(x); }
__device__ __forceinline__ float rucuda_m_acos(float x) { return acosf(x); }
__device__ __forceinline__ double rucuda_m_acos(double x) { return acos(x); }
__device__ __forceinline__ float rucuda_m_atan(float x) { return atanf(x); }
__device__ __forceinline__ double rucuda_m_atan(double x) { return atan(x); }
__device__ __forceinline__ float rucuda_m_sinh(float x) { return sinhf(x); }
__device__ __forceinline__ double rucuda_m_sinh(double x) { return sinh(x); }
__device__ __forceinline__ float rucuda_m_cosh(float x) { return coshf(x); }
__device__ __forceinline__ double rucuda_m_cosh(double x) { return cosh(x); }
__device__ __forceinline__ float rucuda_m_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double rucuda_m_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float rucuda_m_exp(float x) { return expf(x); }
__device__ __forceinline__ double rucuda_m_exp(double x) { return exp(x); }
__device__ __forceinline__ float rucuda_m_log(float x) { return logf(x); }
__device__ __forceinline__ double rucuda_m_log(double x) { return log(x); }
__device__ __forceinline__ float rucuda_m_log10(float x) { return log10f(x); }
__device__ __forceinline__ double rucuda_m_log10(double x) { return log10(x); }
__device__ __forceinline__ float rucuda_m_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double rucuda_m_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float rucuda_m_fabs(float x) { return fabsf(x); }
__device__ __forceinline__ double rucuda_m_fabs(double x) { return fabs(x); }
__device__ __forceinline__ float rucuda_m_ceil(float x) { return ceilf(x); }
__device__ __forceinline__ double rucuda_m_ceil(double x) { return ceil(x); }
__device__ __forceinline__ float rucuda_m_floor(float x) { return floorf(x); }
__device__ __forceinline__ double rucuda_m_floor(double x) { return floor(x); }
__device__ __forceinline__ float rucuda_m_ldexp(float x, int e) { return ldexpf(x, e); }
__device__ __forceinline__ double rucuda_m_ldexp(double x, int e) { return ldexp(x, e); }
__device__ __forceinline__ float rucuda_m_frexp(float x, int *e) { return frexpf(x, e); }
__device__ __forceinline__ double rucuda_m_frexp(double x, int *e) { return frexp(x, e); }
__device__ __forceinline__ float rucuda_m_modf(float x, float *ip) { return modff(x, ip); }
__device__ __forceinline__ double rucuda_m_modf(double x, double *ip) { return modf(x, ip); }
__device__ __forceinline__ float rucuda_m_atan2(float y, float x) { return atan2f(y, x); }
__device__ __forceinline__ double rucuda_m_atan2(double y, double x) { return atan2(y, x); }
__device__ __forceinline__ float rucuda_m_hypot(float x, float y) { return hypotf(x, y); }
__device__ __forceinline__ double rucuda_m_hypot(double x, double y) { return hypot(x, y); }
__device__ __forceinline__ float rucuda_qnan(float) { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double rucuda_qnan(double) { return __longlong_as_double(0x7ff8000000000000LL); }
"#;

/// Helpers for complex arithmetic, comparisons and functions (needs the complex prelude).
const COMPLEX: &str = r#"template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_add(rucuda_complex<R> a, rucuda_complex<R> b) { return rucuda_complex<R>(rucuda_add(a.re, b.re), rucuda_add(a.im, b.im)); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_sub(rucuda_complex<R> a, rucuda_complex<R> b) { return rucuda_complex<R>(rucuda_sub(a.re, b.re), rucuda_sub(a.im, b.im)); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_mul(rucuda_complex<R> a, rucuda_complex<R> b) {
  return rucuda_complex<R>(rucuda_sub(rucuda_mul(a.re, b.re), rucuda_mul(a.im, b.im)), rucuda_add(rucuda_mul(a.re, b.im), rucuda_mul(a.im, b.re)));
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_div(rucuda_complex<R> a, rucuda_complex<R> b) {
  const R br = rucuda_abs(b.re), bi = rucuda_abs(b.im);
  if (br >= bi) {
    if (br == (R)0 && bi == (R)0) return rucuda_complex<R>(rucuda_div(a.re, br), rucuda_div(a.im, bi));
    const R rat = rucuda_div(b.im, b.re);
    const R scl = rucuda_div((R)1, rucuda_add(b.re, rucuda_mul(b.im, rat)));
    return rucuda_complex<R>(rucuda_mul(rucuda_add(a.re, rucuda_mul(a.im, rat)), scl), rucuda_mul(rucuda_sub(a.im, rucuda_mul(a.re, rat)), scl));
  }
  const R rat = rucuda_div(b.re, b.im);
  const R scl = rucuda_div((R)1, rucuda_add(b.im, rucuda_mul(b.re, rat)));
  return rucuda_complex<R>(rucuda_mul(rucuda_add(rucuda_mul(a.re, rat), a.im), scl), rucuda_mul(rucuda_sub(rucuda_mul(a.im, rat), a.re), scl));
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_neg(rucuda_complex<R> a) { return rucuda_complex<R>(-a.re, -a.im); }
template <typename R> __device__ __forceinline__ R rucuda_abs(rucuda_complex<R> a) { return rucuda_m_hypot(a.re, a.im); }
template <typename R> __device__ __forceinline__ bool rucuda_eq(rucuda_complex<R> a, rucuda_complex<R> b) { return a.re == b.re && a.im == b.im; }
template <typename R> __device__ __forceinline__ bool rucuda_ne(rucuda_complex<R> a, rucuda_complex<R> b) { return !(a.re == b.re && a.im == b.im); }
template <typename R> __device__ __forceinline__ bool rucuda_lt(rucuda_complex<R> a, rucuda_complex<R> b) { return (a.re < b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im < b.im); }
template <typename R> __device__ __forceinline__ bool rucuda_le(rucuda_complex<R> a, rucuda_complex<R> b) { return (a.re < b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im <= b.im); }
template <typename R> __device__ __forceinline__ bool rucuda_gt(rucuda_complex<R> a, rucuda_complex<R> b) { return (a.re > b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im > b.im); }
template <typename R> __device__ __forceinline__ bool rucuda_ge(rucuda_complex<R> a, rucuda_complex<R> b) { return (a.re > b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im >= b.im); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_maximum(rucuda_complex<R> a, rucuda_complex<R> b) { return (rucuda_ge(a, b) || a.re != a.re || a.im != a.im) ? a : b; }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_minimum(rucuda_complex<R> a, rucuda_complex<R> b) { return (rucuda_le(a, b) || a.re != a.re || a.im != a.im) ? a : b; }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_exp(rucuda_complex<R> z) {
  const R e = rucuda_m_exp(z.re);
  if (z.im == (R)0) return rucuda_complex<R>(e, z.im);
  return rucuda_complex<R>(rucuda_mul(e, rucuda_m_cos(z.im)), rucuda_mul(e, rucuda_m_sin(z.im)));
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_log(rucuda_complex<R> z) { return rucuda_complex<R>(rucuda_m_log(rucuda_m_hypot(z.re, z.im)), rucuda_m_atan2(z.im, z.re)); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_log10(rucuda_complex<R> z) {
  const rucuda_complex<R> l = rucuda_m_log(z);
  const R k = (R)0.43429448190325182765112891891660508;
  return rucuda_complex<R>(rucuda_mul(l.re, k), rucuda_mul(l.im, k));
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_sqrt(rucuda_complex<R> z) {
  if (z.re == (R)0 && z.im == (R)0) return rucuda_complex<R>((R)0, z.im);
  const R t = rucuda_m_sqrt(rucuda_mul(rucuda_add(rucuda_abs(z.re), rucuda_m_hypot(z.re, z.im)), (R)0.5));
  if (z.re >= (R)0) return rucuda_complex<R>(t, rucuda_div(z.im, rucuda_mul((R)2, t)));
  return rucuda_complex<R>(rucuda_div(rucuda_abs(z.im), rucuda_mul((R)2, t)), rucuda_copysign(t, z.im));
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_sin(rucuda_complex<R> z) { return rucuda_complex<R>(rucuda_mul(rucuda_m_sin(z.re), rucuda_m_cosh(z.im)), rucuda_mul(rucuda_m_cos(z.re), rucuda_m_sinh(z.im))); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_cos(rucuda_complex<R> z) { return rucuda_complex<R>(rucuda_mul(rucuda_m_cos(z.re), rucuda_m_cosh(z.im)), -rucuda_mul(rucuda_m_sin(z.re), rucuda_m_sinh(z.im))); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_sinh(rucuda_complex<R> z) { return rucuda_complex<R>(rucuda_mul(rucuda_m_sinh(z.re), rucuda_m_cos(z.im)), rucuda_mul(rucuda_m_cosh(z.re), rucuda_m_sin(z.im))); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_cosh(rucuda_complex<R> z) { return rucuda_complex<R>(rucuda_mul(rucuda_m_cosh(z.re), rucuda_m_cos(z.im)), rucuda_mul(rucuda_m_sinh(z.re), rucuda_m_sin(z.im))); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_tanh(rucuda_complex<R> z) {
  // Kahan's formula: no cancellation near the poles at i*pi/2.
  if (rucuda_abs(z.re) > (R)20) {
    const R e = rucuda_m_exp(rucuda_mul((R)-2, rucuda_abs(z.re)));
    return rucuda_complex<R>(rucuda_copysign((R)1, z.re), rucuda_mul(rucuda_mul((R)4, e), rucuda_mul(rucuda_m_sin(z.im), rucuda_m_cos(z.im))));
  }
  const R t = rucuda_m_tan(z.im);
  const R beta = rucuda_add((R)1, rucuda_mul(t, t));
  const R sh = rucuda_m_sinh(z.re);
  const R rho = rucuda_m_sqrt(rucuda_add((R)1, rucuda_mul(sh, sh)));
  const R den = rucuda_add((R)1, rucuda_mul(beta, rucuda_mul(sh, sh)));
  return rucuda_complex<R>(rucuda_div(rucuda_mul(rucuda_mul(beta, rho), sh), den), rucuda_div(t, den));
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_tan(rucuda_complex<R> z) {
  const rucuda_complex<R> t = rucuda_m_tanh(rucuda_complex<R>(-z.im, z.re));
  return rucuda_complex<R>(t.im, -t.re);
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_pow(rucuda_complex<R> a, rucuda_complex<R> b) {
  typedef rucuda_complex<R> C;
  if (b.re == (R)0 && b.im == (R)0) return C((R)1, (R)0);
  if (a.re == (R)0 && a.im == (R)0) {
    if (b.re > (R)0 && b.im == (R)0) return C((R)0, (R)0);
    return C(rucuda_qnan((R)0), rucuda_qnan((R)0));
  }
  if (b.im == (R)0 && b.re == rucuda_floor_(b.re) && rucuda_abs(b.re) <= (R)100) {
    int n = (int)b.re;
    unsigned int e = n < 0 ? (unsigned int)(-n) : (unsigned int)n;
    C r((R)1, (R)0), x = a;
    while (e) { if (e & 1u) r = rucuda_mul(r, x); x = rucuda_mul(x, x); e >>= 1; }
    return n < 0 ? rucuda_div(C((R)1, (R)0), r) : r;
  }
  const C t = rucuda_mul(b, rucuda_m_log(a));
  const R e = rucuda_m_exp(t.re);
  return C(rucuda_mul(e, rucuda_m_cos(t.im)), rucuda_mul(e, rucuda_m_sin(t.im)));
}
"#;

/// Which prelude blocks a set of types needs: (half, bfloat16, complex).
fn needs(types: impl IntoIterator<Item = DType>) -> (bool, bool, bool) {
    let (mut h, mut b, mut c) = (false, false, false);
    for d in types {
        match d {
            DType::F16 => h = true,
            DType::BF16 => b = true,
            DType::C64 | DType::C128 => c = true,
            _ => {}
        }
    }
    (h, b, c)
}

/// The preamble of a built-in or fused kernel: the prelude blocks that the kernel's
/// internal types need but its argument types do not bring (the generator's header adds
/// those), then the helpers.
pub(crate) fn preamble(
    used: impl IntoIterator<Item = DType>,
    args: impl IntoIterator<Item = DType>,
) -> String {
    let (uh, ub, uc) = needs(used);
    let (ah, ab, ac) = needs(args);
    let mut missing = Vec::new();
    if uh && !ah {
        missing.push(DType::F16);
    }
    if ub && !ab {
        missing.push(DType::BF16);
    }
    if uc && !ac {
        missing.push(DType::C64);
    }
    let mut s = prelude_for(missing);
    s.push_str(BASE);
    if uc || ac {
        s.push_str(COMPLEX);
    }
    s
}

/// Every helper the built-in and fused kernels use, after the full prelude (all of our
/// half, bfloat16 and complex types): what a program holding many generated kernels at
/// once needs before their `extern "C"` definitions.
pub fn kernel_helpers() -> String {
    let mut s = crate::codegen::full_prelude();
    s.push_str(BASE);
    s.push_str(COMPLEX);
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
