//! GPU tests of the array operations against a CPU model of their semantics
//! (`ops_support`: exact integers, f64 floats, arithmetic in the kernels' precision).
//! Fresh random data per run (seed printed), outputs poisoned (fresh allocations come
//! from a pool just filled with 0xA5 bytes; `out` arrays are filled with 0xA5 bytes),
//! sizes that are not a multiple of the block, non-contiguous and broadcast operands.

mod common;
mod ops_support;

use common::{stream, RandomElement, RandomVec, Rng};
use ops_support::{assert_vals, binary, broadcast_index, cast, tol, val, Val};
use rucuda_array::ops::{self, BinaryOp, IndexMode, Promote, PromoteWeak};
use rucuda_array::{bf16, f16, ArrayError, Complex, DType, Element, GpuArray, SliceArg};
use rucuda_driver::Stream;

// ---------------------------------------------------------------------------------
// Helpers

fn vals<T: Element>(a: &GpuArray<T>) -> Vec<Val> {
    a.to_vec().unwrap().into_iter().map(val).collect()
}

/// A value whose stored bytes are all 0xA5 (`true` for bool).
fn poison<T: Element>() -> T {
    let mut st: T::Storage = bytemuck::Zeroable::zeroed();
    bytemuck::bytes_of_mut(&mut st).fill(0xA5);
    T::from_storage(st)
}

fn poisoned<T: Element>(s: &Stream, shape: &[usize]) -> GpuArray<T> {
    GpuArray::full(s, shape, poison::<T>()).unwrap()
}

/// Fills 64 MiB of the stream-ordered pool with 0xA5 and gives it back, so that the
/// next allocations (results of operations) start out as garbage, not zeros.
fn poison_pool(s: &Stream) {
    let p = GpuArray::<u32>::full(s, &[1 << 24], 0xA5A5_A5A5).unwrap();
    drop(p);
}

fn up<T: Element>(s: &Stream, shape: &[usize], data: &[T]) -> GpuArray<T> {
    GpuArray::from_shape_slice(s, shape, data).unwrap()
}

fn is_zero<T: Element>(v: T) -> bool {
    match val(v) {
        Val::B(b) => !b,
        Val::I(i) => i == 0,
        Val::F(x) => x == 0.0,
        Val::C(re, im) => re == 0.0 && im == 0.0,
    }
}

fn nonzero<T: Element>(v: Vec<T>) -> Vec<T> {
    v.into_iter()
        .map(|x| if is_zero(x) { T::from_f64(1.0) } else { x })
        .collect()
}

/// Operands suited to `op`: small exponents and positive bases for `pow`, nonzero
/// divisors, random values otherwise.
fn operands<T: RandomElement>(rng: &mut Rng, op: BinaryOp, right: bool, n: usize) -> Vec<T> {
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
fn op_tol(op: BinaryOp, out: DType) -> f64 {
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
fn natural_into<A: Element, O: ops::BinaryOperand<A> + Copy>(
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
            }
        };
    }
    go!(Bool => bool, I8 => i8, I16 => i16, I32 => i32, I64 => i64, U8 => u8, U16 => u16,
        U32 => u32, U64 => u64, F16 => f16, BF16 => bf16, F32 => f32, F64 => f64,
        C64 => Complex<f32>, C128 => Complex<f64>)
}

