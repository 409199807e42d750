//! topk against the host: stable sort of each row, first k.

use crate::common::{stream, Rng};
use crate::keys::{draw, Dist, TestKey};
use crate::support::{assert_keys, assert_positions, reference};
use rucuda_array::{bf16, f16, GpuArray};
use rucuda_driver::Stream;

fn check_topk<T: TestKey + Default>(
    s: &Stream,
    rng: &mut Rng,
    shape: &[usize],
    k: usize,
    dist: Dist,
) {
    let n: usize = shape.iter().product();
    let data = draw::<T>(rng, n, dist);
    let len = *shape.last().unwrap();
    let a = GpuArray::from_shape_slice(s, shape, &data).unwrap();
    for largest in [true, false] {
        let (wk, wp) = reference(&data, len, largest);
        let rows = n / len;
        let mut want_k = Vec::new();
        let mut want_p = Vec::new();
        for r in 0..rows {
            want_k.extend_from_slice(&wk[r * len..r * len + k]);
            want_p.extend_from_slice(&wp[r * len..r * len + k]);
        }
        let (v, p) = a.topk(k, largest).unwrap();
        let mut want_shape = shape.to_vec();
        *want_shape.last_mut().unwrap() = k;
        assert_eq!(v.shape(), &want_shape[..]);
        let what = format!(
            "topk {} {shape:?} k {k} {dist:?} largest {largest}",
            T::DTYPE
        );
        assert_keys(&v.to_vec().unwrap(), &want_k, &what);
        assert_positions(&p.to_vec().unwrap(), &want_p, &what);
    }
}

fn sweep<T: TestKey + Default>(s: &Stream, rng: &mut Rng) {
    for (shape, k) in [
        (&[1usize][..], 1usize),
        (&[10], 10),
        (&[1000], 7),
        (&[3, 5000], 50),
        (&[64, 12_825], 1024),
        (&[4, 100_000], 1),
        (&[2, 70_000], 5000),
        (&[5, 4096], 4096),
    ] {
        for dist in [
            Dist::Uniform,
            Dist::FewDistinct,
            Dist::AllEqual,
            Dist::Special,
            Dist::Sorted,
        ] {
            check_topk::<T>(s, rng, shape, k, dist);
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn topk_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    sweep::<f32>(&s, &mut rng);
    sweep::<i32>(&s, &mut rng);
    sweep::<u8>(&s, &mut rng);
    sweep::<f16>(&s, &mut rng);
    sweep::<bf16>(&s, &mut rng);
    sweep::<i64>(&s, &mut rng);
    sweep::<f64>(&s, &mut rng);
}

#[test]
#[ignore = "needs a CUDA device"]
fn topk_axis_and_refusals_gpu() {
    let s = stream();
    let mut rng = Rng::fresh();
    let data = draw::<f32>(&mut rng, 300 * 7, Dist::Uniform);
    let a = GpuArray::from_shape_slice(&s, &[300, 7], &data).unwrap();
    let (v, p) = a.topk_axis(3, 0, true).unwrap();
    assert_eq!(v.shape(), &[3, 7]);
    let t = a.transpose();
    let (tv, tp) = t.topk(3, true).unwrap();
    assert_keys(
        &v.transpose().to_vec().unwrap(),
        &tv.to_vec().unwrap(),
        "axis 0 vs transpose",
    );
    assert_positions(
        &p.transpose().to_vec().unwrap(),
        &tp.to_vec().unwrap(),
        "axis 0 positions",
    );
    assert!(a.topk(8, true).is_err());
    let (e, _) = a.topk(0, true).unwrap();
    assert_eq!(e.shape(), &[300, 0]);
}
