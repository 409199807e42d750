//! GPU tests of the axis reductions (`sum_axes`, `prod_axes`, `max_axes`, `min_axes`,
//! `argmax_axis`, `argmin_axis`, `any_axes`, `all_axes`, `mean_axes`, `var_axes`,
//! `std_axes`): every subset of axes (negative ones too) with and without `keepdims`, on
//! C-ordered, F-ordered (transposed), reversed and stepped views, odd and 1-sized
//! shapes, long reductions that split, against CPU references over ndarray's indexing
//! (floats in f64 with two-pass moments, integers exact). Fresh random data per test.
//! Files: `floats` (moments), `integers` (exact integer and bool reductions, NaN and
//! ties), `edges` (empty reductions, refusals, complex, long and many-axis cases).

#[path = "../common/mod.rs"]
mod common;

mod edges;
mod floats;
mod integers;

use ndarray::{ArrayD, IxDyn};
use rucuda_array::{Element, GpuArray, SliceArg};
use rucuda_driver::Stream;

/// Folds every element of an array of `shape` (row-major `data`) into its output over
/// the `axes` (sorted): `f(acc, x, j)` with `j` the flat index over the reduced axes.
pub(crate) fn reference<X: Copy, A: Clone>(
    shape: &[usize],
    data: &[X],
    axes: &[usize],
    init: A,
    mut f: impl FnMut(&mut A, X, usize),
) -> Vec<A> {
    let arr = ArrayD::from_shape_vec(IxDyn(shape), data.to_vec()).unwrap();
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    let nout = kept.iter().map(|&d| shape[d]).product();
    let mut out = vec![init; nout];
    for (idx, &x) in arr.indexed_iter() {
        let o = kept.iter().fold(0, |o, &d| o * shape[d] + idx[d]);
        let j = axes.iter().fold(0, |j, &d| j * shape[d] + idx[d]);
        f(&mut out[o], x, j);
    }
    out
}

/// NumPy's result shape.
pub(crate) fn out_shape(shape: &[usize], axes: &[usize], keepdims: bool) -> Vec<usize> {
    (0..shape.len())
        .filter_map(|d| match (axes.contains(&d), keepdims) {
            (false, _) => Some(shape[d]),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

/// Every subset of the axes of an `ndim`-array, as given (some negative) and resolved.
pub(crate) fn axis_sets(ndim: usize) -> Vec<(Vec<isize>, Vec<usize>)> {
    (0..1usize << ndim)
        .map(|bits| {
            let axes: Vec<usize> = (0..ndim).filter(|d| bits >> d & 1 == 1).collect();
            // Odd subsets name their last axis from the end.
            let given = axes
                .iter()
                .map(|&d| {
                    if bits % 2 == 1 && d == ndim - 1 {
                        -1
                    } else {
                        d as isize
                    }
                })
                .collect();
            (given, axes)
        })
        .collect()
}

/// The input and some views of it: C order, F order (a transpose), an axis reversed, a
/// stepped slice of the last axis.
pub(crate) fn views<T: Element>(
    s: &Stream,
    shape: &[usize],
    data: &[T],
) -> Vec<(String, GpuArray<T>)> {
    let a = GpuArray::from_shape_slice(s, shape, data).unwrap();
    let mut v = vec![("C".to_string(), a.view())];
    if shape.len() >= 2 {
        let t = a.transpose();
        assert!(t.is_f_contiguous());
        v.push(("F (transposed)".into(), t));
    }
    if !shape.is_empty() {
        v.push(("reversed axis 0".into(), a.flip(0).unwrap()));
        let mut args = vec![SliceArg::All; shape.len()];
        args[shape.len() - 1] = SliceArg::stepped(Some(1), None, 2);
        v.push(("stepped last axis".into(), a.slice(&args).unwrap()));
    }
    v
}