fn model_binary(
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

const ALL_OPS: [BinaryOp; 22] = [
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

// ---------------------------------------------------------------------------------
// + over every pair of types

fn check_add<A, B>(s: &Stream, rng: &mut Rng)
where
    A: RandomElement + Promote<B>,
    B: RandomElement,
{
    let n = 1003;
    let (ah, bh) = (rng.vec::<A>(n), rng.vec::<B>(n));
    let (a, b) = (up(s, &[n], &ah), up(s, &[n], &bh));
    poison_pool(s);
    let c = (&a + &b).unwrap();
    assert_eq!(c.dtype(), A::DTYPE.promote(B::DTYPE));
    let av: Vec<Val> = ah.iter().map(|&x| val(x)).collect();
    let bv: Vec<Val> = bh.iter().map(|&x| val(x)).collect();
    let want = model_binary(BinaryOp::Add, &av, A::DTYPE, false, &bv, B::DTYPE, false);
    assert_vals(
        &format!("{} + {}", A::DTYPE, B::DTYPE),
        &vals(&c),
        &want,
        tol(c.dtype()),
    );
}

macro_rules! pairs_with {
    ($s:expr, $rng:expr, $a:ty; $($b:ty),*) => { $( check_add::<$a, $b>($s, $rng); )* };
}

macro_rules! all_pairs {
    ($s:expr, $rng:expr; $($a:ty),*) => {
        $( pairs_with!($s, $rng, $a; bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16,
                      f32, f64, Complex<f32>, Complex<f64>); )*
    };
}

#[test]
#[ignore = "needs a CUDA device"]
fn add_over_all_225_type_pairs_matches_the_model() {
    let mut rng = Rng::fresh();
    let s = stream();
    all_pairs!(&s, &mut rng; bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64,
               Complex<f32>, Complex<f64>);
}

// ---------------------------------------------------------------------------------
// Every operation on representative pairs, arrays and scalars

fn check_ops_on<A, B>(s: &Stream, rng: &mut Rng)
where
    A: RandomElement + Promote<B> + PromoteWeak<B>,
    B: RandomElement,
{
    let n = 517;
    for op in ALL_OPS {
        let ah: Vec<A> = operands(rng, op, false, n);
        let bh: Vec<B> = operands(rng, op, true, n);
        let (a, b) = (up(s, &[n], &ah), up(s, &[n], &bh));
        let av: Vec<Val> = ah.iter().map(|&x| val(x)).collect();
        let bv: Vec<Val> = bh.iter().map(|&x| val(x)).collect();
        let what = format!("{} {} {}", A::DTYPE, op.name(), B::DTYPE);
        // Array with array.
        match ops_support::binary_types(op, A::DTYPE, B::DTYPE, false, false) {
            None => assert!(
                natural_into(s, op, &a, &b, &[n], DType::F64).is_err(),
                "{what} should be refused"
            ),
            Some((_, out_t)) => {
                let got = natural_into(s, op, &a, &b, &[n], out_t).unwrap();
                let want = model_binary(op, &av, A::DTYPE, false, &bv, B::DTYPE, false);
                assert_vals(&what, &got, &want, op_tol(op, out_t));
            }
        }
        // Array with a scalar (weak).
        let sv = bh[n / 2];
        match ops_support::binary_types(op, A::DTYPE, B::DTYPE, false, true) {
            None => assert!(natural_into(s, op, &a, sv, &[n], DType::F64).is_err()),
            Some((_, out_t)) => {
                let got = natural_into(s, op, &a, sv, &[n], out_t).unwrap();
                let sb = vec![val(sv); n];
                let want = model_binary(op, &av, A::DTYPE, false, &sb, B::DTYPE, true);
                assert_vals(&format!("{what} (scalar)"), &got, &want, op_tol(op, out_t));
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_operation_on_representative_pairs_and_scalars_matches_the_model() {
    let mut rng = Rng::fresh();
    let s = stream();
    check_ops_on::<bool, bool>(&s, &mut rng);
    check_ops_on::<i8, u8>(&s, &mut rng);
    check_ops_on::<i16, i16>(&s, &mut rng);
    check_ops_on::<i32, u32>(&s, &mut rng);
    check_ops_on::<i64, i64>(&s, &mut rng);
    check_ops_on::<u64, u64>(&s, &mut rng);
    check_ops_on::<u16, f16>(&s, &mut rng);
    check_ops_on::<bf16, i8>(&s, &mut rng);
    check_ops_on::<f16, bf16>(&s, &mut rng);
    check_ops_on::<f32, i64>(&s, &mut rng);
    check_ops_on::<f32, f32>(&s, &mut rng);
    check_ops_on::<f64, f32>(&s, &mut rng);
    check_ops_on::<f64, f64>(&s, &mut rng);
    check_ops_on::<Complex<f32>, f32>(&s, &mut rng);
    check_ops_on::<Complex<f64>, Complex<f32>>(&s, &mut rng);
}

#[test]
#[ignore = "needs a CUDA device"]
fn named_methods_and_std_operators_give_the_natural_types() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 300;
    let xh = rng.vec::<f32>(n);
    let ih = nonzero(rng.vec::<i32>(n));
    let (x, i) = (up(&s, &[n], &xh), up(&s, &[n], &ih));
    let xv: Vec<Val> = xh.iter().map(|&v| val(v)).collect();
    let iv: Vec<Val> = ih.iter().map(|&v| val(v)).collect();
    let m = |op, a: &[Val], at, aw, b: &[Val], bt, bw| model_binary(op, a, at, aw, b, bt, bw);
    use BinaryOp::*;
    let f = DType::F32;
    let i32t = DType::I32;
    assert_vals(
        "x - i",
        &vals(&(&x - &i).unwrap()),
        &m(Sub, &xv, f, false, &iv, i32t, false),
        tol(DType::F64),
    );
    assert_vals(
        "x * i",
        &vals(&x.try_mul(&i).unwrap()),
        &m(Mul, &xv, f, false, &iv, i32t, false),
        tol(DType::F64),
    );
    let q: GpuArray<f64> = (&i / &i).unwrap();
    assert_vals(
        "i / i",
        &vals(&q),
        &m(Div, &iv, i32t, false, &iv, i32t, false),
        0.0,
    );
    let q: GpuArray<f64> = i.try_div(7).unwrap();
    let sevens = vec![Val::I(7); n];
    assert_vals(
        "i / 7",
        &vals(&q),
        &m(Div, &iv, i32t, false, &sevens, i32t, true),
        0.0,
    );
    let r: GpuArray<i32> = (&i % 7i64).unwrap();
    assert_vals(
        "i % 7",
        &vals(&r),
        &m(
            Remainder,
            &iv,
            i32t,
            false,
            &vec![Val::I(7); n],
            DType::I64,
            true,
        ),
        0.0,
    );
    let fl: GpuArray<i32> = i.floor_div(&i).unwrap();
    assert!(vals(&fl).iter().all(|v| *v == Val::I(1)));
    let mx: GpuArray<f64> = x.maximum(&i).unwrap();
    assert_vals(
        "max(x, i)",
        &vals(&mx),
        &m(Maximum, &xv, f, false, &iv, i32t, false),
        0.0,
    );
    let mn: GpuArray<f32> = x.minimum(0.0).unwrap();
    let zeros = vec![Val::F(0.0); n];
    assert_vals(
        "min(x, 0)",
        &vals(&mn),
        &m(Minimum, &xv, f, false, &zeros, DType::F64, true),
        0.0,
    );
    let neg = (-&x).unwrap();
    assert_vals(
        "-x",
        &vals(&neg),
        &xv.iter()
            .map(|v| match v {
                Val::F(a) => Val::F(-a),
                o => *o,
            })
            .collect::<Vec<_>>(),
        0.0,
    );
    let ab: GpuArray<i32> = i.abs().unwrap();
    assert_vals(
        "|i|",
        &vals(&ab),
        &iv.iter()
            .map(|v| match v {
                Val::I(a) => Val::I(ops_support::wrap(a.abs(), DType::I32)),
                o => *o,
            })
            .collect::<Vec<_>>(),
        0.0,
    );
    let inv = (!&i).unwrap();
    assert_vals(
        "!i",
        &vals(&inv),
        &iv.iter()
            .map(|v| match v {
                Val::I(a) => Val::I(!a),
                o => *o,
            })
            .collect::<Vec<_>>(),
        0.0,
    );
    let bits = (&i & 0xff).unwrap();
    assert_vals(
        "i & 0xff",
        &vals(&bits),
        &iv.iter()
            .map(|v| match v {
                Val::I(a) => Val::I(a & 0xff),
                o => *o,
            })
            .collect::<Vec<_>>(),
        0.0,
    );
    // Owned operands chain.
    let chained: GpuArray<f32> = ((&x * 2.0).unwrap() + &x).unwrap();
    let twice = m(Mul, &xv, f, false, &vec![Val::F(2.0); n], DType::F64, true);
    assert_vals(
        "2x + x",
        &vals(&chained),
        &m(Add, &twice, f, false, &xv, f, false),
        0.0,
    );
}

// ---------------------------------------------------------------------------------
// Scalars on either side, weak promotion

#[test]
#[ignore = "needs a CUDA device"]
fn scalars_on_both_sides_follow_weak_promotion() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 257;
    let xh = rng.vec::<f32>(n);
    let hh = rng.vec::<f16>(n);
    let ih = nonzero(rng.vec::<i16>(n));
    let (x, h, i) = (up(&s, &[n], &xh), up(&s, &[n], &hh), up(&s, &[n], &ih));
    let xv: Vec<Val> = xh.iter().map(|&v| val(v)).collect();
    let hv: Vec<Val> = hh.iter().map(|&v| val(v)).collect();
    let iv: Vec<Val> = ih.iter().map(|&v| val(v)).collect();
    let sc = |v: Val| vec![v; n];
    use BinaryOp::*;
    // f16 array with an f64 scalar stays f16 (NEP 50).
    let r: GpuArray<f16> = (&h * 2.5f64).unwrap();
    assert_vals(
        "h * 2.5",
        &vals(&r),
        &model_binary(
            Mul,
            &hv,
            DType::F16,
            false,
            &sc(Val::F(2.5)),
            DType::F64,
            true,
        ),
        tol(DType::F16),
    );
    let r: GpuArray<f16> = (2.5f64 - &h).unwrap();
    assert_vals(
        "2.5 - h",
        &vals(&r),
        &model_binary(
            Sub,
            &sc(Val::F(2.5)),
            DType::F64,
            true,
            &hv,
            DType::F16,
            false,
        ),
        tol(DType::F16),
    );
    // Integer scalars with float arrays keep the float type; scalar on the left.
    let r: GpuArray<f32> = (3i32 - &x).unwrap();
    assert_vals(
        "3 - x",
        &vals(&r),
        &model_binary(
            Sub,
            &sc(Val::I(3)),
            DType::I32,
            true,
            &xv,
            DType::F32,
            false,
        ),
        tol(DType::F32),
    );
    let r: GpuArray<f32> = (2.0f64 * &x).unwrap();
    assert_vals(
        "2.0 * x",
        &vals(&r),
        &model_binary(
            Mul,
            &sc(Val::F(2.0)),
            DType::F64,
            true,
            &xv,
            DType::F32,
            false,
        ),
        0.0,
    );
    // A float scalar with an integer array promotes to a float type (int16 with float32:
    // float32).
    let r: GpuArray<f32> = (&i * 0.5f32).unwrap();
    assert_vals(
        "i * 0.5f32",
        &vals(&r),
        &model_binary(
            Mul,
            &iv,
            DType::I16,
            false,
            &sc(Val::F(0.5)),
            DType::F32,
            true,
        ),
        0.0,
    );
    // Integer scalar on the left of a division: true division to f64.
    let r: GpuArray<f64> = (1000i32 / &i).unwrap();
    assert_vals(
        "1000 / i",
        &vals(&r),
        &model_binary(
            Div,
            &sc(Val::I(1000)),
            DType::I32,
            true,
            &iv,
            DType::I16,
            false,
        ),
        0.0,
    );
    // Complex scalar.
    let r: GpuArray<Complex<f32>> = (Complex::new(0.5f32, -1.0) * &x).unwrap();
    assert_vals(
        "c * x",
        &vals(&r),
        &model_binary(
            Mul,
            &sc(Val::C(0.5, -1.0)),
            DType::C64,
            true,
            &xv,
            DType::F32,
            false,
        ),
        tol(DType::C64),
    );
    // Reversed power.
    let e: Vec<f32> = (0..n).map(|k| (k % 9) as f32 * 0.5 - 2.0).collect();
    let ea = up(&s, &[n], &e);
    let r = ea.rpow(2.0).unwrap();
    let ev: Vec<Val> = e.iter().map(|&v| val(v)).collect();
    assert_vals(
        "2 ** e",
        &vals(&r),
        &model_binary(
            Pow,
            &sc(Val::F(2.0)),
            DType::F64,
            true,
            &ev,
            DType::F32,
            false,
        ),
        2e-6,
    );
    // Booleans: + is or, * is and, - is refused.
    let b = up(&s, &[4], &[true, false, true, false]);
    let c = up(&s, &[4], &[true, true, false, false]);
    assert_eq!(
        (&b + &c).unwrap().to_vec().unwrap(),
        vec![true, true, true, false]
    );
    assert_eq!(
        (&b * &c).unwrap().to_vec().unwrap(),
        vec![true, false, false, false]
    );
    assert!(matches!(&b - &c, Err(ArrayError::UnsupportedType { .. })));
}

// ---------------------------------------------------------------------------------
// Broadcasting and non-contiguous operands

#[test]
#[ignore = "needs a CUDA device"]
fn broadcasting_shapes_and_non_contiguous_operands() {
    let mut rng = Rng::fresh();
    let s = stream();
    let cases: &[(&[usize], &[usize])] = &[
        (&[3, 1, 5], &[4, 5]),
        (&[1], &[2, 3]),
        (&[], &[2, 2]),
        (&[7, 1], &[1, 9]),
        (&[2, 3, 4, 5], &[3, 1, 5]),
        (&[1, 1, 1], &[1]),
        (&[6], &[6]),
    ];
    for &(sa, sb) in cases {
        let na: usize = sa.iter().product();
        let nb: usize = sb.iter().product();
        let (ah, bh) = (rng.vec::<f64>(na), rng.vec::<i32>(nb));
        let (a, b) = (up(&s, sa, &ah), up(&s, sb, &bh));
        poison_pool(&s);
        let c = (&a - &b).unwrap();
        let shape = rucuda_array::layout::broadcast_shapes(sa, sb).unwrap();
        assert_eq!(c.shape(), shape.as_slice());
        let (ia, ib) = (broadcast_index(sa, &shape), broadcast_index(sb, &shape));
        let want: Vec<Val> = ia
            .iter()
            .zip(&ib)
            .map(|(&p, &q)| {
                binary(
                    BinaryOp::Sub,
                    val(ah[p]),
                    DType::F64,
                    false,
                    val(bh[q]),
                    DType::I32,
                    false,
                )
                .unwrap()
                .0
            })
            .collect();
        assert_vals(&format!("{sa:?} - {sb:?}"), &vals(&c), &want, 0.0);
        // The reverse order.
        let c = (&b - &a).unwrap();
        assert_eq!(c.shape(), shape.as_slice());
    }
    // Shapes that do not broadcast: the error names both.
    let a = GpuArray::<f32>::zeros(&s, &[2, 3]).unwrap();
    let b = GpuArray::<f32>::zeros(&s, &[4]).unwrap();
    let e = (&a + &b).unwrap_err().to_string();
    assert!(e.contains("[2, 3]") && e.contains("[4]"), "{e}");

    // Non-contiguous: transposed, stepped, reversed, and a broadcast view.
    let (r, c) = (37, 29);
    let mh = rng.vec::<f32>(r * c);
    let m = up(&s, &[r, c], &mh);
    let host = ndarray::Array2::from_shape_vec((r, c), mh.clone()).unwrap();
    let t = m.transpose();
    let st = m
        .slice(&[
            SliceArg::stepped(None, None, 2),
            SliceArg::stepped(Some(1), None, 3),
        ])
        .unwrap();
    let hst = host.slice(ndarray::s![..;2, 1..;3]);
    let rev = m.reverse().unwrap();
    let hrev = host.slice(ndarray::s![..;-1, ..;-1]);
    let sum = (&t + &t).unwrap();
    let want: Vec<Val> = host.t().iter().map(|&v| val(v + v)).collect();
    assert_vals("t + t", &vals(&sum), &want, 0.0);
    let prod = (&st * &st).unwrap();
    let want: Vec<Val> = hst.iter().map(|&v| val(v * v)).collect();
    assert_vals("stepped * stepped", &vals(&prod), &want, 0.0);
    let diff = (&rev - &m).unwrap();
    let want: Vec<Val> = hrev
        .iter()
        .zip(host.iter())
        .map(|(&p, &q)| val(p - q))
        .collect();
    assert_vals("reversed - m", &vals(&diff), &want, 0.0);
    let row = m.slice(&[SliceArg::index(3)]).unwrap();
    let bc = row.broadcast_to(&[5, c]).unwrap();
    let q = (&bc * 2.0).unwrap();
    assert_eq!(q.shape(), &[5, c]);
    let want: Vec<Val> = (0..5 * c).map(|k| val(host[[3, k % c]] * 2.0)).collect();
    assert_vals("broadcast view * 2", &vals(&q), &want, 0.0);
    // A column (stride c) against a contiguous vector, mixed types.
    let col = m.slice(&[SliceArg::All, SliceArg::index(4)]).unwrap();
    let vh = rng.vec::<f64>(r);
    let v = up(&s, &[r], &vh);
    let out = (&col + &v).unwrap();
    let want: Vec<Val> = (0..r).map(|k| val(host[[k, 4]] as f64 + vh[k])).collect();
    assert_vals("column + vector", &vals(&out), &want, 0.0);
}

// ---------------------------------------------------------------------------------
// In place and out=

#[test]
#[ignore = "needs a CUDA device"]
fn in_place_and_out_forms_cast_by_same_kind_and_handle_overlap() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 1001;
    let ah = rng.vec::<f32>(n);
    let bh = rng.vec::<i8>(n);
    let mut a = up(&s, &[n], &ah);
    let b = up(&s, &[n], &bh);
    a.try_add_assign(&b).unwrap();
    let mut want: Vec<f32> = ah.iter().zip(&bh).map(|(&x, &y)| x + y as f32).collect();
    assert_eq!(a.to_vec().unwrap(), want);
    a.try_mul_assign(2).unwrap();
    want.iter_mut().for_each(|w| *w *= 2.0);
    assert_eq!(a.to_vec().unwrap(), want);
    a.try_sub_assign(0.5f64).unwrap();
    want.iter_mut().for_each(|w| *w -= 0.5);
    assert_eq!(a.to_vec().unwrap(), want);
    a.try_div_assign(&b.maximum(1i8).unwrap()).unwrap();
    let bm: Vec<f32> = bh.iter().map(|&y| y.max(1) as f32).collect();
    want.iter_mut().zip(&bm).for_each(|(w, d)| *w /= d);
    assert_eq!(a.to_vec().unwrap(), want);
    a.binary_assign(BinaryOp::Maximum, 0.0).unwrap();
    want.iter_mut().for_each(|w| *w = w.max(0.0));
    assert_eq!(a.to_vec().unwrap(), want);

    // Integer arrays: results of a higher category are refused (same_kind).
    let mut i = up(&s, &[3], &[1i32, 2, 3]);
    assert!(matches!(
        i.try_div_assign(2),
        Err(ArrayError::Casting { .. })
    ));
    assert!(matches!(
        i.try_add_assign(0.5),
        Err(ArrayError::Casting { .. })
    ));
    i.try_add_assign(&up(&s, &[3], &[1u8, 1, 1])).unwrap();
    assert_eq!(i.to_vec().unwrap(), vec![2, 3, 4]);
    // Narrowing within a kind wraps: u8 += i64.
    let mut u = up(&s, &[2], &[250u8, 3]);
    u.try_add_assign(&up(&s, &[2], &[10i64, -4])).unwrap();
    assert_eq!(u.to_vec().unwrap(), vec![4, 255]);
    // In place with a broadcast operand; refused when the result shape would grow.
    let mut m = up(&s, &[2, 3], &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]);
    m.try_add_assign(&up(&s, &[3], &[10.0f64, 20.0, 30.0]))
        .unwrap();
    assert_eq!(
        m.to_vec().unwrap(),
        vec![11.0, 22.0, 33.0, 14.0, 25.0, 36.0]
    );
    let mut v = up(&s, &[3], &[1.0f64, 2.0, 3.0]);
    assert!(v.try_add_assign(&m).is_err());
    // A broadcast view cannot be written.
    let mut bc = v.broadcast_to(&[2, 3]).unwrap();
    assert!(matches!(
        bc.try_add_assign(1.0),
        Err(ArrayError::WriteToBroadcast { .. })
    ));

    // out= into another type, poisoned first.
    let x = up(&s, &[n], &ah);
    let mut out = poisoned::<f64>(&s, &[n]);
    x.binary_into(BinaryOp::Mul, &b, &mut out).unwrap();
    let w: Vec<f64> = ah
        .iter()
        .zip(&bh)
        .map(|(&p, &q)| (p * q as f32) as f64)
        .collect();
    assert_eq!(out.to_vec().unwrap(), w);
    let mut narrow = poisoned::<i8>(&s, &[n]);
    assert!(matches!(
        x.binary_into(BinaryOp::Add, 1.0, &mut narrow),
        Err(ArrayError::Casting { .. })
    ));
    // out is exactly an operand: in place.
    let x2 = up(&s, &[n], &ah);
    let mut alias = x2.view();
    x2.binary_into(BinaryOp::Add, 1.0, &mut alias).unwrap();
    let w: Vec<f32> = ah.iter().map(|&p| p + 1.0).collect();
    assert_eq!(x2.to_vec().unwrap(), w);
    // out overlaps an operand shifted by one: computed as from a copy (NumPy).
    let y = up(&s, &[n], &ah);
    let src = y.slice(&[SliceArg::range(0, n as isize - 1)]).unwrap();
    let mut dst = y.slice(&[SliceArg::range(1, n as isize)]).unwrap();
    src.binary_into(BinaryOp::Mul, 2.0, &mut dst).unwrap();
    let mut w = ah.clone();
    for k in 1..n {
        w[k] = ah[k - 1] * 2.0;
    }
    assert_eq!(y.to_vec().unwrap(), w);
    // a += a.
    let mut z = up(&s, &[n], &ah);
    let z2 = z.view();
    z.try_add_assign(&z2).unwrap();
    let w: Vec<f32> = ah.iter().map(|&p| p + p).collect();
    assert_eq!(z.to_vec().unwrap(), w);
}

// ---------------------------------------------------------------------------------
// NaN, comparisons, logical, where

#[test]
#[ignore = "needs a CUDA device"]
fn nan_comparisons_logical_maximum_and_where_behave_as_numpy() {
    let s = stream();
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let xh = [1.0, nan, -2.0, inf, -0.0, 0.0, nan, 5.0];
    let yh = [1.0, nan, 3.0, inf, 0.0, nan, 2.0, -inf];
    let (x, y) = (up(&s, &[8], &xh), up(&s, &[8], &yh));
    let b = |a: Result<GpuArray<bool>, ArrayError>| a.unwrap().to_vec().unwrap();
    assert_eq!(
        b(x.equal(&y)),
        [true, false, false, true, true, false, false, false]
    );
    assert_eq!(
        b(x.not_equal(&y)),
        [false, true, true, false, false, true, true, true]
    );
    assert_eq!(
        b(x.less(&y)),
        [false, false, true, false, false, false, false, false]
    );
    assert_eq!(
        b(x.less_equal(&y)),
        [true, false, true, true, true, false, false, false]
    );
    assert_eq!(
        b(x.greater(&y)),
        [false, false, false, false, false, false, false, true]
    );
    assert_eq!(
        b(x.greater_equal(&y)),
        [true, false, false, true, true, false, false, true]
    );
    assert_eq!(
        b(x.logical_and(&y)),
        [true, true, true, true, false, false, true, true]
    );
    assert_eq!(
        b(x.logical_or(0)),
        [true, true, true, true, false, false, true, true]
    );
    assert_eq!(
        b(x.logical_xor(&y)),
        [false, false, false, false, false, true, false, false]
    );
    assert_eq!(
        b(x.logical_not()),
        [false, false, false, false, true, true, false, false]
    );
    let mx = x.maximum(&y).unwrap().to_vec().unwrap();
    let mn = x.minimum(&y).unwrap().to_vec().unwrap();
    for k in 0..8 {
        let (p, q) = (xh[k], yh[k]);
        if p.is_nan() || q.is_nan() {
            assert!(mx[k].is_nan() && mn[k].is_nan(), "{k}");
        } else {
            assert_eq!(mx[k], p.max(q), "{k}");
            assert_eq!(mn[k], p.min(q), "{k}");
        }
    }
    // where and if_positive (NaN is not positive, but is nonzero).
    let w: Vec<f64> = ops::where_(&x, &y, -1.0).unwrap().to_vec().unwrap();
    for k in 0..8 {
        let want = if xh[k] != 0.0 { yh[k] } else { -1.0 };
        assert!(w[k] == want || (w[k].is_nan() && want.is_nan()), "{k}");
    }
    let p: Vec<f64> = ops::if_positive(&x, &y, 7i32).unwrap().to_vec().unwrap();
    for k in 0..8 {
        let want = if xh[k] > 0.0 { yh[k] } else { 7.0 };
        assert!(p[k] == want || (p[k].is_nan() && want.is_nan()), "{k}");
    }
    // where with broadcasting and mixed types: bool condition [2,1], a [3], b scalar.
    let c = up(&s, &[2, 1], &[true, false]);
    let a = up(&s, &[3], &[1i16, 2, 3]);
    let r: GpuArray<i16> = ops::where_(&c, &a, 9i64).unwrap();
    assert_eq!(r.shape(), &[2, 3]);
    assert_eq!(r.to_vec().unwrap(), vec![1, 2, 3, 9, 9, 9]);
    let r: GpuArray<f32> = ops::where_(&c, &a, 0.5f32).unwrap();
    assert_eq!(r.to_vec().unwrap(), vec![1.0, 2.0, 3.0, 0.5, 0.5, 0.5]);
    let r = ops::where_scalars(&c, 1u8, 2u8).unwrap();
    assert_eq!(r.to_vec().unwrap(), vec![1, 2]);
    // Complex comparisons are lexicographic; equality compares both parts.
    let z = up(
        &s,
        &[3],
        &[
            Complex::new(1.0f32, 2.0),
            Complex::new(1.0, 3.0),
            Complex::new(0.0, 9.0),
        ],
    );
    let one_two = up(&s, &[1], &[Complex::new(1.0f32, 2.0)]);
    assert_eq!(b(z.less(&one_two)), [false, false, true]);
    assert_eq!(b(z.equal(&one_two)), [true, false, false]);
    let zm = z
        .maximum(Complex::new(1.0f32, 2.5))
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(
        zm,
        vec![
            Complex::new(1.0, 2.5),
            Complex::new(1.0, 3.0),
            Complex::new(1.0, 2.5)
        ]
    );
    // Mixed-type comparison in the promoted type: int32 vs uint32 in int64.
    let i = up(&s, &[2], &[-1i32, 5]);
    let u = up(&s, &[2], &[u32::MAX, 5]);
    assert_eq!(b(i.less(&u)), [true, false]);
}

// ---------------------------------------------------------------------------------
// Integer division semantics

#[test]
#[ignore = "needs a CUDA device"]
fn integer_floor_division_remainder_and_power_semantics() {
    let s = stream();
    let a = up(&s, &[8], &[7i32, -7, 7, -7, 0, i32::MIN, 5, -5]);
    let b = up(&s, &[8], &[2i32, 2, -2, -2, 3, -1, 0, 0]);
    assert_eq!(
        a.floor_div(&b).unwrap().to_vec().unwrap(),
        vec![3, -4, -4, 3, 0, i32::MIN, 0, 0]
    );
    assert_eq!(
        a.remainder(&b).unwrap().to_vec().unwrap(),
        vec![1, 1, -1, -1, 0, 0, 0, 0]
    );
    let q: GpuArray<f64> = (&a / &b).unwrap();
    let qv = q.to_vec().unwrap();
    assert_eq!(&qv[..6], &[3.5, -3.5, -3.5, 3.5, 0.0, 2147483648.0]);
    assert!(qv[6].is_infinite() && qv[7].is_infinite() && qv[7] < 0.0);
    let u = up(&s, &[3], &[7u16, 65535, 3]);
    assert_eq!(
        u.floor_div(2u16).unwrap().to_vec().unwrap(),
        vec![3, 32767, 1]
    );
    assert_eq!(u.remainder(0u16).unwrap().to_vec().unwrap(), vec![0, 0, 0]);
    let p = up(&s, &[5], &[2i64, -3, 1, -1, 5]);
    let e = up(&s, &[5], &[62i64, 3, -4, -3, -1]);
    assert_eq!(
        p.pow(&e).unwrap().to_vec().unwrap(),
        vec![1 << 62, -27, 1, -1, 0]
    );
    assert_eq!(
        up(&s, &[1], &[3u8]).pow(6u8).unwrap().to_vec().unwrap(),
        vec![217]
    ); // 729 wraps
       // Floats: NumPy's floor division and remainder, with signed zeros and NaN.
    let f = up(&s, &[6], &[7.5f64, -7.5, 7.5, 1.0, f64::NAN, 0.0]);
    let g = up(&s, &[6], &[2.0f64, 2.0, -2.0, 0.0, 1.0, -3.0]);
    let fd = f.floor_div(&g).unwrap().to_vec().unwrap();
    assert_eq!(&fd[..3], &[3.0, -4.0, -4.0]);
    assert!(fd[3].is_infinite() && fd[4].is_nan());
    assert!(fd[5] == 0.0 && fd[5].is_sign_negative());
    let rm = f.remainder(&g).unwrap().to_vec().unwrap();
    assert_eq!(&rm[..3], &[1.5, 0.5, -0.5]);
    assert!(rm[3].is_nan() && rm[4].is_nan());
    assert!(rm[5] == 0.0 && rm[5].is_sign_negative());
}

// ---------------------------------------------------------------------------------
// take / put / multi

#[test]
#[ignore = "needs a CUDA device"]
fn take_put_multi_take_and_multi_put_match_numpy_modes() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 1000;
    let src = rng.vec::<f32>(n);
    let a = up(&s, &[n], &src);
    let m = 777;
    let idx: Vec<i32> = (0..m)
        .map(|_| rng.below(4 * n as u64) as i32 - 2 * n as i32)
        .collect();
    let ix = up(&s, &[3, 259], &idx);
    let wrap = |i: i64| i.rem_euclid(n as i64) as usize;
    let clip = |i: i64| i.clamp(0, n as i64 - 1) as usize;
    let t = a.take(&ix, IndexMode::Wrap).unwrap();
    assert_eq!(t.shape(), &[3, 259]);
    let want: Vec<f32> = idx.iter().map(|&i| src[wrap(i as i64)]).collect();
    assert_eq!(t.to_vec().unwrap(), want);
    let t = a.take(&ix, IndexMode::Clip).unwrap();
    let want: Vec<f32> = idx.iter().map(|&i| src[clip(i as i64)]).collect();
    assert_eq!(t.to_vec().unwrap(), want);
    // Unsigned indices, a non-contiguous source (a reversed complex view), a strided
    // index array.
    let zc = rng.vec::<Complex<f64>>(n);
    let z = up(&s, &[n], &zc);
    let zr = z.reverse().unwrap();
    let uidx: Vec<u64> = (0..2 * m).map(|_| rng.below(2 * n as u64)).collect();
    let ui = up(&s, &[2 * m], &uidx);
    let ui_odd = ui.slice(&[SliceArg::stepped(Some(1), None, 2)]).unwrap();
    let t = zr.take(&ui_odd, IndexMode::Clip).unwrap();
    let want: Vec<Complex<f64>> = uidx
        .iter()
        .skip(1)
        .step_by(2)
        .map(|&i| zc[n - 1 - (i as usize).min(n - 1)])
        .collect();
    assert_eq!(t.to_vec().unwrap(), want);
    // multi_take over 10 arrays (two launches of up to 8).
    let hosts: Vec<Vec<i64>> = (0..10).map(|_| rng.vec::<i64>(n)).collect();
    let arrays: Vec<GpuArray<i64>> = hosts.iter().map(|h| up(&s, &[n], h)).collect();
    let refs: Vec<&GpuArray<i64>> = arrays.iter().collect();
    let outs = ops::multi_take(&refs, &ix, IndexMode::Wrap).unwrap();
    assert_eq!(outs.len(), 10);
    for (o, h) in outs.iter().zip(&hosts) {
        let want: Vec<i64> = idx.iter().map(|&i| h[wrap(i as i64)]).collect();
        assert_eq!(o.to_vec().unwrap(), want);
    }
    // put with a permutation (no duplicates) and clip/wrap; values broadcast.
    let perm: Vec<i64> = {
        let mut p: Vec<i64> = (0..n as i64).collect();
        for k in (1..n).rev() {
            p.swap(k, rng.below(k as u64 + 1) as usize);
        }
        p
    };
    let pi = up(&s, &[n], &perm);
    let vals_h = rng.vec::<u16>(n);
    let dst = poisoned::<u16>(&s, &[n]);
    dst.put(&pi, &up(&s, &[n], &vals_h), IndexMode::Wrap)
        .unwrap();
    let mut want = vec![0u16; n];
    for k in 0..n {
        want[perm[k] as usize] = vals_h[k];
    }
    assert_eq!(dst.to_vec().unwrap(), want);
    // Out-of-range and negative indices with clip; a broadcast value.
    let d2 = GpuArray::<f64>::zeros(&s, &[5]).unwrap();
    d2.put(
        &up(&s, &[2], &[-7i8, 100]),
        &up(&s, &[1], &[3.5f64]),
        IndexMode::Clip,
    )
    .unwrap();
    assert_eq!(d2.to_vec().unwrap(), vec![3.5, 0.0, 0.0, 0.0, 3.5]);
    // Into a non-contiguous destination (a transposed matrix, flat in its own order).
    let mh = rng.vec::<i32>(12);
    let mat = up(&s, &[3, 4], &mh);
    let mt = mat.transpose();
    mt.put(
        &up(&s, &[2], &[0u32, 5]),
        &up(&s, &[2], &[-1i32, -2]),
        IndexMode::Clip,
    )
    .unwrap();
    let mut host = ndarray::Array2::from_shape_vec((3, 4), mh).unwrap();
    host[[0, 0]] = -1; // flat 0 of the transpose
    host[[2, 1]] = -2; // flat 5 of the 4x3 transpose is [1, 2] there: row 2, column 1 here
    assert_eq!(
        mat.to_vec().unwrap(),
        host.iter().copied().collect::<Vec<_>>()
    );
    // multi_put over 9 arrays.
    let vals9: Vec<Vec<bool>> = (0..9).map(|_| rng.vec::<bool>(n)).collect();
    let v9: Vec<GpuArray<bool>> = vals9.iter().map(|h| up(&s, &[n], h)).collect();
    let d9: Vec<GpuArray<bool>> = (0..9).map(|_| GpuArray::zeros(&s, &[n]).unwrap()).collect();
    ops::multi_put(
        &v9.iter().collect::<Vec<_>>(),
        &pi,
        &d9.iter().collect::<Vec<_>>(),
        IndexMode::Clip,
    )
    .unwrap();
    for (d, h) in d9.iter().zip(&vals9) {
        let mut want = vec![false; n];
        for k in 0..n {
            want[perm[k] as usize] = h[k];
        }
        assert_eq!(d.to_vec().unwrap(), want);
    }
    // Refused: taking from an empty array, float indices (a compile-time bound? no:
    // refused at run time).
    let empty = GpuArray::<f32>::empty(&s, &[0]).unwrap();
    assert!(empty.take(&ix, IndexMode::Wrap).is_err());
    assert!(a.take(&up(&s, &[1], &[0.5f32]), IndexMode::Wrap).is_err());
}

// ---------------------------------------------------------------------------------
// concatenate / stack

#[test]
#[ignore = "needs a CUDA device"]
fn concatenate_and_stack_along_several_axes() {
    let mut rng = Rng::fresh();
    let s = stream();
    let ah = rng.vec::<f64>(2 * 3 * 4);
    let bh = rng.vec::<f64>(2 * 5 * 4);
    let ch = rng.vec::<f64>(2 * 4);
    let (a, b, c) = (
        up(&s, &[2, 3, 4], &ah),
        up(&s, &[2, 5, 4], &bh),
        up(&s, &[2, 1, 4], &ch),
    );
    let ha = ndarray::ArrayD::from_shape_vec(vec![2, 3, 4], ah.clone()).unwrap();
    let hb = ndarray::ArrayD::from_shape_vec(vec![2, 5, 4], bh.clone()).unwrap();
    let hc = ndarray::ArrayD::from_shape_vec(vec![2, 1, 4], ch.clone()).unwrap();
    let r = ops::concatenate(&[&a, &b, &c], 1).unwrap();
    let want = ndarray::concatenate(ndarray::Axis(1), &[ha.view(), hb.view(), hc.view()]).unwrap();
    assert_eq!(r.to_ndarray().unwrap(), want);
    let r = ops::concatenate(&[&a, &a], -1).unwrap();
    let want = ndarray::concatenate(ndarray::Axis(2), &[ha.view(), ha.view()]).unwrap();
    assert_eq!(r.to_ndarray().unwrap(), want);
    let r = ops::concatenate(&[&a, &a.reverse().unwrap()], 0).unwrap();
    let rev = ha
        .slice(ndarray::s![..;-1, ..;-1, ..;-1])
        .to_owned()
        .into_dyn();
    let want = ndarray::concatenate(ndarray::Axis(0), &[ha.view(), rev.view()]).unwrap();
    assert_eq!(r.to_ndarray().unwrap(), want);
    // Transposed inputs; an empty input along the axis.
    let e = GpuArray::<f64>::empty(&s, &[0, 3, 2]).unwrap();
    let at = a.permute(&[2, 1, 0]).unwrap(); // [4, 3, 2]
    let r = ops::concatenate(&[&at, &e, &at], 0).unwrap();
    assert_eq!(r.shape(), &[8, 3, 2]);
    let hat = ha.clone().permuted_axes(vec![2, 1, 0]);
    let want = ndarray::concatenate(ndarray::Axis(0), &[hat.view(), hat.view()]).unwrap();
    assert_eq!(r.to_ndarray().unwrap(), want);
    // stack at the front, the middle and the end.
    for axis in [0isize, 1, 3, -1] {
        let r = ops::stack(&[&a, &a, &a], axis).unwrap();
        let ax = if axis < 0 { 3 } else { axis as usize };
        let want = ndarray::stack(ndarray::Axis(ax), &[ha.view(), ha.view(), ha.view()]).unwrap();
        assert_eq!(r.to_ndarray().unwrap(), want, "axis {axis}");
    }
    // Refused: mismatched shapes (the error names both), no arrays, 0-d arrays.
    let e = ops::concatenate(&[&a, &b], 0).unwrap_err().to_string();
    assert!(e.contains("[2, 5, 4]") && e.contains("[2, 3, 4]"), "{e}");
    ops::concatenate(&[&a, &b], 1).unwrap();
    assert!(ops::stack(&[&a, &b], 0).is_err());
    assert!(ops::concatenate::<f64>(&[], 0).is_err());
    let zero_d = up(&s, &[], &[1.0f64]);
    assert!(ops::concatenate(&[&zero_d, &zero_d], 0).is_err());
}

// ---------------------------------------------------------------------------------
// Complex parts

#[test]
#[ignore = "needs a CUDA device"]
fn real_imag_views_and_conj_on_complex_arrays() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 301;
    let zh = rng.vec::<Complex<f32>>(n);
    let z = up(&s, &[n], &zh);
    let re: GpuArray<f32> = z.real().unwrap();
    let im: GpuArray<f32> = z.imag().unwrap();
    assert!(re.shares_buffer_with(&z) && im.shares_buffer_with(&z));
    assert_eq!(
        re.to_vec().unwrap(),
        zh.iter().map(|c| c.re).collect::<Vec<_>>()
    );
    assert_eq!(
        im.to_vec().unwrap(),
        zh.iter().map(|c| c.im).collect::<Vec<_>>()
    );
    let cj = z.conj().unwrap();
    assert_eq!(
        cj.to_vec().unwrap(),
        zh.iter().map(|c| c.conj()).collect::<Vec<_>>()
    );
    // Writes through the imaginary view; views of views (a reversed 2-D complex).
    im.fill(-1.0).unwrap();
    assert!(z.to_vec().unwrap().iter().all(|c| c.im == -1.0));
    let wh = rng.vec::<Complex<f64>>(6 * 7);
    let w = up(&s, &[6, 7], &wh);
    let v = w
        .slice(&[SliceArg::stepped(None, None, -2), SliceArg::range(1, 6)])
        .unwrap();
    let host = ndarray::Array2::from_shape_vec((6, 7), wh).unwrap();
    let hv = host.slice(ndarray::s![..;-2, 1..6]);
    assert_eq!(
        v.real().unwrap().to_vec().unwrap(),
        hv.iter().map(|c| c.re).collect::<Vec<_>>()
    );
    assert_eq!(
        v.imag().unwrap().to_vec().unwrap(),
        hv.iter().map(|c| c.im).collect::<Vec<_>>()
    );
    let mag: GpuArray<f64> = v.abs().unwrap();
    let want: Vec<Val> = hv.iter().map(|c| Val::F(c.re.hypot(c.im))).collect();
    assert_vals("|v|", &vals(&mag), &want, 1e-15);
    // Real arrays: real is the array, imag zeros, conj a copy.
    let x = up(&s, &[3], &[1.0f64, -2.0, 3.0]);
    assert!(x.real().unwrap().shares_buffer_with(&x));
    assert_eq!(x.imag().unwrap().to_vec().unwrap(), vec![0.0; 3]);
    assert_eq!(x.conj().unwrap().to_vec().unwrap(), vec![1.0, -2.0, 3.0]);
}

