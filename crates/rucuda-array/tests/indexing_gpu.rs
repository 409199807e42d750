//! GPU tests of masks, `nonzero`, `count_nonzero`, axis gathers and scatters, `mul_add`,
//! `multi_take_put`, ranged reductions, neutral-free inclusive scans and
//! allocator-backed reductions, against CPU references on fresh random data (seed
//! printed by the testkit), with strided, transposed and reversed operands, sizes that
//! span several scan tiles, and the error cases.

mod common;

use common::{stream, RandomVec, Rng};
use rucuda_array::allocator::{ArenaAllocator, StreamOrdered};
use rucuda_array::ops::{self, TakeMode};
use rucuda_array::reduction::{ReductionKernel, ReductionRange};
use rucuda_array::scan::InclusiveScanKernel;
use rucuda_array::{ArrayError, DType, GpuArray, SliceArg};
use rucuda_driver::Stream;

fn up<T: rucuda_array::Element>(s: &Stream, shape: &[usize], data: &[T]) -> GpuArray<T> {
    GpuArray::from_shape_slice(s, shape, data).expect("upload")
}

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut st = vec![1; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        st[k] = st[k + 1] * shape[k + 1];
    }
    st
}

/// The coordinates of flat index `i` in `shape`.
fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for k in (0..shape.len()).rev() {
        c[k] = i % shape[k];
        i /= shape[k];
    }
    c
}

/// The transpose of a row-major `rows x cols` matrix.
fn transpose<T: Copy>(m: &[T], rows: usize, cols: usize) -> Vec<T> {
    (0..cols * rows)
        .map(|k| m[(k % rows) * cols + k / rows])
        .collect()
}

fn random_mask(rng: &mut Rng, n: usize, p: f64) -> Vec<bool> {
    (0..n).map(|_| rng.chance(p)).collect()
}

