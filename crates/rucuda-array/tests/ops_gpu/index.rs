//! Indexing and joining: take, put and their multi forms in every index
//! mode, concatenate and stack, real/imag views and conj of complex arrays.

use crate::common::{stream, RandomVec, Rng};
use crate::ops_support::gpu::{poisoned, up, vals};
use crate::ops_support::{assert_vals, Val};
use rucuda_array::ops::{self, IndexMode};
use rucuda_array::{Complex, GpuArray, SliceArg};

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