// ---------------------------------------------------------------------------------
// astype between every pair, fill, copies

fn check_cast<A: RandomElement, B: Element>(s: &Stream, rng: &mut Rng) {
    let n = 333;
    let mut ah = rng.vec::<A>(n);
    if A::DTYPE.is_float() {
        // Special values too: NaN, infinities, negative zero, values just under an integer.
        for (k, v) in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            2.999,
            -2.999,
        ]
        .iter()
        .enumerate()
        {
            ah[k] = A::from_f64(*v);
        }
    }
    let a = up(s, &[n], &ah);
    poison_pool(s);
    let b = a.astype::<B>().unwrap();
    let want: Vec<Val> = ah.iter().map(|&x| cast(val(x), B::DTYPE)).collect();
    assert_vals(
        &format!("{} as {}", A::DTYPE, B::DTYPE),
        &vals(&b),
        &want,
        tol(B::DTYPE),
    );
    // The strided path: a reversed view converted into a poisoned array.
    let mut out = poisoned::<B>(s, &[n]);
    a.reverse().unwrap().astype_into(&mut out).unwrap();
    let want_rev: Vec<Val> = want.iter().rev().copied().collect();
    assert_vals(
        &format!("{} as {} (reversed)", A::DTYPE, B::DTYPE),
        &vals(&out),
        &want_rev,
        tol(B::DTYPE),
    );
}