/// `n` values, each 0 with probability `p_zero`, else in `-half..half`.
fn sparse_i16(rng: &mut Rng, n: usize, p_zero: f64, half: u64) -> Vec<i16> {
    (0..n)
        .map(|_| {
            if rng.chance(p_zero) {
                0
            } else {
                rng.below(2 * half) as i16 - half as i16
            }
        })
        .collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn masks_select_in_row_major_order_from_any_layout() {
    let mut rng = Rng::fresh();
    let s = stream();
    let (r, c) = (37, 53);
    let data = rng.vec::<f32>(r * c);
    let a = up(&s, &[r, c], &data);
    // A contiguous bool mask.
    let m = random_mask(&mut rng, r * c, 0.3);
    let got = a.masked(&up(&s, &[r, c], &m)).unwrap().to_vec().unwrap();
    let want: Vec<f32> = data
        .iter()
        .zip(&m)
        .filter(|(_, &k)| k)
        .map(|(v, _)| *v)
        .collect();
    assert_eq!(got, want);
    // A transposed u8 mask (nonzero = selected) on a transposed array.
    let mu: Vec<u8> = (0..r * c)
        .map(|_| {
            if rng.chance(0.5) {
                0
            } else {
                rng.below(256) as u8
            }
        })
        .collect();
    let mt = up(&s, &[r, c], &mu).transpose(); // [c, r]
    let at = a.transpose();
    let got = at.masked(&mt).unwrap().to_vec().unwrap();
    let (dt, mtt) = (transpose(&data, r, c), transpose(&mu, r, c));
    let want: Vec<f32> = dt
        .iter()
        .zip(&mtt)
        .filter(|(_, &k)| k != 0)
        .map(|(v, _)| *v)
        .collect();
    assert_eq!(got, want);
    // A reversed, stepped f64 array with a float mask (NaN selects, -0.0 does not).
    let n = 3 * 4096 * 8 + 17; // several scan tiles of i64 flags
    let x = rng.vec::<f64>(2 * n);
    let xs = up(&s, &[2 * n], &x)
        .slice(&[SliceArg::stepped(None, None, -2)])
        .unwrap();
    let xs_host: Vec<f64> = x.iter().rev().step_by(2).copied().collect();
    let fm: Vec<f32> = (0..n)
        .map(|k| match k % 5 {
            0 => f32::NAN,
            1 => -0.0,
            2 => 0.0,
            _ => rng.f32(),
        })
        .collect();
    let got = xs.masked(&up(&s, &[n], &fm)).unwrap().to_vec().unwrap();
    let want: Vec<f64> = xs_host
        .iter()
        .zip(&fm)
        .filter(|(_, &k)| k != 0.0)
        .map(|(v, _)| *v)
        .collect();
    assert_eq!(got, want);
    // Nothing selected, everything selected.
    let none = GpuArray::<bool>::zeros(&s, &[r, c]).unwrap();
    assert!(a.masked(&none).unwrap().is_empty());
    let all = GpuArray::<bool>::full(&s, &[r, c], true).unwrap();
    assert_eq!(a.masked(&all).unwrap().to_vec().unwrap(), data);
    // Shape mismatch is an error naming both shapes.
    let bad = GpuArray::<bool>::zeros(&s, &[c, r]).unwrap();
    let e = a.masked(&bad).unwrap_err();
    assert!(
        e.to_string().contains("[53, 37]") && e.to_string().contains("[37, 53]"),
        "{e}"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn compress_selects_slices_along_any_axis() {
    let mut rng = Rng::fresh();
    let s = stream();
    let shape = [6, 7, 5];
    let data = rng.vec::<i32>(210);
    let a = up(&s, &shape, &data);
    let st = strides(&shape);
    for axis in [0isize, 1, 2, -1, -3] {
        let ax = axis.rem_euclid(3) as usize;
        let cond = random_mask(&mut rng, shape[ax], 0.5);
        let got = a
            .compress(&up(&s, &[shape[ax]], &cond), Some(axis))
            .unwrap();
        let kept: Vec<usize> = (0..shape[ax]).filter(|&k| cond[k]).collect();
        let mut out_shape = shape.to_vec();
        out_shape[ax] = kept.len();
        assert_eq!(got.shape(), &out_shape[..]);
        let want: Vec<i32> = (0..out_shape.iter().product())
            .map(|f| {
                let mut c = unravel(f, &out_shape);
                c[ax] = kept[c[ax]];
                data[c.iter().zip(&st).map(|(a, b)| a * b).sum::<usize>()]
            })
            .collect();
        assert_eq!(got.to_vec().unwrap(), want, "axis {axis}");
    }
    // No axis: the flattened array; a shorter condition selects nothing past its end.
    let cond = random_mask(&mut rng, 100, 0.5);
    let got = a
        .compress(&up(&s, &[100], &cond), None)
        .unwrap()
        .to_vec()
        .unwrap();
    let want: Vec<i32> = (0..100).filter(|&k| cond[k]).map(|k| data[k]).collect();
    assert_eq!(got, want);
    // A longer condition selecting past the axis is NumPy's IndexError.
    let mut long = vec![false; 9];
    long[8] = true;
    let e = a.compress(&up(&s, &[9], &long), Some(1)).unwrap_err();
    assert!(
        matches!(
            e,
            ArrayError::IndexOutOfBounds {
                index: 8,
                axis: 1,
                size: 7
            }
        ),
        "{e}"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn nonzero_and_count_nonzero_match_numpy_on_strided_arrays() {
    let mut rng = Rng::fresh();
    let s = stream();
    // 2-D f64 with many zeros, seen transposed and column-stepped.
    let (r, c) = (301, 129);
    let data: Vec<f64> = (0..r * c)
        .map(|_| if rng.chance(0.5) { 0.0 } else { rng.f64() })
        .collect();
    let a = up(&s, &[r, c], &data);
    let v = a
        .transpose()
        .slice(&[SliceArg::stepped(None, None, 2), SliceArg::All])
        .unwrap(); // [65, 301]
    let vshape = [c.div_ceil(2), r];
    let host = |i: usize, j: usize| data[j * c + 2 * i];
    let (mut want_r, mut want_c) = (Vec::new(), Vec::new());
    for i in 0..vshape[0] {
        for j in 0..vshape[1] {
            if host(i, j) != 0.0 {
                want_r.push(i as i64);
                want_c.push(j as i64);
            }
        }
    }
    let nz = v.nonzero().unwrap();
    assert_eq!(nz.len(), 2);
    assert_eq!(nz[0].to_vec().unwrap(), want_r);
    assert_eq!(nz[1].to_vec().unwrap(), want_c);
    let w = ops::where_nonzero(&v).unwrap();
    assert_eq!(w[1].to_vec().unwrap(), want_c);
    assert_eq!(
        v.count_nonzero().unwrap().to_scalar().unwrap(),
        want_r.len() as i64
    );
    // 3-D i16 over several scan tiles; 1-D bool.
    let shape = [17, 64, 97];
    let n: usize = shape.iter().product();
    let d3 = sparse_i16(&mut rng, n, 0.7, 50);
    let nz = up(&s, &shape, &d3).nonzero().unwrap();
    let flat: Vec<usize> = (0..n).filter(|&k| d3[k] != 0).collect();
    for (axis, got) in nz.iter().enumerate() {
        let want: Vec<i64> = flat
            .iter()
            .map(|&f| unravel(f, &shape)[axis] as i64)
            .collect();
        assert_eq!(got.to_vec().unwrap(), want, "axis {axis}");
    }
    let b = random_mask(&mut rng, 1000, 0.1);
    let got = ops::nonzero(&up(&s, &[1000], &b)).unwrap();
    let want: Vec<i64> = (0..1000).filter(|&k| b[k]).map(|k| k as i64).collect();
    assert_eq!(got[0].to_vec().unwrap(), want);
    // count_nonzero counts NaN; nonzero of all zeros is empty; 0-d is an error.
    let f = up(&s, &[4], &[0.0f32, f32::NAN, -0.0, 3.0]);
    assert_eq!(ops::count_nonzero(&f).unwrap().to_scalar().unwrap(), 2);
    let z = GpuArray::<u32>::zeros(&s, &[5, 5])
        .unwrap()
        .nonzero()
        .unwrap();
    assert!(z.iter().all(|a| a.is_empty()));
    let scalar = GpuArray::<f32>::zeros(&s, &[]).unwrap();
    assert!(scalar.nonzero().is_err());
}

/// `count_nonzero` along axes (NumPy's `axis=`, `keepdims=`) on a 3-D i16 array with
/// many zeros, seen whole and transposed (strided), against a CPU count.
#[test]
#[ignore = "needs a CUDA device"]
fn count_nonzero_along_axes_matches_numpy() {
    let mut rng = Rng::fresh();
    let s = stream();
    let shape = [7usize, 33, 65];
    let n: usize = shape.iter().product();
    let d = sparse_i16(&mut rng, n, 0.6, 100);
    let a = up(&s, &shape, &d);
    let at = |i: usize, j: usize, k: usize| d[(i * shape[1] + j) * shape[2] + k] != 0;
    // axis 1: [7, 65]
    let mut want1 = vec![0i64; shape[0] * shape[2]];
    for i in 0..shape[0] {
        for j in 0..shape[1] {
            for k in 0..shape[2] {
                want1[i * shape[2] + k] += i64::from(at(i, j, k));
            }
        }
    }
    let got1 = a.count_nonzero_axes(&[1], false).unwrap();
    assert_eq!(got1.shape(), &[shape[0], shape[2]]);
    assert_eq!(got1.to_vec().unwrap(), want1);
    // axes (0, -1), keepdims: [1, 33, 1]
    let want02: Vec<i64> = (0..shape[1])
        .map(|j| {
            (0..shape[0])
                .flat_map(|i| (0..shape[2]).map(move |k| (i, k)))
                .filter(|&(i, k)| at(i, j, k))
                .count() as i64
        })
        .collect();
    let got02 = a.count_nonzero_axes(&[0, -1], true).unwrap();
    assert_eq!(got02.shape(), &[1, shape[1], 1]);
    assert_eq!(got02.to_vec().unwrap(), want02);
    // The transpose ([65, 33, 7], strided) along its axis 0 is the original along axis 2.
    let t = a.transpose();
    let want_t: Vec<i64> = (0..shape[1])
        .flat_map(|j| (0..shape[0]).map(move |i| (j, i)))
        .map(|(j, i)| (0..shape[2]).filter(|&k| at(i, j, k)).count() as i64)
        .collect();
    assert_eq!(
        t.count_nonzero_axes(&[0], false).unwrap().to_vec().unwrap(),
        want_t
    );
    // A bad axis is a typed error.
    assert!(a.count_nonzero_axes(&[3], false).is_err());
}

/// `take_along_axis` / `put_along_axis` (NumPy's) on a non-contiguous 3-D view along
/// every axis, with broadcast index arrays, negative and out-of-range indices in each
/// mode, the `argsort` round trip, and the shape errors, against CPU gathers.
#[test]
#[ignore = "needs a CUDA device"]
fn take_and_put_along_axis_match_numpy() {
    let mut rng = Rng::fresh();
    let s = stream();
    let shape = [5, 6, 7];
    let (data, base) = strided_view(&s, &mut rng, shape);
    let st = strides(&shape);
    for axis in [0isize, 1, 2, -1] {
        let ax = axis.rem_euclid(3) as usize;
        let len = shape[ax] as i64;
        // Indices of length 4 along the axis, broadcast along the first other axis.
        let mut ishape = shape.to_vec();
        ishape[ax] = 4;
        let bcast = if ax == 0 { 1 } else { 0 };
        ishape[bcast] = 1;
        let icount: usize = ishape.iter().product();
        let idx: Vec<i64> = (0..icount).map(|_| rng.range(-2 * len, 2 * len)).collect();
        let ix = up(&s, &ishape, &idx);
        let mut out_shape = shape.to_vec();
        out_shape[ax] = 4;
        let ist = strides(&ishape);
        for mode in [TakeMode::Wrap, TakeMode::Clip] {
            let got = base.take_along_axis(&ix, axis, mode).unwrap();
            assert_eq!(got.shape(), &out_shape[..]);
            let want: Vec<f64> = (0..out_shape.iter().product())
                .map(|f| {
                    let oc = unravel(f, &out_shape);
                    let mut ic = oc.clone();
                    ic[bcast] = 0;
                    let raw = idx[ic.iter().zip(&ist).map(|(a, b)| a * b).sum::<usize>()];
                    let j = match mode {
                        TakeMode::Wrap => raw.rem_euclid(len),
                        _ => raw.clamp(0, len - 1),
                    } as usize;
                    let mut c = oc.clone();
                    c[ax] = j;
                    data[c.iter().zip(&st).map(|(a, b)| a * b).sum::<usize>()]
                })
                .collect();
            assert_eq!(got.to_vec().unwrap(), want, "take along {axis} {mode:?}");
        }
        // Raise: an out-of-range index is an error naming the axis; in-range indices
        // (negative ones included) give what Wrap gives.
        let raised = base.take_along_axis(&ix, axis, TakeMode::Raise);
        if idx.iter().any(|&v| v < -len || v >= len) {
            let e = raised.map(drop).unwrap_err();
            assert!(
                matches!(e, ArrayError::IndexOutOfBounds { axis: a, size, .. }
                         if a == ax && size == shape[ax]),
                "{e}"
            );
        } else {
            let wrapped = base.take_along_axis(&ix, axis, TakeMode::Wrap).unwrap();
            assert_eq!(raised.unwrap().to_vec().unwrap(), wrapped.to_vec().unwrap());
        }
        let in_range: Vec<i64> = idx.iter().map(|&v| v.rem_euclid(len) - len).collect();
        let ok = up(&s, &ishape, &in_range);
        assert_eq!(
            base.take_along_axis(&ok, axis, TakeMode::Raise)
                .unwrap()
                .to_vec()
                .unwrap(),
            base.take_along_axis(&ix, axis, TakeMode::Wrap)
                .unwrap()
                .to_vec()
                .unwrap(),
            "negative in-range indices under Raise"
        );
    }
    // The argsort round trip: sorting each row by its order.
    let rows: Vec<f32> = rng.vec::<f32>(8 * 300);
    let a = up(&s, &[8, 300], &rows);
    let order = a.argsort().unwrap();
    let sorted = a.take_along_axis(&order, -1, TakeMode::Raise).unwrap();
    assert_eq!(
        sorted.to_vec().unwrap(),
        a.sort().unwrap().to_vec().unwrap(),
        "take_along_axis(a, argsort(a)) == sort(a)"
    );
    // put_along_axis: a distinct column per row (no repeats), values broadcast over rows.
    let dst = GpuArray::<f64>::zeros(&s, &[6, 9]).unwrap();
    let cols: Vec<i32> = (0..6).map(|r: i32| (r * 4) % 9 - 9 * (r % 2)).collect();
    let at = up(&s, &[6, 1], &cols);
    let v = up(&s, &[1, 1], &[2.5f64]);
    dst.put_along_axis(&at, &v, 1, TakeMode::Raise).unwrap();
    let mut want = vec![0.0f64; 54];
    for (r, &c) in cols.iter().enumerate() {
        want[r * 9 + (c as i64).rem_euclid(9) as usize] = 2.5;
    }
    assert_eq!(dst.to_vec().unwrap(), want);
    // Into a transposed (non-contiguous) destination.
    let t = GpuArray::<f64>::zeros(&s, &[9, 6]).unwrap().transpose();
    let vals = up(&s, &[6, 1], &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]);
    t.put_along_axis(&at, &vals, 1, TakeMode::Wrap).unwrap();
    let mut want_t = vec![0.0f64; 54];
    for (r, &c) in cols.iter().enumerate() {
        want_t[r * 9 + (c as i64).rem_euclid(9) as usize] = (r + 1) as f64;
    }
    assert_eq!(t.to_vec().unwrap(), want_t);
    // Shape errors: other axis counts, indices that do not broadcast.
    assert!(a
        .take_along_axis(&up(&s, &[3], &[0i64, 1, 2]), 1, TakeMode::Raise)
        .is_err());
    assert!(a
        .take_along_axis(&up(&s, &[3, 2], &[0i64; 6]), 1, TakeMode::Raise)
        .is_err());
}

#[test]
#[ignore = "needs a CUDA device"]
fn take_axis_gathers_along_every_axis_in_every_mode() {
    let mut rng = Rng::fresh();
    let s = stream();
    let shape = [5, 6, 7];
    let (data, base) = strided_view(&s, &mut rng, shape);
    let st = strides(&shape);
    for axis in [0isize, 1, 2, -1, -2, -3] {
        let ax = axis.rem_euclid(3) as usize;
        let len = shape[ax] as i64;
        let idx: Vec<i32> = (0..12)
            .map(|_| rng.range(-3 * len, 3 * len) as i32)
            .collect();
        let ix = up(&s, &[3, 4], &idx);
        let mut out_shape = shape[..ax].to_vec();
        out_shape.extend([3, 4]);
        out_shape.extend(&shape[ax + 1..]);
        for mode in [TakeMode::Wrap, TakeMode::Clip] {
            let got = base.take_axis(&ix, axis, mode).unwrap();
            assert_eq!(got.shape(), &out_shape[..]);
            let want: Vec<f64> = (0..out_shape.iter().product())
                .map(|f| {
                    let oc = unravel(f, &out_shape);
                    let q = oc[ax] * 4 + oc[ax + 1];
                    let j = match mode {
                        TakeMode::Wrap => (idx[q] as i64).rem_euclid(len),
                        _ => (idx[q] as i64).clamp(0, len - 1),
                    } as usize;
                    let mut c = oc[..ax].to_vec();
                    c.push(j);
                    c.extend(&oc[ax + 2..]);
                    data[c.iter().zip(&st).map(|(a, b)| a * b).sum::<usize>()]
                })
                .collect();
            assert_eq!(got.to_vec().unwrap(), want, "axis {axis} {mode:?}");
        }
        // Raise: in-range (negative included) works like wrap; one bad index fails.
        let ok: Vec<i64> = (0..9).map(|_| rng.range(-len, len - 1)).collect();
        let got = base
            .take_axis(&up(&s, &[9], &ok), axis, TakeMode::Raise)
            .unwrap();
        let want = base
            .take_axis(&up(&s, &[9], &ok), axis, TakeMode::Wrap)
            .unwrap();
        assert_eq!(got.to_vec().unwrap(), want.to_vec().unwrap());
        let mut bad = ok.clone();
        bad[4] = -len - 1;
        let e = base
            .take_axis(&up(&s, &[9], &bad), axis, TakeMode::Raise)
            .unwrap_err();
        assert!(
            matches!(e, ArrayError::IndexOutOfBounds { index, axis: a, size }
                     if index == -len - 1 && a == ax && size == shape[ax]),
            "{e}"
        );
    }
    // u64 indices beyond i64::MAX are out of range (raise) and clip to the end.
    let v = up(&s, &[4], &[1u8, 2, 3, 4]);
    let huge = up(&s, &[2], &[u64::MAX, 1]);
    assert!(matches!(
        v.take_axis(&huge, 0, TakeMode::Raise),
        Err(ArrayError::IndexOutOfBounds {
            index: i64::MAX,
            ..
        })
    ));
    assert_eq!(
        v.take_axis(&huge, 0, TakeMode::Clip)
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![4, 2]
    );
    // Bad axis, empty axis.
    assert!(v.take_axis(&huge, 1, TakeMode::Clip).is_err());
    let empty = GpuArray::<f32>::zeros(&s, &[0, 3]).unwrap();
    assert!(empty.take_axis(&huge, 0, TakeMode::Wrap).is_err());
}

/// Fresh random `data` (row-major `shape`) and a non-contiguous view that reads as it:
/// the data uploaded transposed, with `shape` reversed, then its axes reversed.
fn strided_view(s: &Stream, rng: &mut Rng, shape: [usize; 3]) -> (Vec<f64>, GpuArray<f64>) {
    let [a, b, c] = shape;
    let data = rng.vec::<f64>(a * b * c);
    let mut transposed = vec![0.0; data.len()];
    for i in 0..a {
        for j in 0..b {
            for k in 0..c {
                transposed[(k * b + j) * a + i] = data[(i * b + j) * c + k];
            }
        }
    }
    let view = up(s, &[c, b, a], &transposed).permute(&[2, 1, 0]).unwrap();
    assert_eq!(view.shape(), &shape);
    (data, view)
}

#[test]
#[ignore = "needs a CUDA device"]
fn put_axis_scatters_along_every_axis() {
    let mut rng = Rng::fresh();
    let s = stream();
    let shape = [4, 9, 6];
    let st = strides(&shape);
    for axis in [0isize, 1, 2, -1, -2] {
        let ax = axis.rem_euclid(3) as usize;
        let len = shape[ax];
        // A permutation of a random subset, written with negative indices half the time.
        let mut perm: Vec<usize> = (0..len).collect();
        for k in (1..len).rev() {
            perm.swap(k, rng.below(k as u64 + 1) as usize);
        }
        let m = len.div_ceil(2);
        let idx: Vec<i64> = perm[..m]
            .iter()
            .map(|&j| {
                if rng.chance(0.5) {
                    j as i64 - len as i64
                } else {
                    j as i64
                }
            })
            .collect();
        let mut vshape = shape.to_vec();
        vshape[ax] = m;
        let vals = rng.vec::<f32>(vshape.iter().product());
        let init = rng.vec::<f32>(shape.iter().product());
        let dst = up(&s, &shape, &init);
        dst.put_axis(
            &up(&s, &[m], &idx),
            &up(&s, &vshape, &vals),
            axis,
            TakeMode::Raise,
        )
        .unwrap();
        let mut want = init.clone();
        for (f, v) in vals.iter().enumerate() {
            let mut c = unravel(f, &vshape);
            c[ax] = perm[c[ax]];
            want[c.iter().zip(&st).map(|(a, b)| a * b).sum::<usize>()] = *v;
        }
        assert_eq!(dst.to_vec().unwrap(), want, "axis {axis}");
    }
    // A transposed destination and a broadcast value; wrap mode.
    let init = rng.vec::<i32>(30);
    let d = up(&s, &[5, 6], &init); // seen as [6, 5]
    let dt = d.transpose();
    let v = up(&s, &[1], &[77i32]);
    dt.put_axis(&up(&s, &[2], &[-1i8, 7]), &v, 1, TakeMode::Wrap)
        .unwrap();
    // Columns 4 and 2 of the [6, 5] view are rows 4 and 2 of `d`.
    let mut want = init.clone();
    for j in 0..6 {
        want[4 * 6 + j] = 77;
        want[2 * 6 + j] = 77;
    }
    assert_eq!(d.to_vec().unwrap(), want);
    // Raise: the error names the bad index; shape mismatch of values is refused.
    let z = GpuArray::<f32>::zeros(&s, &[3, 4]).unwrap();
    let e = z
        .put_axis(
            &up(&s, &[1], &[4i32]),
            &up(&s, &[1], &[1.0f32]),
            1,
            TakeMode::Raise,
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            ArrayError::IndexOutOfBounds {
                index: 4,
                axis: 1,
                size: 4
            }
        ),
        "{e}"
    );
    let e = z
        .put_axis(
            &up(&s, &[2], &[0i32, 1]),
            &up(&s, &[3], &[1.0f32, 2.0, 3.0]),
            1,
            TakeMode::Raise,
        )
        .unwrap_err();
    assert!(e.to_string().contains("[3]"), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn mul_add_is_one_unfused_kernel_on_strided_and_broadcast_operands() {
    let mut rng = Rng::fresh();
    let s = stream();
    let (r, c) = (33, 65);
    let x = rng.vec::<f32>(r * c);
    let y = rng.vec::<f32>(c * r);
    let a = up(&s, &[r, c], &x);
    let b = up(&s, &[c, r], &y).transpose(); // strided [r, c]
    let (p, q) = (rng.f32() * 3.0, rng.f32() * 3.0);
    let got = a.mul_add(p, &b, q).unwrap().to_vec().unwrap();
    let want: Vec<f32> = (0..r * c)
        .map(|k| {
            let (i, j) = (k / c, k % c);
            p * x[k] + q * y[j * r + i] // two roundings of products, one of the sum
        })
        .collect();
    assert_eq!(got, want);
    // Broadcast row, integers wrapping, reversed view.
    let xi = rng.vec::<i32>(4 * 7);
    let yi = rng.vec::<i32>(7);
    let ai = up(&s, &[4, 7], &xi).flip(1).unwrap();
    let bi = up(&s, &[7], &yi);
    let got = ai.mul_add(3, &bi, -5).unwrap().to_vec().unwrap();
    let want: Vec<i32> = (0..28)
        .map(|k| {
            let (i, j) = (k / 7, k % 7);
            3i32.wrapping_mul(xi[i * 7 + 6 - j])
                .wrapping_add((-5i32).wrapping_mul(yi[j]))
        })
        .collect();
    assert_eq!(got, want);
    // Shapes that do not broadcast.
    assert!(a.mul_add(1.0, &up(&s, &[3], &[1.0f32; 3]), 1.0).is_err());
}

#[test]
#[ignore = "needs a CUDA device"]
fn multi_take_put_moves_between_many_arrays_with_offsets() {
    let mut rng = Rng::fresh();
    let s = stream();
    let (n, m, dn) = (500, 300, 400);
    let hosts: Vec<Vec<u16>> = (0..11).map(|_| rng.vec::<u16>(n)).collect();
    let arrays: Vec<GpuArray<u16>> = hosts.iter().map(|h| up(&s, &[n], h)).collect();
    let refs: Vec<&GpuArray<u16>> = arrays.iter().collect();
    let offsets: Vec<i64> = (0..11).map(|_| rng.range(0, 100)).collect();
    // Distinct destinations (a permutation prefix), sources in range after the offset.
    let mut perm: Vec<i64> = (0..dn as i64).collect();
    for k in (1..dn).rev() {
        perm.swap(k, rng.below(k as u64 + 1) as usize);
    }
    let dest: Vec<i32> = perm[..m].iter().map(|&v| v as i32).collect();
    let src: Vec<i32> = (0..m)
        .map(|_| rng.range(0, (n - 101) as i64) as i32)
        .collect();
    let (di, si) = (up(&s, &[m], &dest), up(&s, &[m], &src));
    let init = rng.vec::<u16>(dn);
    let outs: Vec<GpuArray<u16>> = (0..11).map(|_| up(&s, &[dn], &init)).collect();
    let orefs: Vec<&GpuArray<u16>> = outs.iter().collect();
    ops::multi_take_put_into(&refs, &di, &si, &orefs, Some(&offsets), TakeMode::Raise).unwrap();
    for k in 0..11 {
        let mut want = init.clone();
        for j in 0..m {
            want[dest[j] as usize] = hosts[k][offsets[k] as usize + src[j] as usize];
        }
        assert_eq!(outs[k].to_vec().unwrap(), want, "array {k}");
    }
    // New outputs (no offsets): only the written elements are defined.
    let fresh = ops::multi_take_put(&refs[..2], &di, &si, &[dn], None, TakeMode::Clip).unwrap();
    for (k, o) in fresh.iter().enumerate() {
        let v = o.to_vec().unwrap();
        for j in 0..m {
            assert_eq!(v[dest[j] as usize], hosts[k][src[j] as usize]);
        }
    }
    // A source index past the end (after its offset) and a bad destination raise.
    let big = up(&s, &[1], &[(n - 1) as i32]);
    let zero = up(&s, &[1], &[0i32]);
    let e = ops::multi_take_put(&refs[1..2], &zero, &big, &[dn], Some(&[1]), TakeMode::Raise)
        .unwrap_err();
    assert!(
        matches!(e, ArrayError::IndexOutOfBounds { index, size, .. } if index == n as i64 && size == n),
        "{e}"
    );
    let far = up(&s, &[1], &[dn as i32]);
    let e = ops::multi_take_put(&refs[..1], &far, &zero, &[dn], None, TakeMode::Raise).unwrap_err();
    assert!(
        matches!(e, ArrayError::IndexOutOfBounds { index, size, .. } if index == dn as i64 && size == dn),
        "{e}"
    );
    // Index arrays of different shapes are refused.
    assert!(ops::multi_take_put(&refs, &di, &big, &[dn], None, TakeMode::Clip).is_err());
}

#[test]
#[ignore = "needs a CUDA device"]
fn reductions_over_ranges_and_slices_match_python_slicing() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 100_003;
    let x = rng.vec::<f64>(n);
    let y = rng.vec::<f64>(n);
    let (gx, gy) = (up(&s, &[n], &x), up(&s, &[n], &y));
    // SAFETY: the map reads element i of each array only.
    let dot = unsafe {
        ReductionKernel::new(
            DType::F64,
            "0",
            "a+b",
            "x[i]*y[i]",
            "const double *x, const double *y",
            "rdot",
        )
    }
    .unwrap();
    let dot_ref = |idx: &[usize]| idx.iter().map(|&k| x[k] * y[k]).sum::<f64>();
    let check = |r: ReductionRange, idx: Vec<usize>| {
        let got = dot
            .call_range::<f64>(&s, &[(&gx).into(), (&gy).into()], r)
            .unwrap()
            .to_scalar()
            .unwrap();
        let want = dot_ref(&idx);
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{r:?}: {got} vs {want}"
        );
    };
    check(
        ReductionRange::Range {
            start: 10,
            stop: 90_000,
            step: 1,
        },
        (10..90_000).collect(),
    );
    check(
        ReductionRange::Range {
            start: 3,
            stop: n,
            step: 7,
        },
        (3..n).step_by(7).collect(),
    );
    check(
        ReductionRange::Range {
            start: 50,
            stop: 50,
            step: 1,
        },
        vec![],
    );
    let sl = |start, stop, step| ReductionRange::Slice { start, stop, step };
    check(sl(Some(-1000), None, 1), (n - 1000..n).collect());
    check(sl(None, None, -3), (0..n).rev().step_by(3).collect());
    check(
        sl(Some(-5), Some(-60_000), -11),
        ((n - 60_000 + 1)..=(n - 5)).rev().step_by(11).collect(),
    );
    check(
        sl(Some(-10_000_000), Some(10_000_000), 2),
        (0..n).step_by(2).collect(),
    );
    // A 2-D contiguous argument is seen flat.
    let g2 = up(&s, &[7, n / 7], &x[..7 * (n / 7)]);
    let h2 = up(&s, &[7, n / 7], &y[..7 * (n / 7)]);
    let got = dot
        .call_range::<f64>(
            &s,
            &[(&g2).into(), (&h2).into()],
            sl(Some(5), Some(5000), 5),
        )
        .unwrap()
        .to_scalar()
        .unwrap();
    let want = dot_ref(&(5..5000).step_by(5).collect::<Vec<_>>());
    assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0));
    // Refused: a range past the end, step 0, `i` outside x[i], non-flat arguments.
    assert!(dot
        .call_range::<f64>(
            &s,
            &[(&gx).into(), (&gy).into()],
            ReductionRange::Range {
                start: 0,
                stop: n + 1,
                step: 1
            }
        )
        .is_err());
    assert!(dot
        .call_range::<f64>(&s, &[(&gx).into(), (&gy).into()], sl(None, None, 0))
        .is_err());
    // SAFETY: reads element i only.
    let weighted = unsafe {
        ReductionKernel::new(DType::F64, "0", "a+b", "x[i]*i", "const double *x", "wsum")
    }
    .unwrap();
    assert!(weighted
        .call_range::<f64>(&s, &[(&gx).into()], sl(None, None, 1))
        .is_err());
    let t = g2.transpose();
    assert!(dot
        .call_range::<f64>(&s, &[(&t).into(), (&t).into()], sl(None, None, 1))
        .is_err());
}

#[test]
#[ignore = "needs a CUDA device"]
fn inclusive_scans_need_no_neutral_element() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 1_000_003; // many tiles, a partial last one
                       // A running max of negative floats: a neutral of 0 would show.
    let x: Vec<f32> = (0..n).map(|_| -1.0 - rng.f32().abs() * 1000.0).collect();
    // SAFETY: fmaxf of the two values only.
    let k = unsafe { InclusiveScanKernel::without_neutral(DType::F32, "fmaxf(a, b)") }.unwrap();
    let mut out = GpuArray::<f32>::empty(&s, &[n]).unwrap();
    k.call(&s, &up(&s, &[n], &x), &mut out).unwrap();
    let mut m = f32::NEG_INFINITY;
    let want: Vec<f32> = x
        .iter()
        .map(|&v| {
            m = m.max(v);
            m
        })
        .collect();
    assert_eq!(out.to_vec().unwrap(), want);
    // Non-commutative, no neutral: "first" gives x[0] everywhere, "last" gives x itself
    // (checks the order of every combination, look-back included). In place and on an
    // unaligned view (the element-wise variant).
    let xi = rng.vec::<i64>(n);
    // SAFETY: returns one of its arguments.
    let first = unsafe { InclusiveScanKernel::without_neutral(DType::I64, "a") }.unwrap();
    let mut g = up(&s, &[n], &xi);
    first.call_in_place(&s, &mut g).unwrap();
    assert!(g.to_vec().unwrap().iter().all(|&v| v == xi[0]));
    // SAFETY: returns one of its arguments.
    let last = unsafe { InclusiveScanKernel::without_neutral(DType::I64, "b") }.unwrap();
    let base = up(&s, &[n], &xi);
    let view = base.slice(&[SliceArg::range(1, n as isize)]).unwrap();
    let mut out = GpuArray::<i64>::empty(&s, &[n - 1]).unwrap();
    last.call(&s, &view, &mut out).unwrap();
    assert_eq!(out.to_vec().unwrap(), xi[1..].to_vec());
    // Wrapping i8 sums and f64 minima, compared exactly.
    let xb = rng.vec::<i8>(70_001);
    // SAFETY: adds the two values.
    let add =
        unsafe { InclusiveScanKernel::without_neutral(DType::I8, "(signed char)(a + b)") }.unwrap();
    let mut gb = up(&s, &[xb.len()], &xb);
    add.call_in_place(&s, &mut gb).unwrap();
    let mut acc = 0i8;
    let want: Vec<i8> = xb
        .iter()
        .map(|&v| {
            acc = acc.wrapping_add(v);
            acc
        })
        .collect();
    assert_eq!(gb.to_vec().unwrap(), want);
    let xd = rng.vec::<f64>(5000);
    // SAFETY: fmin of the two values.
    let min = unsafe { InclusiveScanKernel::without_neutral(DType::F64, "fmin(a, b)") }.unwrap();
    let mut gd = up(&s, &[5000], &xd);
    min.call_in_place(&s, &mut gd).unwrap();
    let mut m = f64::INFINITY;
    let want: Vec<f64> = xd
        .iter()
        .map(|&v| {
            m = m.min(v);
            m
        })
        .collect();
    assert_eq!(gd.to_vec().unwrap(), want);
    // Exclusive scans still need their neutral element.
    // SAFETY: adds the two values (and is refused before compiling).
    let refused = unsafe { rucuda_array::scan::ExclusiveScanKernel::new(DType::F32, "a + b", "") };
    assert!(refused.is_err());
}

