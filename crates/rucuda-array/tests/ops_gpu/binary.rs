//! The binary operations: `+` over every pair of types, every operation on
//! representative pairs and scalars, the named methods and std operators, NaN,
//! comparisons, logical operations and `where`, integer division and power.

use crate::common::{stream, RandomElement, RandomVec, Rng};
use crate::ops_support;
use crate::ops_support::gpu::{
    model_binary, natural_into, nonzero, op_tol, operands, poison_pool, up, vals, ALL_OPS,
};
use crate::ops_support::{assert_vals, tol, val, Val};
use rucuda_array::ops::{self, BinaryOp, Promote, PromoteWeak};
use rucuda_array::{bf16, f16, ArrayError, Complex, DType, GpuArray};
use rucuda_driver::Stream;

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
