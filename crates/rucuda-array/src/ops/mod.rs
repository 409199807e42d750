//! NumPy-style operations on [`GpuArray`](crate::GpuArray)s, each a built-in kernel
//! memoized per (context, kernel signature).
//!
//! **What there is.** Arithmetic (`+ - * / % & | ^`, unary `-` and `!` as std operators
//! returning `Result`; `try_add`..., `floor_div`, `remainder`, `pow`, `rpow`, `maximum`,
//! `minimum`, `abs`; in-place `try_add_assign`... and [`BinaryOp`]-generic
//! `binary_into`/`binary_assign`), comparisons and logical operations to `bool` arrays,
//! [`where_`]/[`if_positive`], `take`/`put` with [`multi_take`]/[`multi_put`],
//! [`concatenate`]/[`stack`], `real`/`imag` (views) and `conj`. Conversions live on
//! `GpuArray`: `astype`, `fill`, `copy_from`, `reversed`, `reinterpret`; math in
//! [`crate::math`]; whole expressions in [`crate::fusion`].
//!
//! **Types.** Two arrays promote by NumPy's table ([`crate::DType::promote`], statically
//! through [`Promote`]); a Rust scalar is weak (NEP 50, [`PromoteWeak`]): `f16 array *
//! 2.0` stays `f16`. Operands are converted to the result type with explicit casts in the
//! generated code; `f16`/`bf16` arithmetic runs in `f32` and rounds once per operation.
//! `/` is true division (integers give `f64`, [`TrueDivide`]). An `out` array or an
//! in-place operation stores the result by NumPy's `same_kind` rule (signed and unsigned
//! integers counting as one kind); [`crate::ArrayError::Casting`] otherwise.
//!
//! **Semantics** (NumPy's, as far as a kernel can): integers wrap; integer `//` and `%` by
//! zero give 0 (NumPy: 0 with a warning), `MIN // -1` wraps; an integer to a negative
//! integer power gives 0 except for bases ±1 (NumPy raises); `maximum`/`minimum`
//! propagate NaN; comparisons with NaN are false except `!=`; complex numbers order
//! lexicographically; float-to-integer casts truncate toward zero (to 8-, 16- and 32-bit
//! unsigned types through a wider signed integer, wrapping as NumPy does on x86-64;
//! NaN gives 0 and values beyond 64 bits saturate, where NumPy's result is
//! platform-defined); casts to `bool` test `!= 0`; complex to real keeps the real part.
//! Floating-point `+ - * /` are never contracted into fused multiply-adds, so results
//! equal NumPy's and fused expressions equal unfused ones bit for bit.
//!
//! **Broadcasting and layouts.** Operands broadcast by NumPy's rules (an error names
//! both shapes when they do not); any view works (negative strides, broadcast axes).
//! Contiguous 16-byte-aligned operands take a vectorized kernel (16-byte loads and
//! stores), other contiguous ones a grid-stride loop, the rest a strided kernel with the
//! merged shape and strides as arguments. Indices are 64-bit. An operation runs on its
//! first array operand's home stream (the result's home stream); operands from other
//! streams are ordered with events, in both directions.
//!
//! **Kernel memo.** Every built-in kernel is identified by an [`OpKey`]: a small `Copy`
//! value (operation, operand types, scalar flags, stored type; never a scalar's value).
//! A process-wide map from (context id, key) holds the loaded variants; a repeated
//! operation costs a hash of that key, a read-locked lookup, and a launch with its
//! parameters packed on the stack, plus the stream-ordered allocation of its result. The
//! memo keeps the modules (and so their contexts) alive; [`clear_kernel_memo`] drops
//! them. [`OpKey::precompile`] compiles ahead of use.

pub(crate) mod device_code;
pub(crate) mod engine;
pub(crate) mod key;
pub(crate) mod key_hasher;
pub(crate) mod operations;
pub(crate) mod params;
pub(crate) mod typing;

pub use device_code::kernel_helpers;
pub use engine::{clear_kernel_memo, memoized_kernel_count};
pub use key::{IndexMode, MathSpecial, OpKey};
pub use operations::{BinaryOp, MathFn, UnaryOp};
pub(crate) mod promote;
pub use promote::{Promote, PromoteWeak, RealPart, TrueDivide};
pub(crate) mod apply;
pub(crate) mod operand;
pub use operand::BinaryOperand;
pub(crate) mod arith;
pub(crate) mod compare;
pub(crate) mod select;
pub use select::{if_positive, where_, where_scalars};
pub(crate) mod index;
pub use index::{multi_put, multi_take};
pub(crate) mod complex;
pub(crate) mod join;
pub use join::{concatenate, stack};
pub(crate) mod indexing_key;
pub use indexing_key::{IndexingKey, TakeMode};
pub(crate) mod mask;
pub use mask::{count_nonzero, nonzero, where_nonzero};
pub(crate) mod mul_add;
pub(crate) mod take_along;
pub(crate) mod take_axis;
pub use mul_add::{multi_take_put, multi_take_put_into};
