//! Exact integer and bool reductions; NaN and first-index rules of the orderings.

use crate::common::{stream, RandomElement, RandomVec, Rng};
use crate::floats::check_close;
use crate::{axis_sets, out_shape, reference, views};
use rucuda_array::{AxisElement, GpuArray};

/// Integer reductions, exact: sum/prod widen (and wrap) in 64 bits, max/min/argmax/
/// argmin/any/all, mean in f64.
fn check_integers<T>(to_i128: fn(T) -> i128, small: fn(&mut Rng) -> T)
where
    T: RandomElement + AxisElement<Mean = f64> + PartialEq,
    T::Sum: Into<i128>,
{
    let s = stream();
    let mut rng = Rng::fresh();
    for shape in [&[9][..], &[6, 11], &[2, 1, 70], &[3, 5, 4]] {
        let n: usize = shape.iter().product();
        // Full-range values for sums; small ones (many ties, no overflow) for products
        // and orderings.
        let wide: Vec<T> = rng.vec(n);
        let narrow: Vec<T> = (0..n).map(|_| small(&mut rng)).collect();
        for data in [&wide, &narrow] {
            for (name, v) in views(&s, shape, data) {
                let vh: Vec<i128> = v.to_vec().unwrap().into_iter().map(to_i128).collect();
                let vs = v.shape().to_vec();
                for (given, axes) in axis_sets(vs.len()) {
                    let what =
                        |op: &str| format!("{op} {} {shape:?} {name} axes {given:?}", T::DTYPE);
                    let wrap64 = |x: i128| x as i64 as i128;
                    let unsigned = T::DTYPE.kind() == rucuda_array::DTypeKind::UnsignedInt;
                    let as_sum = |x: i128| {
                        if unsigned {
                            x as u64 as i128
                        } else {
                            wrap64(x)
                        }
                    };
                    let got: Vec<i128> = v
                        .sum_axes(&given, false)
                        .unwrap()
                        .to_vec()
                        .unwrap()
                        .into_iter()
                        .map(Into::into)
                        .collect();
                    let want: Vec<i128> =
                        reference(&vs, &vh, &axes, 0i128, |a, x, _| *a = wrap64(*a + x))
                            .into_iter()
                            .map(as_sum)
                            .collect();
                    assert_eq!(got, want, "{}", what("sum"));
                    let got: Vec<i128> = v
                        .prod_axes(&given, true)
                        .unwrap()
                        .to_vec()
                        .unwrap()
                        .into_iter()
                        .map(Into::into)
                        .collect();
                    let want: Vec<i128> = reference(&vs, &vh, &axes, 1i128, |a, x, _| {
                        *a = wrap64(a.wrapping_mul(x))
                    })
                    .into_iter()
                    .map(as_sum)
                    .collect();
                    assert_eq!(got, want, "{}", what("prod"));
                    let got = v.any_axes(&given, false).unwrap().to_vec().unwrap();
                    assert_eq!(
                        got,
                        reference(&vs, &vh, &axes, false, |a, x, _| *a |= x != 0),
                        "{}",
                        what("any")
                    );
                    let got = v.all_axes(&given, false).unwrap().to_vec().unwrap();
                    assert_eq!(
                        got,
                        reference(&vs, &vh, &axes, true, |a, x, _| *a &= x != 0),
                        "{}",
                        what("all")
                    );
                    let got: Vec<i128> = v
                        .max_axes(&given, false)
                        .unwrap()
                        .to_vec()
                        .unwrap()
                        .into_iter()
                        .map(to_i128)
                        .collect();
                    assert_eq!(
                        got,
                        reference(&vs, &vh, &axes, i128::MIN, |a, x, _| *a = (*a).max(x)),
                        "{}",
                        what("max")
                    );
                    let got: Vec<i128> = v
                        .min_axes(&given, false)
                        .unwrap()
                        .to_vec()
                        .unwrap()
                        .into_iter()
                        .map(to_i128)
                        .collect();
                    assert_eq!(
                        got,
                        reference(&vs, &vh, &axes, i128::MAX, |a, x, _| *a = (*a).min(x)),
                        "{}",
                        what("min")
                    );
                    let got = v.mean_axes(&given, false).unwrap().to_vec().unwrap();
                    let want: Vec<f64> = reference(&vs, &vh, &axes, (0.0f64, 0.0f64), |a, x, _| {
                        a.0 += x as f64;
                        a.1 += 1.0;
                    })
                    .into_iter()
                    .map(|a| a.0 / a.1)
                    .collect();
                    let scale: Vec<f64> = want.iter().map(|_| 2f64.powi(64)).collect();
                    check_close(&got, &want, &scale, 1e-13, &what("mean"));
                    if axes.len() == 1 {
                        for keepdims in [false, true] {
                            let ax = given[0];
                            let got = v.argmax_axis(ax, keepdims).unwrap();
                            assert_eq!(got.shape(), &out_shape(&vs, &axes, keepdims)[..]);
                            let want: Vec<i64> =
                                reference(&vs, &vh, &axes, (i128::MIN, 0usize), |a, x, j| {
                                    if x > a.0 {
                                        *a = (x, j)
                                    }
                                })
                                .into_iter()
                                .map(|a| a.1 as i64)
                                .collect();
                            assert_eq!(got.to_vec().unwrap(), want, "{}", what("argmax"));
                            let want: Vec<i64> =
                                reference(&vs, &vh, &axes, (i128::MAX, 0usize), |a, x, j| {
                                    if x < a.0 {
                                        *a = (x, j)
                                    }
                                })
                                .into_iter()
                                .map(|a| a.1 as i64)
                                .collect();
                            assert_eq!(
                                v.argmin_axis(ax, keepdims).unwrap().to_vec().unwrap(),
                                want,
                                "{}",
                                what("argmin")
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn integers_i32() {
    check_integers::<i32>(|x| x as i128, |r| (r.next_u64() % 7) as i32 - 3);
}

#[test]
#[ignore = "needs a CUDA device"]
fn integers_u8() {
    check_integers::<u8>(|x| x as i128, |r| (r.next_u64() % 4) as u8);
}

#[test]
#[ignore = "needs a CUDA device"]
fn integers_i64() {
    check_integers::<i64>(|x| x as i128, |r| (r.next_u64() % 5) as i64 - 2);
}

#[test]
#[ignore = "needs a CUDA device"]
fn bools_count_as_numpy() {
    let s = stream();
    let mut rng = Rng::fresh();
    let shape = [5usize, 37];
    let data: Vec<bool> = rng.vec(5 * 37);
    let a = GpuArray::from_shape_slice(&s, &shape, &data).unwrap();
    let h: Vec<i128> = data.iter().map(|&b| b as i128).collect();
    for (given, axes) in axis_sets(2) {
        let sum: GpuArray<i64> = a.sum_axes(&given, false).unwrap();
        let want: Vec<i64> = reference(&shape, &h, &axes, 0i64, |acc, x, _| *acc += x as i64);
        assert_eq!(sum.to_vec().unwrap(), want, "sum {given:?}");
        let any = reference(&shape, &h, &axes, false, |acc, x, _| *acc |= x != 0);
        assert_eq!(a.any_axes(&given, false).unwrap().to_vec().unwrap(), any);
        let all = reference(&shape, &h, &axes, true, |acc, x, _| *acc &= x != 0);
        assert_eq!(a.all_axes(&given, false).unwrap().to_vec().unwrap(), all);
        assert_eq!(a.max_axes(&given, false).unwrap().to_vec().unwrap(), any);
        assert_eq!(a.min_axes(&given, false).unwrap().to_vec().unwrap(), all);
        let mean: GpuArray<f64> = a.mean_axes(&given, false).unwrap();
        let want: Vec<f64> = reference(&shape, &h, &axes, (0.0, 0.0), |acc, x, _| {
            acc.0 += x as f64;
            acc.1 += 1.0;
        })
        .into_iter()
        .map(|q: (f64, f64)| q.0 / q.1)
        .collect();
        let got = mean.to_vec().unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-15, "mean {given:?}: {g} vs {w}");
        }
    }
    let am = a.argmax_axis(1, false).unwrap().to_vec().unwrap();
    for (r, &i) in am.iter().enumerate() {
        let row = &data[r * 37..(r + 1) * 37];
        assert_eq!(
            i as usize,
            row.iter().position(|&b| b).unwrap_or(0),
            "argmax row {r}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn nan_wins_and_first_index_wins() {
    let s = stream();
    let mut rng = Rng::fresh();
    let (rows, cols) = (9usize, 300usize);
    // Few distinct values: many ties.
    let mut data: Vec<f32> = (0..rows * cols)
        .map(|_| (rng.next_u64() % 5) as f32)
        .collect();
    // Rows 2 and 5 hold NaNs (row 5 two of them); column 7 one.
    data[2 * cols + 100] = f32::NAN;
    data[5 * cols + 250] = f32::NAN;
    data[5 * cols + 40] = f32::NAN;
    data[7] = f32::NAN;
    let a = GpuArray::from_shape_slice(&s, &[rows, cols], &data).unwrap();
    for (name, v, t) in [
        ("C", a.view(), false),
        ("F", a.transpose().copy().unwrap().transpose(), false),
        ("T", a.transpose(), true),
    ] {
        let (vr, vc) = if t { (cols, rows) } else { (rows, cols) };
        let at = |r: usize, c: usize| {
            if t {
                data[c * cols + r]
            } else {
                data[r * cols + c]
            }
        };
        let max = v.max_axes(&[1], false).unwrap().to_vec().unwrap();
        let argmax = v.argmax_axis(-1, false).unwrap().to_vec().unwrap();
        let argmin = v.argmin_axis(1, false).unwrap().to_vec().unwrap();
        for r in 0..vr {
            let row: Vec<f32> = (0..vc).map(|c| at(r, c)).collect();
            let first_nan = row.iter().position(|x| x.is_nan());
            let m = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
            let lo = row.iter().cloned().fold(f32::INFINITY, f32::min);
            match first_nan {
                Some(i) => {
                    assert!(max[r].is_nan(), "{name} max row {r}");
                    assert_eq!(argmax[r], i as i64, "{name} argmax row {r}");
                    assert_eq!(argmin[r], i as i64, "{name} argmin row {r}");
                }
                None => {
                    assert_eq!(max[r], m, "{name} max row {r}");
                    assert_eq!(
                        argmax[r],
                        row.iter().position(|&x| x == m).unwrap() as i64,
                        "{name} argmax row {r}"
                    );
                    assert_eq!(
                        argmin[r],
                        row.iter().position(|&x| x == lo).unwrap() as i64,
                        "{name} argmin row {r}"
                    );
                }
            }
        }
        // Along axis 0 as well.
        let argmax0 = v.argmax_axis(0, true).unwrap();
        assert_eq!(argmax0.shape(), &[1, vc]);
        let argmax0 = argmax0.to_vec().unwrap();
        let min0 = v.min_axes(&[0], false).unwrap().to_vec().unwrap();
        for c in 0..vc {
            let col: Vec<f32> = (0..vr).map(|r| at(r, c)).collect();
            match col.iter().position(|x| x.is_nan()) {
                Some(i) => {
                    assert_eq!(argmax0[c], i as i64, "{name} argmax col {c}");
                    assert!(min0[c].is_nan(), "{name} min col {c}");
                }
                None => {
                    let m = col.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                    assert_eq!(
                        argmax0[c],
                        col.iter().position(|&x| x == m).unwrap() as i64,
                        "{name} argmax col {c}"
                    );
                    assert_eq!(min0[c], col.iter().cloned().fold(f32::INFINITY, f32::min));
                }
            }
        }
    }
}
