//! searchsorted, unique (all outputs), run-length encoding, histogram and bincount
//! against host references.

use std::cmp::Ordering;

use crate::common::{stream, Rng};
use crate::keys::{cmp_value, draw, Dist, TestKey};
use crate::support::{assert_keys, assert_positions, reference};
use rucuda_array::sort::Side;
use rucuda_array::{f16, GpuArray};
use rucuda_driver::Stream;

fn searchsorted_case<T: TestKey + Default>(
    s: &Stream,
    rng: &mut Rng,
    n: usize,
    m: usize,
    dist: Dist,
) {
    let (sorted, _) = reference(&draw::<T>(rng, n, dist), n.max(1), false);
    let mut queries = draw::<T>(rng, m, Dist::Special);
    // Half the queries hit existing keys.
    for q in queries.iter_mut().step_by(2) {
        if n > 0 {
            *q = sorted[(rng.next_u64() % n as u64) as usize];
        }
    }
    let a = GpuArray::from_slice(s, &sorted).unwrap();
    let q = GpuArray::from_shape_slice(s, &[m / 2, 2], &queries[..m / 2 * 2]).unwrap();
    for side in [Side::Left, Side::Right] {
        let got = a.searchsorted(&q, side).unwrap();
        assert_eq!(got.shape(), &[m / 2, 2]);
        let want: Vec<i64> = queries[..m / 2 * 2]
            .iter()
            .map(|x| {
                sorted.partition_point(|y| match side {
                    Side::Left => cmp_value(y, x) == Ordering::Less,
                    Side::Right => cmp_value(y, x) != Ordering::Greater,
                }) as i64
            })
            .collect();
        assert_positions(
            &got.to_vec().unwrap(),
            &want,
            &format!("searchsorted {} n {n} {side:?}", T::DTYPE),
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn searchsorted_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    for (n, m) in [
        (1usize, 10usize),
        (1000, 1000),
        (100_003, 50_000),
        (7, 100_000),
    ] {
        for dist in [Dist::Uniform, Dist::FewDistinct, Dist::Special] {
            searchsorted_case::<f32>(&s, &mut rng, n, m, dist);
            searchsorted_case::<i64>(&s, &mut rng, n, m, dist);
            searchsorted_case::<u16>(&s, &mut rng, n, m, dist);
            searchsorted_case::<f16>(&s, &mut rng, n, m, dist);
        }
    }
}

/// Runs of equal consecutive keys on the host (-0.0 equal to +0.0): values and lengths.
fn host_runs<T: TestKey>(data: &[T]) -> (Vec<T>, Vec<i64>) {
    let mut v: Vec<T> = Vec::new();
    let mut c: Vec<i64> = Vec::new();
    for x in data {
        match v.last() {
            Some(l) if cmp_value(l, x) == Ordering::Equal => *c.last_mut().unwrap() += 1,
            _ => {
                v.push(*x);
                c.push(1);
            }
        }
    }
    (v, c)
}

fn unique_case<T: TestKey + Default>(s: &Stream, rng: &mut Rng, n: usize, dist: Dist) {
    let data = draw::<T>(rng, n, dist);
    let (sorted, perm) = reference(&data, n.max(1), false);
    let (values, counts) = host_runs(&sorted);
    let mut first = Vec::new();
    let mut inverse = vec![0i64; n];
    let mut at = 0usize;
    for (g, &c) in counts.iter().enumerate() {
        first.push(perm[at]);
        for p in &perm[at..at + c as usize] {
            inverse[*p as usize] = g as i64;
        }
        at += c as usize;
    }
    let a = GpuArray::from_shape_slice(s, &[n / 2, 2], &data[..n / 2 * 2]).unwrap();
    let what = format!("unique {} n {n} {dist:?}", T::DTYPE);
    if n % 2 == 0 {
        let u = a.unique_all().unwrap();
        assert_keys(&u.values.to_vec().unwrap(), &values, &what);
        assert_positions(
            &u.counts.to_vec().unwrap(),
            &counts,
            &format!("{what} counts"),
        );
        assert_positions(
            &u.first_indices.to_vec().unwrap(),
            &first,
            &format!("{what} first"),
        );
        assert_positions(
            &u.inverse.to_vec().unwrap(),
            &inverse,
            &format!("{what} inverse"),
        );
        assert_keys(&a.unique().unwrap().to_vec().unwrap(), &values, &what);
    }
    let flat = GpuArray::from_slice(s, &data).unwrap();
    let (rv, rc) = flat.run_length_encode().unwrap();
    let (wv, wc) = host_runs(&data);
    assert_keys(&rv.to_vec().unwrap(), &wv, &format!("rle {what}"));
    assert_positions(&rc.to_vec().unwrap(), &wc, &format!("rle {what} lengths"));
}

#[test]
#[ignore = "needs a CUDA device"]
fn unique_and_run_length_encode_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    for n in [2usize, 1000, 4096, 100_000, (1 << 20) + 2] {
        for dist in [
            Dist::Uniform,
            Dist::FewDistinct,
            Dist::AllEqual,
            Dist::Special,
            Dist::Sorted,
        ] {
            unique_case::<f32>(&s, &mut rng, n, dist);
            unique_case::<i32>(&s, &mut rng, n, dist);
            unique_case::<u8>(&s, &mut rng, n, dist);
        }
    }
    let e = GpuArray::<f32>::zeros(&s, &[0]).unwrap();
    assert_eq!(e.unique().unwrap().len(), 0);
    assert_eq!(e.run_length_encode().unwrap().0.len(), 0);
}

/// NumPy's even-bin histogram on the host, in f64 (the library's rule).
fn host_histogram(x: &[f64], bins: usize, lo: f64, hi: f64) -> Vec<i64> {
    let step = (hi - lo) / bins as f64;
    let mut edges: Vec<f64> = (0..=bins).map(|i| i as f64 * step + lo).collect();
    edges[bins] = hi;
    let mut c = vec![0i64; bins];
    for &v in x {
        if !(v >= lo && v <= hi) {
            continue;
        }
        let mut b = ((v - lo) / (hi - lo) * bins as f64) as i64;
        b = b.clamp(0, bins as i64 - 1);
        if v < edges[b as usize] {
            b -= 1;
        } else if b != bins as i64 - 1 && v >= edges[b as usize + 1] {
            b += 1;
        }
        if (0..bins as i64).contains(&b) {
            c[b as usize] += 1;
        }
    }
    c
}

#[test]
#[ignore = "needs a CUDA device"]
fn histogram_and_bincount_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    for n in [1usize, 1000, 100_003, (1 << 22) + 5] {
        // u8 into 256 and 7 bins.
        let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
        let a = GpuArray::from_slice(&s, &bytes).unwrap();
        let xs: Vec<f64> = bytes.iter().map(|&b| b as f64).collect();
        for (bins, range) in [
            (256usize, (0.0, 256.0)),
            (7, (10.0, 200.0)),
            (20_000, (0.0, 255.0)),
        ] {
            let (c, edges) = a.histogram(bins, Some(range)).unwrap();
            assert_eq!(edges.len(), bins + 1);
            assert_positions(
                &c.to_vec().unwrap(),
                &host_histogram(&xs, bins, range.0, range.1),
                &format!("u8 n {n} bins {bins}"),
            );
        }
        let mut want = vec![0i64; 256];
        for &b in &bytes {
            want[b as usize] += 1;
        }
        let got = a.bincount(300).unwrap().to_vec().unwrap();
        assert_eq!(got.len(), 300);
        assert_positions(&got[..256], &want, "bincount");
        assert!(got[256..].iter().all(|&c| c == 0));
        // f32 with specials, automatic range and explicit edges.
        let f = crate::keys::draw::<f32>(&mut rng, n, Dist::Uniform);
        let g = GpuArray::from_slice(&s, &f).unwrap();
        let fx: Vec<f64> = f.iter().map(|&v| v as f64).collect();
        let (lo, hi) = fx
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
        let (lo, hi) = if lo == hi {
            (lo - 0.5, hi + 0.5)
        } else {
            (lo, hi)
        };
        let (c, _) = g.histogram(10, None).unwrap();
        assert_positions(
            &c.to_vec().unwrap(),
            &host_histogram(&fx, 10, lo, hi),
            "f32 auto range",
        );
        let edges = [-100.0, -50.0, -1.5, 0.0, 3.0, 99.0];
        let got = g.histogram_edges(&edges).unwrap().to_vec().unwrap();
        let mut want = vec![0i64; 5];
        for &v in &fx {
            if v >= edges[0] && v <= edges[5] {
                let b = edges.partition_point(|&e| e <= v).saturating_sub(1).min(4);
                want[b] += 1;
            }
        }
        assert_positions(&got, &want, "f32 explicit edges");
    }
    // NaNs are not counted; refusals.
    let g = GpuArray::from_slice(&s, &[f32::NAN, 1.0, 2.0]).unwrap();
    assert_eq!(
        g.histogram(2, Some((0.0, 2.0)))
            .unwrap()
            .0
            .to_vec()
            .unwrap(),
        vec![0, 2]
    );
    assert!(g.histogram(0, Some((0.0, 1.0))).is_err());
    assert!(g.bincount(0).is_err());
    let neg = GpuArray::from_slice(&s, &[1i32, -1]).unwrap();
    assert!(neg.bincount(0).is_err());
    assert!(g.histogram_edges(&[1.0, 0.0]).is_err());
}

