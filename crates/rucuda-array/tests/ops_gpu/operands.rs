//! How operations take their operands: scalars on either side (weak
//! promotion), broadcast and non-contiguous operands, in-place and `out=` forms.

use crate::common::{stream, RandomVec, Rng};
use crate::ops_support::gpu::{model_binary, nonzero, poison_pool, poisoned, up, vals};
use crate::ops_support::{assert_vals, binary, broadcast_index, tol, val, Val};
use rucuda_array::ops::BinaryOp;
use rucuda_array::{f16, ArrayError, Complex, DType, GpuArray, SliceArg};

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
    let r: GpuArray<f32> = (3i64 - &x).unwrap();
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
    let r: GpuArray<f64> = (1000i64 / &i).unwrap();
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
