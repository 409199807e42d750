//! sum/mean/var/std of float views against f64 two-pass moments.

use crate::common::{stream, RandomElement, RandomVec, Rng};
use crate::{axis_sets, out_shape, reference, views};
use ndarray::{ArrayD, IxDyn};
use rucuda_array::AxisElement;

const FLOAT_SHAPES: &[&[usize]] = &[
    &[7],
    &[5, 13],
    &[1, 9, 1],
    &[4, 130, 3],
    &[33, 257],
    &[3, 1, 65, 2],
];

/// f64 moments of each output: (sum, sum |x|, n, mean, M2) by two passes.
pub(crate) fn moments(
    shape: &[usize],
    h: &[f64],
    axes: &[usize],
) -> Vec<(f64, f64, f64, f64, f64)> {
    let sums = reference(shape, h, axes, (0.0, 0.0, 0.0), |a, x, _| {
        a.0 += x;
        a.1 += x.abs();
        a.2 += 1.0;
    });
    let means: Vec<f64> = sums.iter().map(|a| a.0 / a.2).collect();
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    // Second pass: deviations from each output's mean.
    let arr = ArrayD::from_shape_vec(IxDyn(shape), h.to_vec()).unwrap();
    let mut m2 = vec![0.0f64; sums.len()];
    for (idx, &x) in arr.indexed_iter() {
        let o = kept.iter().fold(0, |o, &d| o * shape[d] + idx[d]);
        m2[o] += (x - means[o]) * (x - means[o]);
    }
    sums.iter()
        .zip(&means)
        .zip(&m2)
        .map(|((a, &m), &q)| (a.0, a.1, a.2, m, q))
        .collect()
}

pub(crate) fn check_close(got: &[f64], want: &[f64], scale: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, ((&g, &w), &sc)) in got.iter().zip(want).zip(scale).enumerate() {
        let bound = tol * (sc + w.abs()) + 1e-30;
        assert!(
            (g - w).abs() <= bound || (g.is_nan() && w.is_nan()),
            "{what}: index {i}: got {g}, want {w} (bound {bound})"
        );
    }
}

/// sum/mean/var/std (ddof 0 and 1) of float views against f64 two-pass references.
fn check_float_moments<T>(to_f64: fn(T) -> f64, tol: f64)
where
    T: RandomElement + AxisElement<Sum = T, Mean = T>,
{
    let s = stream();
    let mut rng = Rng::fresh();
    for shape in FLOAT_SHAPES {
        let n: usize = shape.iter().product();
        let data: Vec<T> = rng.vec(n);
        for (name, v) in views(&s, shape, &data) {
            let vh: Vec<f64> = v.to_vec().unwrap().into_iter().map(to_f64).collect();
            let vs = v.shape().to_vec();
            for (given, axes) in axis_sets(vs.len()) {
                let m = moments(&vs, &vh, &axes);
                let what = |op: &str, k: bool| {
                    format!(
                        "{op} {} {shape:?} {name} axes {given:?} keepdims {k}",
                        T::DTYPE
                    )
                };
                for keepdims in [false, true] {
                    let want_shape = out_shape(&vs, &axes, keepdims);
                    let sum = v.sum_axes(&given, keepdims).unwrap();
                    assert_eq!(sum.shape(), &want_shape[..], "{}", what("sum", keepdims));
                    let got: Vec<f64> = sum.to_vec().unwrap().into_iter().map(to_f64).collect();
                    let want: Vec<f64> = m.iter().map(|q| q.0).collect();
                    let abs: Vec<f64> = m.iter().map(|q| q.1).collect();
                    check_close(&got, &want, &abs, tol, &what("sum", keepdims));
                    let got: Vec<f64> = v
                        .mean_axes(&given, keepdims)
                        .unwrap()
                        .to_vec()
                        .unwrap()
                        .into_iter()
                        .map(to_f64)
                        .collect();
                    let want: Vec<f64> = m.iter().map(|q| q.3).collect();
                    let scale: Vec<f64> = m.iter().map(|q| q.1 / q.2).collect();
                    check_close(&got, &want, &scale, tol, &what("mean", keepdims));
                }
                for ddof in [0usize, 1] {
                    let var = v.var_axes(&given, ddof, false).unwrap();
                    let got: Vec<f64> = var.to_vec().unwrap().into_iter().map(to_f64).collect();
                    let want: Vec<f64> = m
                        .iter()
                        .map(|q| q.4 / (q.2 - ddof as f64).max(0.0))
                        .collect();
                    let zero = vec![0.0; want.len()];
                    check_close(
                        &got,
                        &want,
                        &zero,
                        tol,
                        &what(&format!("var ddof {ddof}"), false),
                    );
                    let std = v.std_axes(&given, ddof, true).unwrap();
                    assert_eq!(std.shape(), &out_shape(&vs, &axes, true)[..]);
                    let got: Vec<f64> = std.to_vec().unwrap().into_iter().map(to_f64).collect();
                    let want: Vec<f64> = want.iter().map(|w| w.sqrt()).collect();
                    check_close(
                        &got,
                        &want,
                        &zero,
                        tol,
                        &what(&format!("std ddof {ddof}"), true),
                    );
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn float_moments_f32() {
    check_float_moments::<f32>(|x| x as f64, 2e-6);
}

#[test]
#[ignore = "needs a CUDA device"]
fn float_moments_f64() {
    check_float_moments::<f64>(|x| x, 1e-12);
}

#[test]
#[ignore = "needs a CUDA device"]
fn float_moments_f16() {
    check_float_moments::<rucuda_array::f16>(|x| x.to_f64(), 2e-3);
}
