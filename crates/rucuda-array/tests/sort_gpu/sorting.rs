//! sort, argsort, sort_with_positions and sort_by_key against stable host sorts.

use crate::common::{stream, Rng};
use crate::keys::{draw, Dist, TestKey, DISTS};
use crate::support::{assert_keys, assert_positions, axis_to_last, last_to_axis, reference};
use rucuda_array::sort::SortOrder;
use rucuda_array::{bf16, f16, Complex, Element, GpuArray, SliceArg};
use rucuda_driver::Stream;

/// The sort's process-wide tuning overrides set for one test, and reset when it ends
/// (also when it fails). Tests that set them take turns: run as threads of one process,
/// one test's overrides would otherwise replace another's halfway through it.
struct Overrides {
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl Overrides {
    fn set(o: rucuda_array::sort::TuningOverrides) -> Overrides {
        static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let turn = TURN
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        rucuda_array::sort::set_tuning_overrides(o);
        Overrides { _turn: turn }
    }
}

impl Drop for Overrides {
    fn drop(&mut self) {
        rucuda_array::sort::set_tuning_overrides(Default::default());
    }
}

fn order(descending: bool) -> SortOrder {
    if descending {
        SortOrder::Descending
    } else {
        SortOrder::Ascending
    }
}

/// Sorts `data` (C order, `shape`) along `axis` on the GPU three ways and checks keys and
/// positions against the host's stable sort.
fn check<T: TestKey + Default>(
    s: &Stream,
    data: &[T],
    shape: &[usize],
    axis: isize,
    descending: bool,
    what: &str,
) {
    let a = GpuArray::from_shape_slice(s, shape, data).unwrap();
    let ax = if axis < 0 {
        (axis + shape.len() as isize) as usize
    } else {
        axis as usize
    };
    let (moved, moved_shape) = axis_to_last(data, shape, ax);
    let row_len = *moved_shape.last().unwrap();
    let (wk, wp) = reference(&moved, row_len, descending);
    let (wk, wp) = (last_to_axis(&wk, shape, ax), last_to_axis(&wp, shape, ax));
    let what = format!(
        "{what} {} shape {shape:?} axis {axis} desc {descending}",
        T::DTYPE
    );
    let (k, p) = a.sort_with_positions(axis, order(descending)).unwrap();
    assert_eq!(k.shape(), shape);
    assert_eq!(p.shape(), shape);
    assert_keys(
        &k.to_vec().unwrap(),
        &wk,
        &format!("{what} (sort_with_positions keys)"),
    );
    assert_positions(&p.to_vec().unwrap(), &wp, &format!("{what} (positions)"));
    let sorted = a.sort_axis(axis, order(descending)).unwrap();
    assert_keys(
        &sorted.to_vec().unwrap(),
        &wk,
        &format!("{what} (sort_axis)"),
    );
}

/// Around the one-block limit (4096), the default onesweep tiles (9728 keys with values,
/// 12288 without), several tiles with a partial last one.
const SIZES_1D: [usize; 12] = [
    1,
    2,
    31,
    256,
    1000,
    4096,
    4097,
    8191,
    12_288,
    24_577,
    70_001,
    (1 << 20) + 3,
];

fn sweep_1d<T: TestKey + Default>(s: &Stream, rng: &mut Rng) {
    for n in SIZES_1D {
        for dist in DISTS {
            if n > 100_000 && !matches!(dist, Dist::Uniform | Dist::FewDistinct) {
                continue;
            }
            let data = draw::<T>(rng, n, dist);
            for descending in [false, true] {
                check(s, &data, &[n], -1, descending, &format!("{dist:?}"));
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn sort_1d_every_key_type_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    sweep_1d::<bool>(&s, &mut rng);
    sweep_1d::<i8>(&s, &mut rng);
    sweep_1d::<i16>(&s, &mut rng);
    sweep_1d::<i32>(&s, &mut rng);
    sweep_1d::<i64>(&s, &mut rng);
    sweep_1d::<u8>(&s, &mut rng);
    sweep_1d::<u16>(&s, &mut rng);
    sweep_1d::<u32>(&s, &mut rng);
    sweep_1d::<u64>(&s, &mut rng);
    sweep_1d::<f16>(&s, &mut rng);
    sweep_1d::<bf16>(&s, &mut rng);
    sweep_1d::<f32>(&s, &mut rng);
    sweep_1d::<f64>(&s, &mut rng);
}

fn rows<T: TestKey + Default>(s: &Stream, rng: &mut Rng) {
    let shapes: [&[usize]; 9] = [
        &[3, 5],
        &[1000, 33],
        &[64, 4096],
        &[7, 4095],
        &[5, 4097],
        &[3, 100_003],
        &[2, 3, 300],
        &[4, 1],
        &[1, 9000],
    ];
    for shape in shapes {
        let n: usize = shape.iter().product();
        for dist in [
            Dist::Uniform,
            Dist::FewDistinct,
            Dist::Special,
            Dist::Reversed,
        ] {
            let data = draw::<T>(rng, n, dist);
            for descending in [false, true] {
                check(s, &data, shape, -1, descending, &format!("rows {dist:?}"));
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn sort_rows_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    rows::<f32>(&s, &mut rng);
    rows::<u32>(&s, &mut rng);
    rows::<i64>(&s, &mut rng);
    rows::<f16>(&s, &mut rng);
    rows::<u8>(&s, &mut rng);
    rows::<f64>(&s, &mut rng);
}

#[test]
#[ignore = "needs a CUDA device"]
fn sort_other_axes_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    for shape in [&[4usize, 5, 300][..], &[5000, 3], &[2, 6000, 2]] {
        let n: usize = shape.iter().product();
        let data = draw::<f32>(&mut rng, n, Dist::Special);
        for axis in 0..shape.len() as isize {
            for descending in [false, true] {
                check(&s, &data, shape, axis, descending, "axis");
            }
        }
        let ints = draw::<i32>(&mut rng, n, Dist::FewDistinct);
        check(&s, &ints, shape, -2, false, "axis -2");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn sort_views_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    let (r, c) = (300usize, 77usize);
    let data = draw::<f32>(&mut rng, r * c, Dist::Uniform);
    let a = GpuArray::from_shape_slice(&s, &[r, c], &data).unwrap();
    // A transposed view: rows of the transpose are columns of `a`.
    let t = a.transpose();
    let (moved, _) = axis_to_last(&data, &[r, c], 0);
    let (want, wp) = reference(&moved, r, false);
    assert_keys(
        &t.sort().unwrap().to_vec().unwrap(),
        &want,
        "transposed view",
    );
    assert_positions(
        &t.argsort().unwrap().to_vec().unwrap(),
        &wp,
        "transposed view argsort",
    );
    // A stepped, reversed slice.
    let v = a
        .slice(&[
            SliceArg::stepped(None, None, 2),
            SliceArg::stepped(None, None, -3),
        ])
        .unwrap();
    let host: Vec<f32> = v.to_vec().unwrap();
    let cols = v.shape()[1];
    let (want, _) = reference(&host, cols, true);
    assert_keys(
        &v.sort_axis(-1, SortOrder::Descending)
            .unwrap()
            .to_vec()
            .unwrap(),
        &want,
        "stepped view",
    );
    // The source is untouched.
    assert_keys(&a.to_vec().unwrap(), &data, "input untouched");
}

fn pairs<K: TestKey + Default, V: Element + Copy + PartialEq + std::fmt::Debug>(
    s: &Stream,
    rng: &mut Rng,
    value: impl Fn(usize) -> V,
) {
    for shape in [
        &[1usize][..],
        &[1000],
        &[4096],
        &[5, 4097],
        &[9728],
        &[2, 19_457],
        &[100_001],
        &[(1 << 20) + 1],
        &[64, 20_000],
    ] {
        let n: usize = shape.iter().product();
        for dist in [Dist::FewDistinct, Dist::Uniform, Dist::Special] {
            let keys = draw::<K>(rng, n, dist);
            let values: Vec<V> = (0..n).map(&value).collect();
            let row = *shape.last().unwrap();
            for descending in [false, true] {
                let (wk, wp) = reference(&keys, row, descending);
                let wv: Vec<V> = wp
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| values[i / row * row + p as usize])
                    .collect();
                let gk = GpuArray::from_shape_slice(s, shape, &keys).unwrap();
                let gv = GpuArray::from_shape_slice(s, shape, &values).unwrap();
                let (k, v) = gk.sort_by_key(&gv, -1, order(descending)).unwrap();
                let what = format!(
                    "pairs {} -> {} {shape:?} {dist:?} desc {descending}",
                    K::DTYPE,
                    V::DTYPE
                );
                assert_keys(&k.to_vec().unwrap(), &wk, &what);
                let got = v.to_vec().unwrap();
                if let Some(i) = (0..n).find(|&i| got[i] != wv[i]) {
                    panic!("{what}: value {i}: got {:?}, want {:?}", got[i], wv[i]);
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn sort_by_key_pairs_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    pairs::<u32, u32>(&s, &mut rng, |i| i as u32 ^ 0x5a5a);
    pairs::<f32, u32>(&s, &mut rng, |i| i as u32);
    pairs::<f32, f64>(&s, &mut rng, |i| i as f64 * 0.5);
    pairs::<i64, i64>(&s, &mut rng, |i| -(i as i64));
    pairs::<u8, u16>(&s, &mut rng, |i| i as u16);
    pairs::<f16, u8>(&s, &mut rng, |i| i as u8);
    pairs::<i16, f32>(&s, &mut rng, |i| i as f32);
    pairs::<u64, Complex<f32>>(&s, &mut rng, |i| Complex::new(i as f32, -(i as f32)));
}

#[test]
#[ignore = "needs a CUDA device"]
fn sort_edge_cases_and_refusals_gpu() {
    let s = stream();
    // Empty arrays of several shapes.
    for shape in [&[0usize][..], &[3, 0], &[0, 5]] {
        let a = GpuArray::<f32>::zeros(&s, shape).unwrap();
        assert_eq!(a.sort().unwrap().shape(), shape);
        assert_eq!(a.argsort().unwrap().shape(), shape);
    }
    // One element.
    let one = GpuArray::from_slice(&s, &[f32::NAN]).unwrap();
    assert!(one.sort().unwrap().to_vec().unwrap()[0].is_nan());
    assert_eq!(one.argsort().unwrap().to_vec().unwrap(), vec![0]);
    // Complex keys, 0-d arrays, bad axes, mismatched values, 16-byte values.
    let c = GpuArray::from_slice(&s, &[Complex::new(1.0f32, 0.0)]).unwrap();
    assert!(c.sort().is_err());
    let z = GpuArray::from_shape_slice(&s, &[], &[1.0f32]).unwrap();
    assert!(z.sort().is_err());
    let a = GpuArray::from_shape_slice(&s, &[2, 2], &[1u32, 2, 3, 4]).unwrap();
    assert!(a.sort_axis(2, SortOrder::Ascending).is_err());
    assert!(a.sort_axis(-3, SortOrder::Ascending).is_err());
    let v = GpuArray::from_slice(&s, &[1u32, 2, 3]).unwrap();
    assert!(a.sort_by_key(&v, -1, SortOrder::Ascending).is_err());
    let big = GpuArray::from_shape_slice(&s, &[2, 2], &[Complex::new(0.0f64, 0.0); 4]).unwrap();
    assert!(a.sort_by_key(&big, -1, SortOrder::Ascending).is_err());
}

/// More than 2^31 keys in one row: chunks of the onesweep passes (2^30 each) and 64-bit
/// offsets. `RUCUDA_TEST_SORT_HUGE=1` (12 GiB of device memory, a minute of host checks).
#[test]
#[ignore = "needs a CUDA device"]
fn sort_more_than_2_pow_31_gpu() {
    if std::env::var("RUCUDA_TEST_SORT_HUGE").map_or(true, |v| v != "1") {
        rucuda_testkit::skip("sorts 2^31 + 4099 elements (4 GiB, a minute of host time): set RUCUDA_TEST_SORT_HUGE=1");
        return;
    }
    let s = stream();
    let mut rng = Rng::fresh();
    let n = (1usize << 31) + 4099;
    let data: Vec<u16> = (0..n).map(|_| rng.next_u64() as u16).collect();
    let mut counts = vec![0u64; 1 << 16];
    for &x in &data {
        counts[x as usize] += 1;
    }
    let a = GpuArray::from_slice(&s, &data).unwrap();
    drop(data);
    let sorted = a.sort().unwrap().to_vec().unwrap();
    assert_eq!(sorted.len(), n);
    let mut got = vec![0u64; 1 << 16];
    for w in sorted.windows(2) {
        assert!(w[0] <= w[1], "not sorted");
    }
    for &x in &sorted {
        got[x as usize] += 1;
    }
    assert_eq!(got, counts, "not a permutation");
}

#[test]
#[ignore = "needs a CUDA device"]
fn sort_by_key_expression_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    for n in [1usize, 1000, 5000, 300_001] {
        let data = draw::<f32>(&mut rng, n, Dist::Uniform);
        let a = GpuArray::from_slice(&s, &data).unwrap();
        // SAFETY: the expression reads only `x`.
        let (got, keys) =
            unsafe { a.sort_by_key_expr::<f32>("fabsf(x)", -1, SortOrder::Descending) }.unwrap();
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by(|&i, &j| data[j].abs().total_cmp(&data[i].abs()));
        let want: Vec<f32> = idx.iter().map(|&i| data[i]).collect();
        let want_keys: Vec<f32> = idx.iter().map(|&i| data[i].abs()).collect();
        assert_keys(&got.to_vec().unwrap(), &want, &format!("abs key n {n}"));
        assert_keys(
            &keys.to_vec().unwrap(),
            &want_keys,
            &format!("abs keys n {n}"),
        );
        let ints = draw::<i32>(&mut rng, n, Dist::Uniform);
        let b = GpuArray::from_shape_slice(&s, &[1, n], &ints).unwrap();
        // SAFETY: the expression reads only `x`.
        let (got, _) = unsafe {
            b.sort_by_key_expr::<u8>("(unsigned char)(x & 0xff)", -1, SortOrder::Ascending)
        }
        .unwrap();
        let mut want = ints.clone();
        want.sort_by_key(|x| (*x & 0xff) as u8);
        assert_keys(
            &got.to_vec().unwrap(),
            &want,
            &format!("low byte key n {n}"),
        );
    }
}

/// 4-byte pairs take 19 keys a thread on fast memory and 16 on slower memory
/// (`SortTuning::for_device`): both tiles sort exactly and stably on any device, around
/// their tile sizes (9728 and 8192).
#[test]
#[ignore = "needs a CUDA device"]
fn pairs_with_either_default_tile_gpu() {
    use rucuda_array::sort::TuningOverrides;
    let s = stream();
    let mut rng = Rng::fresh();
    for items in [16u32, 19] {
        let _overrides = Overrides::set(TuningOverrides {
            items: Some(items),
            ..Default::default()
        });
        let tile = 512 * items as usize;
        for n in [tile - 1, tile, tile + 1, 3 * tile + 7, (1 << 20) + 5] {
            let keys = draw::<u32>(&mut rng, n, Dist::FewDistinct);
            let values: Vec<u32> = (0..n as u32).collect();
            for order in [SortOrder::Ascending, SortOrder::Descending] {
                let (wk, wp) = reference(&keys, n, order == SortOrder::Descending);
                let gk = GpuArray::from_slice(&s, &keys).unwrap();
                let gv = GpuArray::from_slice(&s, &values).unwrap();
                let (k, v) = gk.sort_by_key(&gv, -1, order).unwrap();
                let what = format!("{items} keys a thread, n={n}, {order:?}");
                assert_keys(&k.to_vec().unwrap(), &wk, &what);
                let want: Vec<u32> = wp.iter().map(|&p| p as u32).collect();
                assert_eq!(v.to_vec().unwrap(), want, "{what}: values (stable)");
            }
        }
    }
}

/// Many rows longer than one block's share go in batches of rows (a small table budget
/// here); the results do not depend on the batching.
#[test]
#[ignore = "needs a CUDA device"]
fn sort_rows_in_batches_gpu() {
    use rucuda_array::sort::TuningOverrides;
    let _overrides = Overrides::set(TuningOverrides {
        table_budget: Some(1 << 20),
        ..Default::default()
    });
    let s = stream();
    let mut rng = Rng::fresh();
    let shape = [300usize, 5003];
    let n = shape[0] * shape[1];
    let data = draw::<f32>(&mut rng, n, Dist::Special);
    check(&s, &data, &shape, -1, false, "batched rows");
    let keys = draw::<u16>(&mut rng, n, Dist::FewDistinct);
    let values: Vec<u32> = (0..n as u32).collect();
    let (wk, wp) = reference(&keys, shape[1], true);
    let gk = GpuArray::from_shape_slice(&s, &shape, &keys).unwrap();
    let gv = GpuArray::from_shape_slice(&s, &shape, &values).unwrap();
    let (k, v) = gk.sort_by_key(&gv, -1, SortOrder::Descending).unwrap();
    assert_keys(&k.to_vec().unwrap(), &wk, "batched pairs keys");
    let want: Vec<u32> = wp
        .iter()
        .enumerate()
        .map(|(i, &p)| (i / shape[1] * shape[1]) as u32 + p as u32)
        .collect();
    assert_eq!(v.to_vec().unwrap(), want, "batched pairs values");
}

/// The ballot way of finding a digit's lanes (`PeerMatch::Ballots`, a tuning option)
/// ranks exactly as `__match_any_sync` does: whole arrays (onesweep, with a partial last
/// tile whose padding digit needs the ninth bit), short rows (one block each), pairs
/// (stability), descending.
#[test]
#[ignore = "needs a CUDA device"]
fn ballots_rank_like_match_any_gpu() {
    use rucuda_array::sort::{PeerMatch, TuningOverrides};
    let _overrides = Overrides::set(TuningOverrides {
        peer_match: Some(PeerMatch::Ballots),
        ..Default::default()
    });
    let s = stream();
    let mut rng = Rng::fresh();
    let n = (1usize << 20) + 4099;
    let data = draw::<f32>(&mut rng, n, Dist::Special);
    check(&s, &data, &[n], -1, false, "ballots: f32 onesweep");
    check(
        &s,
        &data,
        &[n],
        -1,
        true,
        "ballots: f32 onesweep descending",
    );
    let rows = draw::<u32>(&mut rng, 64 * 1000, Dist::FewDistinct);
    check(
        &s,
        &rows,
        &[64, 1000],
        -1,
        false,
        "ballots: u32 rows, one block each",
    );
    let keys = draw::<u16>(&mut rng, n, Dist::FewDistinct);
    let values: Vec<u32> = (0..n as u32).collect();
    let (wk, wp) = reference(&keys, n, false);
    let gk = GpuArray::from_slice(&s, &keys).unwrap();
    let gv = GpuArray::from_slice(&s, &values).unwrap();
    let (k, v) = gk.sort_by_key(&gv, -1, SortOrder::Ascending).unwrap();
    assert_keys(&k.to_vec().unwrap(), &wk, "ballots: pairs keys");
    let want: Vec<u32> = wp.iter().map(|&p| p as u32).collect();
    assert_eq!(v.to_vec().unwrap(), want, "ballots: pairs values (stable)");
}

/// The merge sort by a comparison: complex numbers lexicographically, integers by their
/// low byte (ties keep their order), rows and another axis.
#[test]
#[ignore = "needs a CUDA device"]
fn sort_by_less_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    for shape in [
        &[1usize][..],
        &[2],
        &[1000],
        &[3, 4097],
        &[70_001],
        &[5, 3, 33],
    ] {
        let n: usize = shape.iter().product();
        let row = *shape.last().unwrap();
        let z: Vec<Complex<f32>> = (0..n)
            .map(|_| Complex::new((rng.next_u64() % 7) as f32, (rng.next_u64() % 1000) as f32))
            .collect();
        let a = GpuArray::from_shape_slice(&s, shape, &z).unwrap();
        // SAFETY: the comparison reads only `a` and `b`.
        let (got, pos) =
            unsafe { a.sort_by_less("a.re < b.re || (a.re == b.re && a.im < b.im)", -1) }.unwrap();
        let mut want = Vec::new();
        let mut want_pos = Vec::new();
        for r in z.chunks(row) {
            let mut idx: Vec<usize> = (0..r.len()).collect();
            idx.sort_by(|&i, &j| (r[i].re, r[i].im).partial_cmp(&(r[j].re, r[j].im)).unwrap());
            want.extend(idx.iter().map(|&i| r[i]));
            want_pos.extend(idx.iter().map(|&i| i as i64));
        }
        assert_eq!(got.to_vec().unwrap(), want, "complex {shape:?}");
        assert_positions(
            &pos.to_vec().unwrap(),
            &want_pos,
            &format!("complex positions {shape:?}"),
        );
        let ints = draw::<i64>(&mut rng, n, Dist::Uniform);
        let b = GpuArray::from_shape_slice(&s, shape, &ints).unwrap();
        // SAFETY: the comparison reads only `a` and `b`.
        let (got, _) = unsafe { b.sort_by_less("(a & 0xff) < (b & 0xff)", -1) }.unwrap();
        let mut want = Vec::new();
        for r in ints.chunks(row) {
            let mut v = r.to_vec();
            v.sort_by_key(|x| x & 0xff);
            want.extend(v);
        }
        assert_eq!(got.to_vec().unwrap(), want, "low byte {shape:?}");
    }
    // Along axis 0, against the radix sort.
    let data = draw::<f32>(&mut rng, 500 * 3, Dist::FewDistinct);
    let a = GpuArray::from_shape_slice(&s, &[500, 3], &data).unwrap();
    // SAFETY: the comparison reads only `a` and `b`.
    let (m, mp) = unsafe { a.sort_by_less("a < b", 0) }.unwrap();
    let (r, rp) = a.sort_with_positions(0, SortOrder::Ascending).unwrap();
    assert_keys(
        &m.to_vec().unwrap(),
        &r.to_vec().unwrap(),
        "merge vs radix, axis 0",
    );
    assert_positions(
        &mp.to_vec().unwrap(),
        &rp.to_vec().unwrap(),
        "merge vs radix positions",
    );
}
