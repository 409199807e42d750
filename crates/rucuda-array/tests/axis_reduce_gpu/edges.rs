//! Empty reductions, refusals, complex sums, long (split) reductions, many axes,
//! misaligned rows.

use crate::common::{stream, RandomVec, Rng};
use crate::floats::moments;
use crate::{axis_sets, reference};
use rucuda_array::{Complex, GpuArray, SliceArg};

#[test]
#[ignore = "needs a CUDA device"]
fn empty_reductions_as_numpy() {
    let s = stream();
    let a = GpuArray::<f32>::zeros(&s, &[0, 4]).unwrap();
    assert_eq!(
        a.sum_axes(&[0], false).unwrap().to_vec().unwrap(),
        vec![0.0; 4]
    );
    assert_eq!(
        a.prod_axes(&[0], true).unwrap().to_vec().unwrap(),
        vec![1.0; 4]
    );
    assert!(a
        .mean_axes(&[0], false)
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .all(|x| x.is_nan()));
    assert!(a
        .var_axes(&[0], 0, false)
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .all(|x| x.is_nan()));
    assert_eq!(
        a.any_axes(&[0], false).unwrap().to_vec().unwrap(),
        vec![false; 4]
    );
    assert_eq!(
        a.all_axes(&[0], false).unwrap().to_vec().unwrap(),
        vec![true; 4]
    );
    assert!(a.max_axes(&[0], false).is_err());
    assert!(a.min_axes(&[0, 1], false).is_err());
    assert!(a.argmin_axis(0, false).is_err());
    assert!(a.argmax_axis(-2, false).is_err());
    // Reducing the non-empty axis of an empty array gives an empty result.
    let r = a.max_axes(&[1], false).unwrap();
    assert_eq!(r.shape(), &[0]);
    let r = a.sum_axes(&[1], true).unwrap();
    assert_eq!(r.shape(), &[0, 1]);
    let i = GpuArray::<i32>::zeros(&s, &[3, 0]).unwrap();
    assert_eq!(
        i.sum_axes(&[1], false).unwrap().to_vec().unwrap(),
        vec![0i64; 3]
    );
    assert_eq!(
        i.prod_axes(&[-1], false).unwrap().to_vec().unwrap(),
        vec![1i64; 3]
    );
    // ddof >= n: infinity (or NaN for a constant), as NumPy.
    let one = GpuArray::from_shape_slice(&s, &[2, 1], &[1.0f64, 2.0]).unwrap();
    let v = one.var_axes(&[1], 1, false).unwrap().to_vec().unwrap();
    assert!(v.iter().all(|x| x.is_nan()), "{v:?}");
    let two = GpuArray::from_shape_slice(&s, &[1, 2], &[1.0f64, 2.0]).unwrap();
    let v = two.var_axes(&[1], 2, false).unwrap().to_vec().unwrap();
    assert_eq!(v, vec![f64::INFINITY]);
    // Nothing reduced (NumPy's axis=()): the values in the result type.
    let b = GpuArray::from_shape_slice(&s, &[2, 2], &[1u8, 2, 3, 250]).unwrap();
    assert_eq!(
        b.sum_axes(&[], false).unwrap().to_vec().unwrap(),
        vec![1u64, 2, 3, 250]
    );
    assert_eq!(b.sum_axes(&[], false).unwrap().shape(), &[2, 2]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn bad_axes_and_types_are_refused() {
    let s = stream();
    let a = GpuArray::<f32>::zeros(&s, &[2, 3]).unwrap();
    assert!(a.sum_axes(&[2], false).is_err());
    assert!(a.sum_axes(&[-3], false).is_err());
    assert!(a.sum_axes(&[1, -1], false).is_err());
    assert!(a.argmax_axis(5, false).is_err());
    let c = GpuArray::<Complex<f32>>::zeros(&s, &[2, 3]).unwrap();
    assert!(c.var_axes(&[0], 0, false).is_err());
    assert!(c.max_axes(&[0], false).is_err());
    assert!(c.argmin_axis(0, false).is_err());
    let scalar = GpuArray::<f32>::zeros(&s, &[]).unwrap();
    assert!(scalar.sum_axes(&[0], false).is_err());
    assert_eq!(
        scalar.sum_axes(&[], false).unwrap().shape(),
        &[] as &[usize]
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn complex_sums_and_means() {
    let s = stream();
    let mut rng = Rng::fresh();
    let shape = [7usize, 45];
    let data: Vec<Complex<f64>> = rng.vec(7 * 45);
    let a = GpuArray::from_shape_slice(&s, &shape, &data).unwrap();
    for (given, axes) in axis_sets(2) {
        let want = reference(
            &shape,
            &data,
            &axes,
            (Complex::new(0.0, 0.0), 0.0),
            |acc, x, _| {
                acc.0 += x;
                acc.1 += 1.0;
            },
        );
        let sum = a.sum_axes(&given, false).unwrap().to_vec().unwrap();
        let mean = a.mean_axes(&given, false).unwrap().to_vec().unwrap();
        for ((g, m), w) in sum.iter().zip(&mean).zip(&want) {
            assert!((g - w.0).norm() <= 1e-10, "sum {given:?}: {g} vs {}", w.0);
            assert!((m - w.0 / w.1).norm() <= 1e-12, "mean {given:?}");
        }
    }
    let any = a.any_axes(&[0], false).unwrap().to_vec().unwrap();
    assert!(any.iter().all(|&b| b));
}

/// Long reductions (split in chunks and merged), both kernels, and the f32 variance of
/// values with a large mean (cancellation) against f64.
#[test]
#[ignore = "needs a CUDA device"]
fn long_reductions_split_and_stay_accurate() {
    let s = stream();
    let mut rng = Rng::fresh();
    for (rows, cols) in [
        (3usize, (1 << 20) + 5),
        ((1 << 20) + 3, 3),
        (300, 20001),
        (4097, 1023),
    ] {
        let data: Vec<f32> = (0..rows * cols)
            .map(|_| 1.0e4 + (rng.unit() * 10.0) as f32)
            .collect();
        let a = GpuArray::from_shape_slice(&s, &[rows, cols], &data).unwrap();
        let h: Vec<f64> = data.iter().map(|&x| x as f64).collect();
        for axis in [0usize, 1] {
            let m = moments(&[rows, cols], &h, &[axis]);
            let sum = a
                .sum_axes(&[axis as isize], false)
                .unwrap()
                .to_vec()
                .unwrap();
            let var = a
                .var_axes(&[axis as isize], 1, false)
                .unwrap()
                .to_vec()
                .unwrap();
            let mean = a
                .mean_axes(&[axis as isize], false)
                .unwrap()
                .to_vec()
                .unwrap();
            for o in 0..m.len() {
                let (sm, abs, n, mu, m2) = m[o];
                let what = format!("({rows}, {cols}) axis {axis} output {o}");
                assert!(
                    (sum[o] as f64 - sm).abs() <= 1e-6 * abs,
                    "sum {what}: {} vs {sm}",
                    sum[o]
                );
                assert!(
                    (mean[o] as f64 - mu).abs() <= 1e-6 * mu.abs(),
                    "mean {what}"
                );
                let want = m2 / (n - 1.0);
                assert!(
                    (var[o] as f64 - want).abs() <= 1e-5 * want,
                    "var {what}: {} vs {want}",
                    var[o]
                );
            }
            let am = a
                .argmax_axis(axis as isize, false)
                .unwrap()
                .to_vec()
                .unwrap();
            let want: Vec<i64> = reference(
                &[rows, cols],
                &data,
                &[axis],
                (f32::NEG_INFINITY, 0usize),
                |acc, x, j| {
                    if x > acc.0 {
                        *acc = (x, j)
                    }
                },
            )
            .into_iter()
            .map(|q| q.1 as i64)
            .collect();
            assert_eq!(am, want, "argmax ({rows}, {cols}) axis {axis}");
        }
    }
}

/// Many unmergeable axes (more than the kernels take) go through a packed row-major copy;
/// past the copy kernel's dimensions the call is a typed error, not a panic. An offset,
/// misaligned start exercises the scalar head of the vector path.
#[test]
#[ignore = "needs a CUDA device"]
fn many_axes_and_misaligned_rows() {
    let s = stream();
    let mut rng = Rng::fresh();
    // A [4; 11] array sliced with step 2 on every axis: strides 2 * 4^k never merge, so
    // reducing 9 axes needs 9 reduced groups, more than the kernels take.
    let full = vec![4usize; 11];
    let n: usize = full.iter().product();
    let data: Vec<i32> = (0..n).map(|_| (rng.next_u64() % 1000) as i32).collect();
    let a = GpuArray::from_shape_slice(&s, &full, &data).unwrap();
    let v = a
        .slice(&vec![SliceArg::stepped(None, None, 2); 11])
        .unwrap();
    let shape = vec![2usize; 11];
    let host = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&full), data).unwrap();
    let picked: Vec<i128> = host
        .slice_each_axis(|_| ndarray::Slice::new(0, None, 2))
        .iter()
        .map(|&x| x as i128)
        .collect();
    let axes: Vec<usize> = vec![0, 1, 2, 3, 5, 6, 7, 9, 10];
    let given: Vec<isize> = axes.iter().map(|&d| d as isize).collect();
    let want: Vec<i64> = reference(&shape, &picked, &axes, 0i64, |acc, x, _| *acc += x as i64);
    assert_eq!(v.sum_axes(&given, false).unwrap().to_vec().unwrap(), want);
    // 18 axes, every other one reduced: 9 kept and 9 reduced groups that do not merge,
    // and the packing copy takes at most 12 dimensions: a typed error.
    let wide = GpuArray::<i32>::zeros(&s, &[2usize; 18]).unwrap();
    let every_other: Vec<isize> = (0..18).step_by(2).collect();
    match wide.sum_axes(&every_other, false) {
        Err(rucuda_array::ArrayError::Codegen(e)) => {
            assert!(e.to_string().contains("dimensions"), "{e}")
        }
        Err(e) => panic!("another error than too many dimensions: {e}"),
        Ok(_) => panic!("18 unmergeable axes were taken: update this test's premise"),
    }
    // Rows starting at every offset mod 16 bytes: a slice from column 1..k of an odd width.
    let (rows, cols) = (37usize, 1031usize);
    let data: Vec<u8> = rng.vec(rows * cols);
    let a = GpuArray::from_shape_slice(&s, &[rows, cols], &data).unwrap();
    for start in [1isize, 3, 8] {
        let v = a
            .slice(&[SliceArg::All, SliceArg::range(start, cols as isize - 2)])
            .unwrap();
        let got = v.sum_axes(&[1], false).unwrap().to_vec().unwrap();
        for r in 0..rows {
            let want: u64 = data[r * cols + start as usize..(r + 1) * cols - 2]
                .iter()
                .map(|&x| x as u64)
                .sum();
            assert_eq!(got[r], want, "row {r} from {start}");
        }
        let got = v.argmax_axis(1, false).unwrap().to_vec().unwrap();
        for r in 0..rows {
            let row = &data[r * cols + start as usize..(r + 1) * cols - 2];
            let m = *row.iter().max().unwrap();
            assert_eq!(
                got[r],
                row.iter().position(|&x| x == m).unwrap() as i64,
                "argmax row {r} from {start}"
            );
        }
    }
    // complex128 rows at 8 mod 16 bytes cannot take 16-byte loads: read element-wise.
    let c: Vec<Complex<f64>> = rng.vec(5 * 201);
    let ca = GpuArray::from_shape_slice(&s, &[5, 201], &c).unwrap();
    let v = ca.slice(&[SliceArg::All, SliceArg::range(1, 201)]).unwrap();
    let got = v.sum_axes(&[1], false).unwrap().to_vec().unwrap();
    for r in 0..5 {
        let want: Complex<f64> = c[r * 201 + 1..(r + 1) * 201].iter().sum();
        assert!((got[r] - want).norm() <= 1e-9, "complex row {r}");
    }
}

/// The result is ordered on the input's stream and the input may be dropped at once.
#[test]
#[ignore = "needs a CUDA device"]
fn results_outlive_their_input() {
    let s = stream();
    let mut rng = Rng::fresh();
    let data: Vec<f64> = rng.vec(64 * 129);
    let want: Vec<f64> = (0..64)
        .map(|r| data[r * 129..(r + 1) * 129].iter().sum())
        .collect();
    let out = {
        let a = GpuArray::from_shape_slice(&s, &[64, 129], &data).unwrap();
        a.sum_axes(&[1], false).unwrap()
    };
    let got = out.to_vec().unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-9 * w.abs().max(1.0));
    }
}
