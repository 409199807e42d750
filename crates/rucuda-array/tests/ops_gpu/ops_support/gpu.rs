//! The GPU side of the operation tests: uploads, poisoned outputs,
//! operands suited to each operation, tolerances, and the model applied to whole operand
//! lists. Fresh random data per run (seed printed); results start poisoned (fresh
//! allocations come from a pool just filled with 0xA5 bytes, `out` arrays are filled with
//! 0xA5 bytes); sizes that are not a multiple of the block.

use super::{binary, tol, val, Val};
use crate::common::{RandomElement, RandomVec, Rng};
use rucuda_array::ops::{self, BinaryOp};
use rucuda_array::{bf16, f16, ArrayError, Complex, DType, Element, GpuArray};
use rucuda_driver::Stream;

pub fn vals<T: Element>(a: &GpuArray<T>) -> Vec<Val> {
    a.to_vec().unwrap().into_iter().map(val).collect()
}

/// A value whose stored bytes are all 0xA5 (`true` for bool).
pub fn poison<T: Element>() -> T {
    let mut st: T::Storage = bytemuck::Zeroable::zeroed();
    bytemuck::bytes_of_mut(&mut st).fill(0xA5);
    T::from_storage(st)
}

pub fn poisoned<T: Element>(s: &Stream, shape: &[usize]) -> GpuArray<T> {
    GpuArray::full(s, shape, poison::<T>()).unwrap()
}

/// Fills 64 MiB of the stream-ordered pool with 0xA5 and gives it back, so that the
/// next allocations (results of operations) start out as garbage, not zeros.
pub fn poison_pool(s: &Stream) {
    let p = GpuArray::<u32>::full(s, &[1 << 24], 0xA5A5_A5A5).unwrap();
    drop(p);
}

pub fn up<T: Element>(s: &Stream, shape: &[usize], data: &[T]) -> GpuArray<T> {
    GpuArray::from_shape_slice(s, shape, data).unwrap()
}

pub fn is_zero<T: Element>(v: T) -> bool {
    match val(v) {
        Val::B(b) => !b,
        Val::I(i) => i == 0,
        Val::F(x) => x == 0.0,
        Val::C(re, im) => re == 0.0 && im == 0.0,
    }
}

pub fn nonzero<T: Element>(v: Vec<T>) -> Vec<T> {
    v.into_iter()
        .map(|x| if is_zero(x) { T::from_f64(1.0) } else { x })
        .collect()
}

/// Operands suited to `op`: small exponents and positive bases for `pow`, nonzero
/// divisors, random values otherwise.
pub fn operands<T: RandomElement>(rng: &mut Rng, op: BinaryOp, right: bool, n: usize) -> Vec<T> {
    let signed = T::DTYPE.kind() == rucuda_array::DTypeKind::SignedInt;
    match (op, right) {
        // Exponents: small integers (some negative for signed types), floats in [-3, 3].
        (BinaryOp::Pow, true) => (0..n)
            .map(|_| {
                if T::DTYPE.is_integer() {
                    let lo = if signed { -2 } else { 0 };
                    T::from_f64((rng.below(7) as i64 + lo) as f64)
                } else {
                    T::from_f64(rng.unit() * 3.0)
                }
            })
            .collect(),
        // Bases: small integers, positive floats (complex: any).
        (BinaryOp::Pow, false) => (0..n)
            .map(|_| {
                if T::DTYPE.is_integer() {
                    let lo = if signed { -3 } else { 0 };
                    T::from_f64((rng.below(9) as i64 + lo) as f64)
                } else if T::DTYPE.is_complex() {
                    T::random(rng)
                } else {
                    T::from_f64(rng.unit().abs() * 10.0 + 0.5)
                }
            })
            .collect(),
        (BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::Remainder | BinaryOp::Fmod, true) => {
            nonzero(rng.vec::<T>(n))
        }
        _ => rng.vec::<T>(n),
    }
}

/// Relative tolerance of an operation's result of type `out`.
pub fn op_tol(op: BinaryOp, out: DType) -> f64 {
    match op {
        BinaryOp::Pow => match out {
            DType::F16 => 2e-3,
            DType::BF16 => 1e-2,
            DType::F32 => 2e-6,
            DType::F64 => 1e-13,
            DType::C64 => 2e-5,
            DType::C128 => 1e-12,
            _ => 0.0,
        },
        BinaryOp::Div if out.is_complex() => 4.0 * tol(out),
        _ => tol(out),
    }
}

/// `a.binary_into(op, b, out)` with `out` of the natural result type `out_t` (poisoned
/// first); the result decoded.
pub fn natural_into<A: Element, O: ops::BinaryOperand<A> + Copy>(
    s: &Stream,
    op: BinaryOp,
    a: &GpuArray<A>,
    b: O,
    shape: &[usize],
    out_t: DType,
) -> Result<Vec<Val>, ArrayError> {
    macro_rules! go {
        ($($d:ident => $t:ty),*) => {
            match out_t {
                $(DType::$d => {
                    let mut o = poisoned::<$t>(s, shape);
                    a.binary_into(op, b, &mut o)?;
                    Ok(vals(&o))
                })*
                DType::Record(_) => unreachable!("the operations tests use number types"),
            }
        };
    }
    go!(Bool => bool, I8 => i8, I16 => i16, I32 => i32, I64 => i64, U8 => u8, U16 => u16,
        U32 => u32, U64 => u64, F16 => f16, BF16 => bf16, F32 => f32, F64 => f64,
        C64 => Complex<f32>, C128 => Complex<f64>)
}

pub fn model_binary(
    op: BinaryOp,
    a: &[Val],
    at: DType,
    aw: bool,
    b: &[Val],
    bt: DType,
    bw: bool,
) -> Vec<Val> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| binary(op, x, at, aw, y, bt, bw).expect("allowed").0)
        .collect()
}

pub const ALL_OPS: [BinaryOp; 22] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::FloorDiv,
    BinaryOp::Remainder,
    BinaryOp::Pow,
    BinaryOp::Maximum,
    BinaryOp::Minimum,
    BinaryOp::Equal,
    BinaryOp::NotEqual,
    BinaryOp::Less,
    BinaryOp::LessEqual,
    BinaryOp::Greater,
    BinaryOp::GreaterEqual,
    BinaryOp::LogicalAnd,
    BinaryOp::LogicalOr,
    BinaryOp::LogicalXor,
    BinaryOp::BitAnd,
    BinaryOp::BitOr,
    BinaryOp::BitXor,
    BinaryOp::Fmod,
];
