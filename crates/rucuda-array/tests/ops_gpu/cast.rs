//! Casts and copies: astype between all 225 type pairs, fill, copies of
//! views, reshape copies, reversed views, reinterpret.

use crate::common::{stream, RandomElement, RandomVec, Rng};
use crate::ops_support::gpu::{poison_pool, poisoned, up, vals};
use crate::ops_support::{assert_vals, cast, tol, val, Val};
use rucuda_array::{bf16, f16, Complex, Element, GpuArray, SliceArg};
use rucuda_driver::Stream;

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
        // Dense, in the view's memory order (NumPy's `K`), and independent.
        assert!(
            c.layout().is_dense_forward() && !c.shares_buffer_with(&x),
            "view {k}"
        );
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
