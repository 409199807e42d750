//! One-pass compaction: select_flagged, partition_flagged, select_if, partition_if.

use crate::common::{stream, RandomElement, RandomVec, Rng};
use crate::keys::{draw, Dist};
use crate::support::assert_keys;
use rucuda_array::{Complex, GpuArray, SliceArg};
use rucuda_driver::Stream;

#[test]
#[ignore = "needs a CUDA device"]
fn select_and_partition_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    for n in [1usize, 31, 4095, 4096, 4097, 100_003, (1 << 22) + 9] {
        for keep_every in [1u64, 2, 3, 1000, u64::MAX] {
            let data = draw::<f32>(&mut rng, n, Dist::Uniform);
            let flags: Vec<bool> = (0..n)
                .map(|_| keep_every != u64::MAX && rng.next_u64() % keep_every == 0)
                .collect();
            let a = GpuArray::from_shape_slice(&s, &[1, n], &data).unwrap();
            let m = GpuArray::from_shape_slice(&s, &[1, n], &flags).unwrap();
            let want: Vec<f32> = data
                .iter()
                .zip(&flags)
                .filter(|(_, f)| **f)
                .map(|(x, _)| *x)
                .collect();
            let rest: Vec<f32> = data
                .iter()
                .zip(&flags)
                .filter(|(_, f)| !**f)
                .map(|(x, _)| *x)
                .collect();
            let what = format!("n {n} every {keep_every}");
            assert_keys(
                &a.select_flagged(&m).unwrap().to_vec().unwrap(),
                &want,
                &what,
            );
            let (p, q) = a.partition_flagged(&m).unwrap();
            assert_keys(
                &p.to_vec().unwrap(),
                &want,
                &format!("{what} partition kept"),
            );
            assert_keys(
                &q.to_vec().unwrap(),
                &rest,
                &format!("{what} partition rest"),
            );
            // SAFETY: the predicate reads only `x`.
            let big = unsafe { a.select_if("x > 50.0f") }.unwrap();
            let want_big: Vec<f32> = data.iter().copied().filter(|x| *x > 50.0).collect();
            assert_keys(
                &big.to_vec().unwrap(),
                &want_big,
                &format!("{what} select_if"),
            );
            // SAFETY: the predicate reads only `x`.
            let (lo, hi) = unsafe { a.partition_if("x < 0.0f") }.unwrap();
            assert_eq!(lo.len() + hi.len(), n);
        }
    }
    // A strided view, other element and flag types.
    let data: Vec<i64> = (0..10_000).collect();
    let a = GpuArray::from_slice(&s, &data).unwrap();
    let v = a.slice(&[SliceArg::stepped(None, None, -3)]).unwrap();
    let host = v.to_vec().unwrap();
    let flags: Vec<f32> = host
        .iter()
        .map(|x| if x % 7 == 0 { 2.5 } else { 0.0 })
        .collect();
    let m = GpuArray::from_slice(&s, &flags).unwrap();
    let got = v.select_flagged(&m).unwrap().to_vec().unwrap();
    let want: Vec<i64> = host.iter().copied().filter(|x| x % 7 == 0).collect();
    assert_eq!(got, want);
    let c: Vec<Complex<f64>> = (0..5000)
        .map(|i| Complex::new(i as f64, -(i as f64)))
        .collect();
    let ca = GpuArray::from_slice(&s, &c).unwrap();
    let cm =
        GpuArray::from_slice(&s, &(0..5000).map(|i| (i % 2) as u8).collect::<Vec<_>>()).unwrap();
    let got = ca.select_flagged(&cm).unwrap().to_vec().unwrap();
    assert_eq!(
        got,
        c.iter().copied().skip(1).step_by(2).collect::<Vec<_>>()
    );
    // Refusals and empty input.
    assert!(a.select_flagged(&m).is_err());
    let e = GpuArray::<f32>::zeros(&s, &[0]).unwrap();
    let em = GpuArray::<bool>::zeros(&s, &[0]).unwrap();
    assert_eq!(e.select_flagged(&em).unwrap().len(), 0);
}

/// Selects and partitions `n` random `T` (and views of them starting 1 and 3 elements
/// in: inputs not aligned to the kernel's vectors) by random flags, against the host.
fn check_typed<T: RandomElement + PartialEq + std::fmt::Debug>(
    s: &Stream,
    rng: &mut Rng,
    n: usize,
) {
    let data: Vec<T> = rng.vec(n + 3);
    let all = GpuArray::from_slice(s, &data).unwrap();
    for skip in [0usize, 1, 3] {
        let host = &data[skip..skip + n];
        let a = all
            .slice(&[SliceArg::range(skip as isize, (skip + n) as isize)])
            .unwrap();
        let keep_every = 1 + rng.next_u64() % 4;
        let flags: Vec<u8> = (0..n)
            .map(|_| u8::from(rng.next_u64() % keep_every == 0))
            .collect();
        let m = GpuArray::from_slice(s, &flags).unwrap();
        let want: Vec<T> = host
            .iter()
            .zip(&flags)
            .filter(|(_, f)| **f != 0)
            .map(|(x, _)| *x)
            .collect();
        let rest: Vec<T> = host
            .iter()
            .zip(&flags)
            .filter(|(_, f)| **f == 0)
            .map(|(x, _)| *x)
            .collect();
        let what = format!("{} n {n} skip {skip}", T::DTYPE);
        assert_eq!(
            a.select_flagged(&m).unwrap().to_vec().unwrap(),
            want,
            "{what}"
        );
        let (p, q) = a.partition_flagged(&m).unwrap();
        assert_eq!(p.to_vec().unwrap(), want, "{what} partition kept");
        assert_eq!(q.to_vec().unwrap(), rest, "{what} partition rest");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn select_every_element_size_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    // Sizes around the tiles of 1-, 2-, 4-, 8- and 16-byte elements (4096, 4096, 4096,
    // 2048, 1024 elements) and several tiles with a partial last one.
    for n in [1usize, 5, 1023, 1024, 2049, 4096, 8191, 70_001] {
        check_typed::<u8>(&s, &mut rng, n);
        check_typed::<i16>(&s, &mut rng, n);
        check_typed::<i32>(&s, &mut rng, n);
        check_typed::<f64>(&s, &mut rng, n);
        check_typed::<Complex<f64>>(&s, &mut rng, n);
    }
}
