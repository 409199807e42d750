//! GPU tests of GpuArray: creation and host round trips for every element type, views
//! and non-contiguous gathers, writes through views, 64-bit offsets. Each runs in its own
//! process in the GPU bundle.

mod common;

use common::{stream, RandomElement, RandomVec, Rng};
use ndarray::{Array, ArrayD, Axis, IxDyn};
use rucuda_array::{bf16, f16, Complex, GpuArray, Layout, SliceArg};

fn round_trip<T: RandomElement>(rng: &mut Rng) {
    let s = stream();
    for n in [0usize, 1, 7, 1000, 65_537] {
        let host: Vec<T> = rng.vec(n);
        let a = GpuArray::from_slice(&s, &host).unwrap();
        assert_eq!(a.len(), n);
        assert_eq!(a.dtype(), T::DTYPE);
        assert_eq!(a.to_vec().unwrap(), host, "{} n={n}", T::DTYPE);
    }
    // 3-D through ndarray, then a transposed and a reversed view gathered back.
    let host = ArrayD::from_shape_vec(IxDyn(&[3, 4, 5]), rng.vec::<T>(60)).unwrap();
    let a = GpuArray::from_ndarray(&s, &host).unwrap();
    assert_eq!(a.shape(), &[3, 4, 5]);
    assert_eq!(a.to_ndarray().unwrap(), host);
    assert_eq!(a.transpose().to_ndarray().unwrap(), host.t().to_owned());
    let mut rev = host.clone();
    rev.invert_axis(Axis(1));
    assert_eq!(a.flip(1).unwrap().to_ndarray().unwrap(), rev);
    // set, then read back.
    let other = rng.vec::<T>(60);
    a.set(&other).unwrap();
    assert_eq!(a.to_vec().unwrap(), other);
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_dtype_round_trips() {
    let mut rng = Rng::fresh();
    round_trip::<bool>(&mut rng);
    round_trip::<i8>(&mut rng);
    round_trip::<i16>(&mut rng);
    round_trip::<i32>(&mut rng);
    round_trip::<i64>(&mut rng);
    round_trip::<u8>(&mut rng);
    round_trip::<u16>(&mut rng);
    round_trip::<u32>(&mut rng);
    round_trip::<u64>(&mut rng);
    round_trip::<f16>(&mut rng);
    round_trip::<bf16>(&mut rng);
    round_trip::<f32>(&mut rng);
    round_trip::<f64>(&mut rng);
    round_trip::<Complex<f32>>(&mut rng);
    round_trip::<Complex<f64>>(&mut rng);
}

fn filled<T: RandomElement>(rng: &mut Rng) {
    let s = stream();
    let v = T::random(rng);
    let shape = [3usize, 1001];
    assert!(GpuArray::<T>::full(&s, &shape, v)
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .all(|&x| x == v));
    let z = GpuArray::<T>::zeros(&s, &shape).unwrap();
    assert!(z.to_vec().unwrap().iter().all(|&x| x == T::from_f64(0.0)));
    let o = GpuArray::<T>::ones_like(&z).unwrap();
    assert!(o.to_vec().unwrap().iter().all(|&x| x == T::from_f64(1.0)));
    assert_eq!(GpuArray::<T>::empty_like(&z).unwrap().shape(), &shape);
    let f = GpuArray::<T>::full_like(&z, v).unwrap();
    assert_eq!(f.to_vec().unwrap()[2002], v);
}

#[test]
#[ignore = "needs a CUDA device"]
fn creation_functions() {
    let mut rng = Rng::fresh();
    filled::<bool>(&mut rng);
    filled::<u8>(&mut rng);
    filled::<i16>(&mut rng);
    filled::<f16>(&mut rng);
    filled::<bf16>(&mut rng);
    filled::<f32>(&mut rng);
    filled::<u32>(&mut rng);
    filled::<f64>(&mut rng);
    filled::<i64>(&mut rng);
    filled::<Complex<f32>>(&mut rng);
    filled::<Complex<f64>>(&mut rng);
    let s = stream();
    assert_eq!(
        GpuArray::<i64>::arange(&s, 10.0, -5.0, -4.0)
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![10, 6, 2, -2]
    );
    assert_eq!(
        GpuArray::<f32>::linspace(&s, -1.0, 1.0, 5, true)
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![-1.0, -0.5, 0.0, 0.5, 1.0]
    );
    assert!(GpuArray::<f32>::zeros(&s, &[0, 5])
        .unwrap()
        .to_vec()
        .unwrap()
        .is_empty());
    assert!(GpuArray::<u8>::from_shape_slice(&s, &[2, 2], &[1, 2, 3]).is_err());
}

/// Host reference of a view: the layout applied to the host data.
fn host_view(data: &[f32], l: &Layout) -> Vec<f32> {
    l.element_offsets().map(|k| data[k]).collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn random_views_gather_exactly() {
    let mut rng = Rng::fresh();
    let s = stream();
    let shape = [6usize, 7, 8];
    let data: Vec<f32> = rng.vec(6 * 7 * 8);
    let a = GpuArray::from_shape_slice(&s, &shape, &data).unwrap();
    for _ in 0..200 {
        let mut args = Vec::new();
        for &d in &shape {
            let pick = |r: &mut Rng| Some(r.below(2 * d as u64 + 3) as isize - d as isize - 1);
            let arg = match rng.below(4) {
                0 => SliceArg::index(rng.below(d as u64) as isize),
                1 => SliceArg::All,
                _ => {
                    let step = [1, 2, 3, -1, -2, -3][rng.below(6) as usize];
                    SliceArg::stepped(pick(&mut rng), pick(&mut rng), step)
                }
            };
            args.push(arg);
        }
        if rng.below(3) == 0 {
            args.insert(rng.below(args.len() as u64 + 1) as usize, SliceArg::NewAxis);
        }
        let v = a.slice(&args).unwrap();
        let v = if v.ndim() > 1 && rng.below(2) == 0 {
            v.transpose()
        } else {
            v
        };
        let want = host_view(&data, v.layout());
        assert_eq!(v.to_vec().unwrap(), want, "{args:?}");
        assert_eq!(v.to_ndarray().unwrap().shape(), v.shape());
        assert!(v.shares_buffer_with(&a));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn ndarray_layouts_in_and_out() {
    let mut rng = Rng::fresh();
    let s = stream();
    let host = Array::from_shape_vec((5, 6, 7), rng.vec::<f64>(210)).unwrap();
    // Column-major (permuted axes): uploaded as it lies, strides kept.
    let t = host.view().permuted_axes([2, 0, 1]);
    let a = GpuArray::from_ndarray(&s, &t).unwrap();
    assert_eq!(a.strides(), &[1, 42, 7]);
    assert_eq!(a.to_ndarray().unwrap(), t.to_owned().into_dyn());
    // A reversed axis: negative stride on the device too.
    let mut r = host.clone();
    r.invert_axis(Axis(0));
    let a = GpuArray::from_ndarray(&s, &r).unwrap();
    assert_eq!(a.to_ndarray().unwrap(), r.clone().into_dyn());
    // A stepped slice: gathered on upload.
    let sl = host.slice(ndarray::s![1..5;2, .., 3..]);
    let a = GpuArray::from_ndarray(&s, &sl).unwrap();
    assert!(a.is_c_contiguous());
    assert_eq!(a.to_ndarray().unwrap(), sl.to_owned().into_dyn());
    // set_ndarray with a non-contiguous source.
    let z = GpuArray::<f64>::zeros(&s, &[7, 6, 5]).unwrap();
    z.set_ndarray(&host.t()).unwrap();
    assert_eq!(z.to_ndarray().unwrap(), host.t().to_owned().into_dyn());
}

#[test]
#[ignore = "needs a CUDA device"]
fn writes_through_views() {
    let mut rng = Rng::fresh();
    let s = stream();
    let base: Vec<i32> = rng.vec(4 * 5);
    let a = GpuArray::from_shape_slice(&s, &[4, 5], &base).unwrap();
    let col: Vec<i32> = rng.vec(4);
    a.slice(&[SliceArg::All, SliceArg::index(-2)])
        .unwrap()
        .set(&col)
        .unwrap();
    let mut want = base.clone();
    for r in 0..4 {
        want[r * 5 + 3] = col[r];
    }
    assert_eq!(a.to_vec().unwrap(), want);
    // A reversed, transposed view.
    let v = a.transpose().flip(0).unwrap();
    let vals: Vec<i32> = rng.vec(20);
    v.set(&vals).unwrap();
    assert_eq!(v.to_vec().unwrap(), vals);
    // Broadcast views refuse writes; copies are dense and independent, in the view's
    // memory order (NumPy's `K`: the reversed transpose of a C array copies F-ordered).
    let row = a.slice(&[SliceArg::index(0)]).unwrap();
    let b = row.broadcast_to(&[3, 5]).unwrap();
    assert!(b.set(&[0; 15]).is_err());
    let c = v.copy().unwrap();
    assert!(c.is_f_contiguous() && !c.shares_buffer_with(&a));
    assert_eq!(c.to_vec().unwrap(), vals);
    let c2 = a.copy().unwrap();
    assert_eq!(c2.to_vec().unwrap(), a.to_vec().unwrap());
}

#[test]
#[ignore = "needs a CUDA device"]
fn offsets_past_2_pow_31_elements() {
    if rucuda_testkit::skip_under_sanitizer("over 2^31 elements: hours under instrumentation") {
        return;
    }
    let s = stream();
    let n = (1usize << 31) + 4099;
    let a = GpuArray::<u8>::zeros(&s, &[n]).unwrap();
    let tail = a.slice(&[SliceArg::stepped(Some(-5), None, 1)]).unwrap();
    tail.set(&[1, 2, 3, 4, 5]).unwrap();
    let around = a
        .slice(&[SliceArg::range((1isize << 31) - 2, (1isize << 31) + 2)])
        .unwrap();
    around.set(&[9, 8, 7, 6]).unwrap();
    let rev = a
        .slice(&[SliceArg::stepped(None, Some(n as isize - 6), -1)])
        .unwrap();
    assert_eq!(rev.len(), 5);
    assert_eq!(rev.to_vec().unwrap(), vec![5, 4, 3, 2, 1]);
    assert_eq!(around.to_vec().unwrap(), vec![9, 8, 7, 6]);
    let m = a.reshape(&[-1, 1]).unwrap();
    assert_eq!(m.shape(), &[n, 1]);
}