/// f32 values that put the float estimate to the test: every edge of `bins` even bins
/// over [lo, hi] (NumPy's linspace, as the library computes it), the floats just below
/// and above each, the range's ends and beyond, NaN and infinities, then uniform values.
fn edge_heavy_f32(rng: &mut Rng, n: usize, bins: usize, lo: f64, hi: f64) -> Vec<f32> {
    let step = (hi - lo) / bins as f64;
    let mut v = Vec::with_capacity(n);
    for k in 0..=bins {
        let e = if k == bins { hi } else { k as f64 * step + lo } as f32;
        v.extend([
            e,
            f32::from_bits(e.to_bits().wrapping_sub(1)),
            f32::from_bits(e.to_bits() + 1),
        ]);
    }
    v.extend([
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        lo as f32 - 1.0,
        hi as f32 + 1.0,
    ]);
    while v.len() < n {
        let u = (rng.next_u64() >> 40) as f64 / (1u64 << 24) as f64;
        v.push((lo + (hi - lo) * (u * 1.2 - 0.1)) as f32);
    }
    v
}

#[test]
#[ignore = "needs a CUDA device"]
fn histogram_lanes_variant_matches_numpy_gpu() {
    use rucuda_array::sort::{set_histogram_variant, HistogramVariant};
    let s = stream();
    let mut rng = Rng::fresh();
    for n in [1000usize, 100_003, (1 << 22) + 5] {
        let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
        let a = GpuArray::from_slice(&s, &bytes).unwrap();
        let xs: Vec<f64> = bytes.iter().map(|&b| b as f64).collect();
        let floats = edge_heavy_f32(&mut rng, n, 256, 0.0, 1.0);
        let g = GpuArray::from_slice(&s, &floats).unwrap();
        let fx: Vec<f64> = floats.iter().map(|&v| v as f64).collect();
        let odd = edge_heavy_f32(&mut rng, n, 100, -3.3, 7.1);
        let h = GpuArray::from_slice(&s, &odd).unwrap();
        let hx: Vec<f64> = odd.iter().map(|&v| v as f64).collect();
        let halves: Vec<f16> = floats.iter().map(|&v| f16::from_f32(v)).collect();
        let hh = GpuArray::from_slice(&s, &halves).unwrap();
        let hhx: Vec<f64> = halves.iter().map(|v| v.to_f64()).collect();
        let shorts: Vec<i16> = (0..n)
            .map(|_| (rng.next_u64() % 601) as i16 - 300)
            .collect();
        let s16 = GpuArray::from_slice(&s, &shorts).unwrap();
        let s16x: Vec<f64> = shorts.iter().map(|&v| v as f64).collect();
        let signed_bytes: Vec<i8> = bytes.iter().map(|&b| b as i8).collect();
        let s8 = GpuArray::from_slice(&s, &signed_bytes).unwrap();
        let s8x: Vec<f64> = signed_bytes.iter().map(|&v| v as f64).collect();
        let mut results = Vec::new();
        for variant in [HistogramVariant::Lanes, HistogramVariant::Classic] {
            set_histogram_variant(Some(variant));
            let what = |case: &str| format!("{variant:?} n {n} {case}");
            let mut got = Vec::new();
            // Modes 3 (integers, integral bins; width 1 takes the lanes kernels' 32-bit
            // path, values outside included) and 0 (integers, other bins).
            for (bins, range) in [
                (256usize, (0.0, 256.0)),
                (190, (10.0, 200.0)),
                (7, (10.0, 200.0)),
            ] {
                let c = a.histogram(bins, Some(range)).unwrap().0.to_vec().unwrap();
                assert_positions(
                    &c,
                    &host_histogram(&xs, bins, range.0, range.1),
                    &what("u8"),
                );
                got.push(c);
            }
            // 16-bit integers around zero, width 1, values outside on both sides.
            let c = s16
                .histogram(200, Some((-100.0, 100.0)))
                .unwrap()
                .0
                .to_vec()
                .unwrap();
            assert_positions(
                &c,
                &host_histogram(&s16x, 200, -100.0, 100.0),
                &what("i16 [-100, 100]"),
            );
            got.push(c);
            // Signed bytes over their whole range, each value its own bin (the lanes
            // kernels' path with no test), and a range that leaves values out.
            for (bins, range) in [(256usize, (-128.0, 128.0)), (256, (-100.0, 156.0))] {
                let c = s8.histogram(bins, Some(range)).unwrap().0.to_vec().unwrap();
                assert_positions(
                    &c,
                    &host_histogram(&s8x, bins, range.0, range.1),
                    &what("i8"),
                );
                got.push(c);
            }
            // Mode 0 on floats: the float estimate, edges and specials.
            for (arr, x, bins, range, case) in [
                (&g, &fx, 256, (0.0, 1.0), "f32 [0, 1]"),
                (&h, &hx, 100, (-3.3, 7.1), "f32 [-3.3, 7.1]"),
            ] {
                let c = arr
                    .histogram(bins, Some(range))
                    .unwrap()
                    .0
                    .to_vec()
                    .unwrap();
                assert_positions(&c, &host_histogram(x, bins, range.0, range.1), &what(case));
                got.push(c);
            }
            let c = hh
                .histogram(256, Some((0.0, 1.0)))
                .unwrap()
                .0
                .to_vec()
                .unwrap();
            assert_positions(&c, &host_histogram(&hhx, 256, 0.0, 1.0), &what("f16"));
            got.push(c);
            // Mode 1 (explicit edges) and mode 2 (bincount).
            let edges = [-1.0, 0.0, 0.25, 0.5, 0.9, 1.0];
            let c = g.histogram_edges(&edges).unwrap().to_vec().unwrap();
            let mut want = vec![0i64; 5];
            for &v in &fx {
                if v >= edges[0] && v <= edges[5] {
                    want[edges.partition_point(|&e| e <= v).saturating_sub(1).min(4)] += 1;
                }
            }
            assert_positions(&c, &want, &what("explicit edges"));
            got.push(c);
            let c = a.bincount(300).unwrap().to_vec().unwrap();
            let mut want = vec![0i64; 300];
            for &b in &bytes {
                want[b as usize] += 1;
            }
            assert_positions(&c, &want, &what("bincount"));
            got.push(c);
            results.push(got);
        }
        set_histogram_variant(None);
        assert_eq!(results[0], results[1], "n {n}: lanes and classic differ");
    }
}