#[test]
#[ignore = "needs a CUDA device"]
fn reductions_write_into_allocator_memory() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 12_345;
    let x = rng.vec::<f32>(n);
    let y = rng.vec::<f32>(n);
    let (gx, gy) = (up(&s, &[n], &x), up(&s, &[n], &y));
    let arena = ArenaAllocator::new(4096);
    let mut results = Vec::new();
    for _ in 0..40 {
        results.push(gx.sum_with(&arena).unwrap());
    }
    // 40 results of 4 bytes at 256-byte alignment: 10240 bytes, three 4 KiB chunks.
    assert_eq!(arena.chunks_allocated(), 3);
    let plain = gx.sum().unwrap().to_scalar().unwrap();
    for r in &results {
        assert_eq!(r.to_scalar().unwrap(), plain);
    }
    assert_eq!(
        gx.max_with(&arena).unwrap().to_scalar().unwrap(),
        gx.max().unwrap().to_scalar().unwrap()
    );
    assert_eq!(
        gx.min_with(&StreamOrdered).unwrap().to_scalar().unwrap(),
        gx.min().unwrap().to_scalar().unwrap()
    );
    assert_eq!(
        gx.argmax_with(&arena).unwrap().to_scalar().unwrap(),
        gx.argmax().unwrap().to_scalar().unwrap()
    );
    assert_eq!(
        gx.argmin_with(&arena).unwrap().to_scalar().unwrap(),
        gx.argmin().unwrap().to_scalar().unwrap()
    );
    assert_eq!(
        gx.dot_with(&gy, &arena).unwrap().to_scalar().unwrap(),
        gx.dot(&gy).unwrap().to_scalar().unwrap()
    );
    assert_eq!(
        gx.sum_as_with::<f64>(&arena).unwrap().to_scalar().unwrap(),
        gx.sum_as::<f64>().unwrap().to_scalar().unwrap()
    );
    assert!(gx.any_with(&arena).unwrap().to_scalar().unwrap());
    assert_eq!(
        gx.all_with(&arena).unwrap().to_scalar().unwrap(),
        x.iter().all(|&v| v != 0.0)
    );
    // Results outlive the arena (they keep their chunk alive).
    let kept = gx.sum_with(&arena).unwrap();
    drop(arena);
    drop(results);
    assert_eq!(kept.to_scalar().unwrap(), plain);
    // Empty arrays are refused by max/argmin as in the plain forms.
    let e = GpuArray::<f32>::zeros(&s, &[0]).unwrap();
    assert!(e.max_with(&StreamOrdered).is_err());
}