macro_rules! casts_from {
    ($s:expr, $rng:expr, $a:ty; $($b:ty),*) => { $( check_cast::<$a, $b>($s, $rng); )* };
}

macro_rules! all_casts {
    ($s:expr, $rng:expr; $($a:ty),*) => {
        $( casts_from!($s, $rng, $a; bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16,
                       f32, f64, Complex<f32>, Complex<f64>); )*
    };
}

#[test]
#[ignore = "needs a CUDA device"]
fn astype_between_all_225_type_pairs_matches_numpy_casts() {
    let mut rng = Rng::fresh();
    let s = stream();
    all_casts!(&s, &mut rng; bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64,
               Complex<f32>, Complex<f64>);
    // Spot checks of the documented rules.
    let f = up(&s, &[4], &[-1.7f32, 2.9, -0.2, 300.0]);
    assert_eq!(
        f.astype::<i32>().unwrap().to_vec().unwrap(),
        vec![-1, 2, 0, 300]
    );
    assert_eq!(
        f.astype::<u8>().unwrap().to_vec().unwrap(),
        vec![255, 2, 0, 44]
    );
    assert_eq!(
        f.astype::<bool>().unwrap().to_vec().unwrap(),
        vec![true, true, true, true]
    );
    let z = up(&s, &[1], &[Complex::new(2.5f64, -1.0)]);
    assert_eq!(z.astype::<f32>().unwrap().to_vec().unwrap(), vec![2.5]);
    assert_eq!(z.astype::<i8>().unwrap().to_vec().unwrap(), vec![2]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn fill_copies_of_views_reshape_copies_and_reversed() {
    let mut rng = Rng::fresh();
    let s = stream();
    // fill and full for every size class, on whole arrays and views.
    let a = poisoned::<Complex<f64>>(&s, &[5, 6]);
    a.fill(Complex::new(1.0, -2.0)).unwrap();
    assert!(a
        .to_vec()
        .unwrap()
        .iter()
        .all(|&c| c == Complex::new(1.0, -2.0)));
    let col = a.slice(&[SliceArg::All, SliceArg::index(2)]).unwrap();
    col.fill(Complex::new(0.0, 3.0)).unwrap();
    let v = a.to_vec().unwrap();
    for r in 0..5 {
        for c in 0..6 {
            let want = if c == 2 {
                Complex::new(0.0, 3.0)
            } else {
                Complex::new(1.0, -2.0)
            };
            assert_eq!(v[r * 6 + c], want);
        }
    }
    assert_eq!(
        GpuArray::full(&s, &[3], -7i64).unwrap().to_vec().unwrap(),
        vec![-7; 3]
    );
    assert_eq!(
        GpuArray::full(&s, &[3], 2.5f64).unwrap().to_vec().unwrap(),
        vec![2.5; 3]
    );
    assert_eq!(
        GpuArray::<Complex<f32>>::ones(&s, &[2])
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![Complex::new(1.0, 0.0); 2]
    );
    let h = GpuArray::full(&s, &[4], f16::from_f32(1.5)).unwrap();
    h.slice(&[SliceArg::stepped(None, None, 3)])
        .unwrap()
        .fill(f16::from_f32(-0.5))
        .unwrap();
    assert_eq!(
        h.to_vec().unwrap(),
        [-0.5f32, 1.5, 1.5, -0.5].map(f16::from_f32)
    );
    assert!(a
        .broadcast_to(&[2, 5, 6])
        .unwrap()
        .fill(Complex::new(0.0, 0.0))
        .is_err());

    // Copies of views (strided kernel), checked against ndarray on the host.
    let (d0, d1, d2) = (9, 10, 11);
    let xh = rng.vec::<u16>(d0 * d1 * d2);
    let x = up(&s, &[d0, d1, d2], &xh);
    let host = ndarray::Array3::from_shape_vec((d0, d1, d2), xh).unwrap();
    let views: Vec<(GpuArray<u16>, Vec<u16>)> = vec![
        (
            x.permute(&[2, 0, 1]).unwrap(),
            host.view()
                .permuted_axes([2, 0, 1])
                .iter()
                .copied()
                .collect(),
        ),
        (
            x.slice(&[
                SliceArg::stepped(Some(1), None, 3),
                SliceArg::All,
                SliceArg::stepped(None, None, -2),
            ])
            .unwrap(),
            host.slice(ndarray::s![1..;3, .., ..;-2])
                .iter()
                .copied()
                .collect(),
        ),
        (
            x.reverse().unwrap(),
            host.slice(ndarray::s![..;-1, ..;-1, ..;-1])
                .iter()
                .copied()
                .collect(),
        ),
        (
            x.slice(&[SliceArg::index(4)])
                .unwrap()
                .insert_axis(0)
                .unwrap()
                .broadcast_to(&[3, d1, d2])
                .unwrap(),
            (0..3)
                .flat_map(|_| {
                    host.slice(ndarray::s![4, .., ..])
                        .iter()
                        .copied()
                        .collect::<Vec<_>>()
                })
                .collect(),
        ),
    ];
    for (k, (v, want)) in views.iter().enumerate() {
        poison_pool(&s);
        let c = v.copy().unwrap();
        assert!(c.is_c_contiguous() && !c.shares_buffer_with(&x), "view {k}");
        assert_eq!(c.to_vec().unwrap(), *want, "copy of view {k}");
        assert_eq!(v.to_vec().unwrap(), *want, "to_vec of view {k}");
        assert_eq!(
            v.get_async(&s).unwrap().wait().unwrap(),
            *want,
            "get_async of view {k}"
        );
    }
    // set through a view (scatter on the device).
    let y = GpuArray::<u16>::zeros(&s, &[d0, d1, d2]).unwrap();
    let yv = y
        .slice(&[
            SliceArg::stepped(None, None, 2),
            SliceArg::index(3),
            SliceArg::stepped(None, None, -1),
        ])
        .unwrap();
    let data: Vec<u16> = (0..yv.len() as u16).collect();
    yv.set(&data).unwrap();
    let mut hy = ndarray::Array3::<u16>::zeros((d0, d1, d2));
    hy.slice_mut(ndarray::s![..;2, 3, ..;-1])
        .iter_mut()
        .zip(&data)
        .for_each(|(h, &d)| *h = d);
    assert_eq!(y.to_vec().unwrap(), hy.iter().copied().collect::<Vec<_>>());
    // reshape that needs a copy; ravel; reversed copies.
    let t = x.transpose();
    let r = t.reshape(&[-1]).unwrap();
    assert!(!r.shares_buffer_with(&x));
    assert_eq!(
        r.to_vec().unwrap(),
        host.t().iter().copied().collect::<Vec<_>>()
    );
    assert!(t.reshape_view(&[-1]).is_err());
    assert_eq!(t.ravel().unwrap().to_vec().unwrap(), r.to_vec().unwrap());
    let v1 = up(&s, &[5], &[1i8, 2, 3, 4, 5]);
    assert_eq!(
        v1.reversed().unwrap().to_vec().unwrap(),
        vec![5, 4, 3, 2, 1]
    );
    // copy_from with broadcasting into a view, and overlapping source/destination.
    let z = GpuArray::<f32>::zeros(&s, &[4, 3]).unwrap();
    z.slice(&[SliceArg::range(1, 3)])
        .unwrap()
        .copy_from(&up(&s, &[3], &[1.0f32, 2.0, 3.0]))
        .unwrap();
    assert_eq!(
        z.to_vec().unwrap(),
        vec![0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0]
    );
    let o = up(&s, &[6], &[1u32, 2, 3, 4, 5, 6]);
    o.slice(&[SliceArg::range(1, 6)])
        .unwrap()
        .copy_from(&o.slice(&[SliceArg::range(0, 5)]).unwrap())
        .unwrap();
    assert_eq!(o.to_vec().unwrap(), vec![1, 1, 2, 3, 4, 5]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn reinterpret_sees_the_same_bytes() {
    let s = stream();
    let f = up(&s, &[2, 2], &[1.0f32, -2.0, 0.5, f32::INFINITY]);
    let bits = f.transpose().reinterpret::<u32>().unwrap();
    assert!(bits.shares_buffer_with(&f));
    assert_eq!(
        bits.to_vec().unwrap(),
        vec![0x3f80_0000, 0x3f00_0000, 0xc000_0000, 0x7f80_0000]
    );
    bits.fill(0x4040_0000).unwrap();
    assert_eq!(f.to_vec().unwrap(), vec![3.0; 4]);
    let z = up(&s, &[1], &[Complex::new(1.0f32, 2.0)]);
    let w = z.reinterpret::<u64>().unwrap();
    assert_eq!(
        w.to_vec().unwrap(),
        vec![(2.0f32.to_bits() as u64) << 32 | 1.0f32.to_bits() as u64]
    );
    assert!(z.reinterpret::<f32>().is_err());
    assert!(up(&s, &[1], &[1u64]).reinterpret::<Complex<f32>>().is_ok());
    let u = up(&s, &[2], &[1u8, 0]);
    assert_eq!(
        u.reinterpret::<bool>().unwrap().to_vec().unwrap(),
        vec![true, false]
    );
    let i = up(&s, &[2], &[-1i16, 7]);
    assert_eq!(
        i.reinterpret::<u16>().unwrap().to_vec().unwrap(),
        vec![65535, 7]
    );
}

// ---------------------------------------------------------------------------------
// Edge sizes, memo, streams, async transfers, > 2^31 elements

#[test]
#[ignore = "needs a CUDA device"]
fn empty_one_element_and_odd_sizes() {
    let mut rng = Rng::fresh();
    let s = stream();
    let e = GpuArray::<f32>::empty(&s, &[0, 3]).unwrap();
    let r = (&e + 1.0).unwrap();
    assert_eq!(r.shape(), &[0, 3]);
    assert!(r.to_vec().unwrap().is_empty());
    assert_eq!(e.astype::<i8>().unwrap().shape(), &[0, 3]);
    e.fill(1.0).unwrap();
    let one = up(&s, &[1], &[2.5f64]);
    assert_eq!((&one * &one).unwrap().to_vec().unwrap(), vec![6.25]);
    let zero_d = up(&s, &[], &[3i32]);
    let r = (&zero_d + &up(&s, &[2, 2], &[1i32, 2, 3, 4])).unwrap();
    assert_eq!(r.to_vec().unwrap(), vec![4, 5, 6, 7]);
    for n in [
        1usize, 2, 3, 4, 5, 7, 8, 15, 16, 17, 255, 256, 257, 4095, 4097, 65537,
    ] {
        let (ah, bh) = (rng.vec::<u8>(n), rng.vec::<i64>(n));
        let (a, b) = (up(&s, &[n], &ah), up(&s, &[n], &bh));
        let c = (&a + &b).unwrap();
        let want: Vec<i64> = ah
            .iter()
            .zip(&bh)
            .map(|(&x, &y)| (x as i64).wrapping_add(y))
            .collect();
        assert_eq!(c.to_vec().unwrap(), want, "n = {n}");
        // A misaligned view (scalar path instead of 16-byte tiles).
        if n > 1 {
            let av = a.slice(&[SliceArg::range(1, n as isize)]).unwrap();
            let c = (&av * 3u8).unwrap();
            let want: Vec<u8> = ah[1..].iter().map(|&x| x.wrapping_mul(3)).collect();
            assert_eq!(c.to_vec().unwrap(), want, "misaligned n = {n}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn repeated_operations_reuse_memoized_kernels_and_report_their_host_cost() {
    let s = stream();
    let a = GpuArray::<f32>::ones(&s, &[1000]).unwrap();
    let b = GpuArray::<f32>::ones(&s, &[1000]).unwrap();
    let _ = (&a + &b).unwrap(); // compile
    let before = ops::memoized_kernel_count();
    // Each launch costs far more under compute-sanitizer: fewer repetitions there.
    let reps = rucuda_testkit::scaled_for_sanitizer(20_000, 1_000);
    let t = std::time::Instant::now();
    for _ in 0..reps {
        let c = (&a + &b).unwrap();
        drop(c);
    }
    s.synchronize().unwrap();
    let us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
    println!("a + b on 1000 f32 with the result allocated: {us:.2} us per op (host, debug or release as built)");
    assert_eq!(ops::memoized_kernel_count(), before);
    let c = (&a + &b).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![2.0; 1000]);
    // Different scalar values: one kernel.
    let _ = (&a * 2.0).unwrap();
    let k = ops::memoized_kernel_count();
    let d = (&a * 3.5).unwrap();
    assert_eq!(ops::memoized_kernel_count(), k);
    assert_eq!(d.to_vec().unwrap(), vec![3.5f32; 1000]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn operands_on_different_streams_are_ordered() {
    let mut rng = Rng::fresh();
    let ctx = common::ctx();
    let s1 = rucuda_driver::Stream::new(&ctx, rucuda_driver::StreamFlags::NON_BLOCKING).unwrap();
    let s2 = rucuda_driver::Stream::new(&ctx, rucuda_driver::StreamFlags::NON_BLOCKING).unwrap();
    let n = 1 << 22;
    let ah = rng.vec::<f32>(n);
    for _ in 0..5 {
        let a = up(&s1, &[n], &ah);
        // Work queued on s2 writes b; the sum on s1 must see it.
        let b = GpuArray::<f32>::empty(&s2, &[n]).unwrap();
        b.fill(2.0).unwrap();
        let mut b2 = b.view();
        for _ in 0..4 {
            b2.try_mul_assign(1.0).unwrap();
        }
        let c = (&a + &b).unwrap();
        assert_eq!(c.stream().raw(), s1.raw());
        drop(b);
        drop(b2);
        let v = c.to_vec().unwrap();
        assert!(v.iter().zip(&ah).all(|(&p, &q)| p == q + 2.0));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn async_get_and_set_through_pinned_staging() {
    let mut rng = Rng::fresh();
    let s = stream();
    let ctx = common::ctx();
    let other = rucuda_driver::Stream::new(&ctx, rucuda_driver::StreamFlags::NON_BLOCKING).unwrap();
    let n = (1 << 20) + 13;
    let h = rng.vec::<Complex<f32>>(n);
    let a = GpuArray::<Complex<f32>>::empty(&s, &[n]).unwrap();
    let pending = a.set_async(&other, &h).unwrap();
    pending.wait().unwrap();
    let got = a.get_async(&other).unwrap();
    let mut spins = 0u64;
    while !got.is_ready().unwrap() {
        spins += 1;
    }
    println!("get_async ready after {spins} polls");
    assert_eq!(got.wait().unwrap(), h);
    // Reusing the staging buffer; ndarray out; a view.
    let b = up(&s, &[4, 5], &rng.vec::<bool>(20));
    let staged = b.get_async(&s).unwrap();
    let want = b.to_ndarray().unwrap();
    let pinned = staged.into_pinned().unwrap();
    let again = b
        .transpose()
        .get_async_with(&s, pinned)
        .unwrap()
        .wait_ndarray()
        .unwrap();
    assert_eq!(again, want.t().to_owned());
    // set_async into a view, scattered on the device.
    let m = GpuArray::<i64>::zeros(&s, &[6, 4]).unwrap();
    let col = m.slice(&[SliceArg::All, SliceArg::index(1)]).unwrap();
    col.set_async(&s, &[1, 2, 3, 4, 5, 6])
        .unwrap()
        .wait()
        .unwrap();
    let v = m.to_vec().unwrap();
    assert_eq!(
        (0..6).map(|r| v[r * 4 + 1]).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5, 6]
    );
    assert!(v.iter().enumerate().all(|(k, &x)| k % 4 == 1 || x == 0));
    assert!(matches!(
        m.set_async(&s, &[1, 2]),
        Err(ArrayError::LengthMismatch { .. })
    ));
    // Dropping a handle early waits for its copy (no use after free).
    let big = GpuArray::<f64>::ones(&s, &[1 << 22]).unwrap();
    drop(big.get_async(&other).unwrap());
}

#[test]
#[ignore = "needs a CUDA device"]
fn an_operation_on_more_than_2_pow_31_elements() {
    if rucuda_testkit::skip_under_sanitizer("over 2^31 elements: hours under instrumentation") {
        return;
    }
    let s = stream();
    let n = (1usize << 31) + 37;
    let a = GpuArray::<u8>::empty(&s, &[n]).unwrap();
    // Distinct values along the array: (index mod 251) through the copy kernel.
    let pattern: Vec<u8> = (0..251u32).map(|k| k as u8).collect();
    let p = up(&s, &[251], &pattern);
    let reps = n / 251;
    let body = a
        .slice(&[SliceArg::range(0, (reps * 251) as isize)])
        .unwrap()
        .reshape(&[reps as isize, 251])
        .unwrap();
    body.copy_from(&p).unwrap();
    a.slice(&[SliceArg::range((reps * 251) as isize, n as isize)])
        .unwrap()
        .fill(7)
        .unwrap();
    let c = (&a + 3u8).unwrap();
    let check = |k: usize| -> u8 {
        if k < reps * 251 {
            (k % 251) as u8 + 3
        } else {
            10
        }
    };
    for k in [
        0usize,
        1,
        250,
        251,
        (1 << 31) - 1,
        1 << 31,
        (1 << 31) + 1,
        n - 40,
        n - 1,
    ] {
        let v = c
            .slice(&[SliceArg::range(k as isize, k as isize + 1)])
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(v, vec![check(k)], "element {k}");
    }
}
