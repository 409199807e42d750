//! GPU tests of memory order (F-ordered creation, copies, casts, reshapes and ravels
//! against ndarray references; ndarray round trips; elementwise operations on F-ordered
//! operands), `view_as` across element sizes, and arrays over foreign device memory.

mod common;
#[path = "../../rucuda-driver/tests/kernels/spin.rs"]
mod spin;

use std::sync::{Arc, Mutex};

use common::{stream, RandomElement, RandomVec, Rng};
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use rucuda_array::{
    fuse, ops::BinaryOp, ArrayError, Complex, GpuArray, LayoutError, Order, SliceArg,
};
use rucuda_driver::{DeviceBuffer, DevicePtr, Stream, StreamFlags};

/// A random host array of `shape` laid out column-major.
fn host_f<T: RandomElement>(rng: &mut Rng, shape: &[usize]) -> ArrayD<T> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape).f(), rng.vec::<T>(n)).unwrap()
}

/// The elements of `a` in column-major order.
fn f_order<T: Copy>(a: &ArrayD<T>) -> Vec<T> {
    a.t().iter().copied().collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn f_ordered_creation_and_like() {
    let s = stream();
    let shape = [5usize, 7, 3];
    let f = GpuArray::<f64>::full_order(&s, &shape, 2.5, Order::F).unwrap();
    assert_eq!(f.strides(), &[1, 5, 35]);
    assert!(f.to_vec().unwrap().iter().all(|&x| x == 2.5));
    let z = GpuArray::<i16>::zeros_order(&s, &shape, Order::F).unwrap();
    assert!(z.is_f_contiguous() && z.to_vec().unwrap().iter().all(|&x| x == 0));
    let o = GpuArray::<Complex<f32>>::ones_order(&s, &shape, Order::F).unwrap();
    assert!(o.is_f_contiguous());
    assert!(o
        .to_vec()
        .unwrap()
        .iter()
        .all(|&x| x == Complex::new(1.0, 0.0)));
    let e = GpuArray::<u8>::empty_order(&s, &shape, Order::F).unwrap();
    assert_eq!(e.strides(), &[1, 5, 35]);
    // A and K without an array to follow: C.
    assert!(GpuArray::<u8>::empty_order(&s, &shape, Order::K)
        .unwrap()
        .is_c_contiguous());
    // *_like follows the array (K by default), with another element type.
    let l = GpuArray::<i64>::zeros_like(&f).unwrap();
    assert_eq!(l.strides(), f.strides());
    assert!(l.to_vec().unwrap().iter().all(|&x| x == 0));
    assert!(GpuArray::<f32>::empty_like(&f).unwrap().is_f_contiguous());
    assert!(GpuArray::<f32>::ones_like(&f).unwrap().is_f_contiguous());
    let v = GpuArray::<u16>::full_like(&f, 9).unwrap();
    assert!(v.is_f_contiguous() && v.to_vec().unwrap().iter().all(|&x| x == 9));
    assert!(GpuArray::<f32>::empty_like_order(&f, Order::C)
        .unwrap()
        .is_c_contiguous());
    assert!(GpuArray::<f32>::zeros_like_order(&f, Order::A)
        .unwrap()
        .is_f_contiguous());
    let c = GpuArray::<f32>::zeros(&s, &shape).unwrap();
    assert!(GpuArray::<f32>::ones_like_order(&c, Order::A)
        .unwrap()
        .is_c_contiguous());
    // A permuted view: K keeps its axis order, densely.
    let p = c.permute(&[2, 0, 1]).unwrap();
    let k = GpuArray::<f64>::full_like(&p, 1.0).unwrap();
    assert_eq!(k.strides(), &[1, 21, 3]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn copies_and_casts_keep_or_change_the_order() {
    let s = stream();
    let mut rng = Rng::fresh();
    let h = host_f::<f32>(&mut rng, &[33, 17, 4]);
    let a = GpuArray::from_ndarray(&s, &h).unwrap();
    assert!(
        a.is_f_contiguous() && !a.is_c_contiguous(),
        "uploaded as it lies"
    );
    let c = a.copy().unwrap();
    assert!(c.is_f_contiguous() && !c.shares_buffer_with(&a));
    assert_eq!(c.to_ndarray().unwrap(), h);
    let cc = a.copy_order(Order::C).unwrap();
    assert!(cc.is_c_contiguous());
    assert_eq!(cc.to_ndarray().unwrap(), h);
    // astype keeps F (K) and converts as NumPy (float to int truncates).
    let i = a.astype::<i32>().unwrap();
    assert!(i.is_f_contiguous());
    assert_eq!(i.to_ndarray().unwrap(), h.mapv(|x| x as i32));
    let d = a.astype_order::<f64>(Order::C).unwrap();
    assert!(d.is_c_contiguous());
    assert_eq!(d.to_ndarray().unwrap(), h.mapv(f64::from));
    // A strided view of an F array: K gives a dense F copy.
    let v = a.slice(&[SliceArg::stepped(None, None, 3)]).unwrap();
    let vc = v.copy().unwrap();
    assert!(vc.is_f_contiguous());
    assert_eq!(vc.to_ndarray().unwrap(), v.to_ndarray().unwrap());
    // A reversed F view: K gives a dense forward copy.
    let r = a.flip(1).unwrap();
    let rc = r.copy().unwrap();
    assert!(rc.is_f_contiguous());
    let mut hr = h.clone();
    hr.invert_axis(ndarray::Axis(1));
    assert_eq!(rc.to_ndarray().unwrap(), hr);
}

#[test]
#[ignore = "needs a CUDA device"]
fn reshape_and_ravel_in_f_order_match_numpy() {
    let s = stream();
    let mut rng = Rng::fresh();
    let h = ArrayD::from_shape_vec(IxDyn(&[6, 10]), rng.vec::<i64>(60)).unwrap();
    let c = GpuArray::from_ndarray(&s, &h).unwrap();
    let f = c.copy_order(Order::F).unwrap();
    // ravel: C, F, K, A.
    let c_order: Vec<i64> = h.iter().copied().collect();
    let f_elems = f_order(&h);
    assert_eq!(c.ravel_order(Order::F).unwrap().to_vec().unwrap(), f_elems);
    assert_eq!(f.ravel_order(Order::F).unwrap().to_vec().unwrap(), f_elems);
    assert!(f.ravel_order(Order::F).unwrap().shares_buffer_with(&f));
    assert_eq!(f.ravel_order(Order::C).unwrap().to_vec().unwrap(), c_order);
    assert_eq!(f.ravel_order(Order::K).unwrap().to_vec().unwrap(), f_elems);
    assert_eq!(f.ravel_order(Order::A).unwrap().to_vec().unwrap(), f_elems);
    assert_eq!(c.ravel_order(Order::A).unwrap().to_vec().unwrap(), c_order);
    assert_eq!(
        f.ravel().unwrap().to_vec().unwrap(),
        c_order,
        "ravel() stays C"
    );
    // K of a transposed, reversed view: memory order, forward.
    let t = c.transpose().flip(0).unwrap();
    assert_eq!(t.ravel_order(Order::K).unwrap().to_vec().unwrap(), c_order);
    // reshape in F order: NumPy's a.reshape(shape, order='F').
    for shape in [[4usize, 15], [3, 20], [60, 1]] {
        let want = ArrayD::from_shape_vec(IxDyn(&shape).f(), f_elems.clone()).unwrap();
        let req: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
        for a in [&c, &f] {
            let r = a.reshape_order(&req, Order::F).unwrap();
            assert_eq!(r.to_ndarray().unwrap(), want, "{shape:?}");
        }
        assert!(f
            .reshape_order(&req, Order::F)
            .unwrap()
            .shares_buffer_with(&f));
    }
    let r = f.reshape_order(&[2, -1, 5], Order::A).unwrap();
    assert!(r.shares_buffer_with(&f) && r.is_f_contiguous());
    assert!(matches!(
        f.reshape_order(&[60], Order::K),
        Err(ArrayError::Layout(LayoutError::InvalidOrder { .. }))
    ));
    assert!(f.reshape_view_order(&[60], Order::C).is_err());
}

#[test]
#[ignore = "needs a CUDA device"]
fn ndarray_round_trips_in_f_order() {
    let s = stream();
    let mut rng = Rng::fresh();
    for shape in [vec![1usize], vec![7, 1], vec![3, 5, 2, 4], vec![0, 3]] {
        let h = host_f::<u32>(&mut rng, &shape);
        let a = GpuArray::from_ndarray(&s, &h).unwrap();
        assert!(a.is_f_contiguous(), "{shape:?}");
        let back = a.to_ndarray().unwrap();
        assert_eq!(back, h);
        if shape.len() > 1 && shape.iter().all(|&d| d > 1) {
            assert!(!back.is_standard_layout() && back.t().is_standard_layout());
        }
        let c = a.to_ndarray_order(Order::C).unwrap();
        assert!(c.is_standard_layout());
        assert_eq!(c, h);
        let from_c = GpuArray::from_ndarray(&s, &c).unwrap();
        let f = from_c.to_ndarray_order(Order::F).unwrap();
        assert!(f.t().is_standard_layout());
        assert_eq!(f, h);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn elementwise_operations_on_f_ordered_operands() {
    let s = stream();
    let mut rng = Rng::fresh();
    let shape = [129usize, 65];
    let ha = host_f::<f32>(&mut rng, &shape);
    let hb = host_f::<f32>(&mut rng, &shape);
    let a = GpuArray::from_ndarray(&s, &ha).unwrap();
    let b = GpuArray::from_ndarray(&s, &hb).unwrap();
    // All F: the result is F and right.
    let sum = (&a + &b).unwrap();
    assert!(sum.is_f_contiguous() && !sum.is_c_contiguous());
    assert_eq!(sum.to_ndarray().unwrap(), &ha + &hb);
    let prod = (&a * 3.0f32).unwrap();
    assert!(prod.is_f_contiguous());
    assert_eq!(prod.to_ndarray().unwrap(), ha.mapv(|x| x * 3.0));
    // F with C: right (strided path), C result.
    let hc = ArrayD::from_shape_vec(IxDyn(&shape), rng.vec::<f32>(shape[0] * shape[1])).unwrap();
    let c = GpuArray::from_ndarray(&s, &hc).unwrap();
    let mixed = (&a - &c).unwrap();
    assert!(mixed.is_c_contiguous());
    assert_eq!(mixed.to_ndarray().unwrap(), &ha - &hc);
    // F with a broadcast row.
    let hr = ArrayD::from_shape_vec(IxDyn(&[65]), rng.vec::<f32>(65)).unwrap();
    let row = GpuArray::from_ndarray(&s, &hr).unwrap();
    assert_eq!((&a * &row).unwrap().to_ndarray().unwrap(), &ha * &hr);
    // In place on F arrays, and a math function.
    let mut m = a.copy().unwrap();
    m.binary_assign(BinaryOp::Add, &b).unwrap();
    assert!(m.is_f_contiguous());
    assert_eq!(m.to_ndarray().unwrap(), &ha + &hb);
    let e = rucuda_array::math::fabs(&a).unwrap();
    assert!(e.is_f_contiguous());
    assert_eq!(e.to_ndarray().unwrap(), ha.mapv(f32::abs));
    // A fused expression over F operands, into a new F array.
    let fused: GpuArray<f32> = fuse!(a, b => 2.0 * a + b).eval().unwrap();
    assert!(fused.is_f_contiguous());
    let want = ha.mapv(|x| 2.0 * x) + &hb;
    common::assert_close(
        &fused.to_vec().unwrap(),
        &want.iter().copied().collect::<Vec<_>>(),
        1e-4, // the device may fuse 2a + b into one rounding
    );
    // A user kernel over F arrays (the contiguous variants: `i` only as a subscript).
    // SAFETY: reads x[i], y[i] and writes z[i] for i < n only.
    let saxpy = unsafe {
        rucuda_array::elementwise::ElementwiseKernel::new(
            "float a, const float *x, const float *y, float *z",
            "z[i] = a * x[i] + y[i]",
            "saxpy_f",
        )
    }
    .unwrap();
    let mut z = GpuArray::<f32>::empty_like(&a).unwrap();
    assert!(z.is_f_contiguous());
    saxpy
        .call(
            &s,
            &[2.0f32.into(), (&a).into(), (&b).into(), (&mut z).into()],
        )
        .unwrap();
    let want = ha.mapv(|x| 2.0 * x) + &hb;
    common::assert_close(
        &z.to_ndarray().unwrap().iter().copied().collect::<Vec<_>>(),
        &want.iter().copied().collect::<Vec<_>>(),
        1e-4,
    );
    // A user kernel's `i` is the row-major index also for F arrays.
    // SAFETY: writes out[i] for i < n only.
    let k = unsafe {
        rucuda_array::elementwise::ElementwiseKernel::new(
            "long long *out",
            "out[i] = i",
            "index_of",
        )
    }
    .unwrap();
    let mut idx = GpuArray::<i64>::zeros_order(&s, &[4, 3], Order::F).unwrap();
    k.call(&s, &[(&mut idx).into()]).unwrap();
    assert_eq!(idx.to_vec().unwrap(), (0..12).collect::<Vec<i64>>());
    // An odd-sized dense F view whose element 0 is not 16-byte aligned (the plain loop).
    let flat: Vec<f32> = rng.vec(1 + 7 * 13);
    let base = GpuArray::from_slice(&s, &flat).unwrap();
    let x = base
        .slice(&[SliceArg::range(1, 1 + 7 * 13)])
        .unwrap()
        .reshape_view_order(&[7, 13], Order::F)
        .unwrap();
    assert!(x.is_f_contiguous() && x.shares_buffer_with(&base));
    let hx = ArrayD::from_shape_vec(IxDyn(&[7, 13]).f(), flat[1..].to_vec()).unwrap();
    let y = (&x + &x).unwrap();
    assert!(y.is_f_contiguous());
    assert_eq!(y.to_ndarray().unwrap(), &hx + &hx);
}

#[test]
#[ignore = "needs a CUDA device"]
fn view_as_other_element_sizes() {
    let s = stream();
    let mut rng = Rng::fresh();
    let h: Vec<f64> = rng.vec(24);
    let a = GpuArray::from_shape_slice(&s, &[4, 6], &h).unwrap();
    // f64 as u32: [4, 12], each element split into its two 32-bit halves (little endian).
    let w = a.view_as::<u32>().unwrap();
    assert_eq!(w.shape(), &[4, 12]);
    assert!(w.shares_buffer_with(&a));
    let want: Vec<u32> = h
        .iter()
        .flat_map(|x| {
            let b = x.to_bits();
            [b as u32, (b >> 32) as u32]
        })
        .collect();
    assert_eq!(w.to_vec().unwrap(), want);
    // Back, and to bytes.
    assert_eq!(w.view_as::<f64>().unwrap().to_vec().unwrap(), h);
    let bytes = a.view_as::<u8>().unwrap();
    assert_eq!(bytes.shape(), &[4, 48]);
    let want_bytes: Vec<u8> = h.iter().flat_map(|x| x.to_le_bytes()).collect();
    assert_eq!(bytes.to_vec().unwrap(), want_bytes);
    // A row slice with a column range: strides scale; writes go through.
    let part = a
        .slice(&[SliceArg::range(1, 3), SliceArg::range(2, 5)])
        .unwrap();
    let halves = part.view_as::<f32>().unwrap();
    assert_eq!(halves.shape(), &[2, 6]);
    assert_eq!(halves.strides(), &[12, 1]);
    halves.fill(0.0).unwrap();
    let got = a.to_vec().unwrap();
    for r in 0..4 {
        for c in 0..6 {
            let zeroed = (1..3).contains(&r) && (2..5).contains(&c);
            assert_eq!(
                got[r * 6 + c] == 0.0,
                zeroed || h[r * 6 + c] == 0.0,
                "({r}, {c})"
            );
        }
    }
    // Complex as its parts.
    let z =
        GpuArray::from_slice(&s, &[Complex::new(1.0f32, -2.0), Complex::new(3.5, 4.0)]).unwrap();
    assert_eq!(
        z.view_as::<f32>().unwrap().to_vec().unwrap(),
        vec![1.0, -2.0, 3.5, 4.0]
    );
    // Refusals name the axis and sizes.
    let e = a.transpose().view_as::<u32>().unwrap_err();
    assert!(
        matches!(&e, ArrayError::Layout(LayoutError::ViewItemSize { .. }))
            && e.to_string().contains("axis 1"),
        "{e}"
    );
    let odd = GpuArray::<u16>::zeros(&s, &[3, 3]).unwrap();
    let e = odd.view_as::<f32>().unwrap_err();
    assert!(e.to_string().contains("6 bytes"), "{e}");
    let scalar = GpuArray::<f64>::zeros(&s, &[]).unwrap();
    assert!(scalar.view_as::<f32>().is_err());
    assert!(scalar.view_as::<i64>().is_ok());
}

/// Keeps a raw `cuMemAlloc` region (given up by a `DeviceBuffer`) and frees it when
/// dropped, noting whether the stream that used it had finished by then.
struct Region {
    ctx: rucuda_driver::Context,
    ptr: u64,
    bytes: usize,
    watched: Stream,
    finished_at_drop: Arc<Mutex<Option<bool>>>,
}

impl Drop for Region {
    fn drop(&mut self) {
        let done = self.watched.is_done().unwrap_or(false);
        *self.finished_at_drop.lock().unwrap() = Some(done);
        // SAFETY: the region came from `DeviceBuffer::into_raw` of a cuMemAlloc buffer of
        // `bytes` bytes; freed once, here.
        drop(unsafe { DeviceBuffer::<u8>::from_raw(&self.ctx, self.ptr, self.bytes) });
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn foreign_memory_is_tracked_and_outlives_its_queued_work() {
    let ctx = common::ctx();
    let m = spin::core_kernels(&ctx);
    let home = Stream::new(&ctx, StreamFlags::NON_BLOCKING).unwrap();
    let mut rng = Rng::fresh();
    let (rows, cols) = (300usize, 200usize);
    let bytes = rows * cols * 4;
    let ptr = DeviceBuffer::<u8>::uninit(&ctx, bytes).unwrap().into_raw();
    let finished = Arc::new(Mutex::new(None));
    let region = Region {
        ctx: ctx.clone(),
        ptr,
        bytes,
        watched: home.clone(),
        finished_at_drop: Arc::clone(&finished),
    };
    // F-ordered, strides in elements.
    // SAFETY: `region` holds rows * cols f32 of this context at `ptr` and lives as long
    // as the array; nothing else uses it.
    let a = unsafe {
        GpuArray::<f32>::from_device_ptr(
            &home,
            ptr,
            &[rows, cols],
            Some(&[1, rows as isize]),
            region,
        )
    }
    .unwrap();
    assert!(a.is_f_contiguous());
    assert_eq!(a.buffer().device_range().address(), ptr);
    let h = host_f::<f32>(&mut rng, &[rows, cols]);
    a.set_ndarray(&h).unwrap();
    assert_eq!(a.to_ndarray().unwrap(), h);
    assert_eq!(
        (&a * 2.0f32).unwrap().to_ndarray().unwrap(),
        h.mapv(|x| x * 2.0)
    );
    // A reversed view over the same region (element 0 at the top end).
    // SAFETY: a borrowed view of the same live region; the guard does nothing.
    let r = unsafe {
        GpuArray::<f32>::from_device_ptr(
            &home,
            ptr + (bytes - 4) as u64,
            &[rows * cols],
            Some(&[-1]),
            (),
        )
    }
    .unwrap();
    let mut flat = f_order(&h);
    flat.reverse();
    assert_eq!(r.to_vec().unwrap(), flat);
    drop(r);
    // Work queued behind a long kernel, then the array dropped at once: the owner goes
    // only after the work has finished.
    spin::spin(&m, &home);
    a.fill(7.0).unwrap();
    drop(a);
    assert_eq!(
        *finished.lock().unwrap(),
        Some(true),
        "the owner went before the work ended"
    );
    ctx.check_deferred_errors().unwrap();
    // Refusals: a misaligned address, strides of another rank.
    // SAFETY: refused before any use.
    let e = unsafe { GpuArray::<f32>::from_device_ptr(&home, 2, &[4], None, ()) }.unwrap_err();
    assert!(e.to_string().contains("aligned"), "{e}");
    // SAFETY: as above.
    let e = unsafe { GpuArray::<f32>::from_device_ptr(&home, 256, &[4], Some(&[1, 1]), ()) };
    assert!(matches!(
        e,
        Err(ArrayError::Layout(LayoutError::RankMismatch { .. }))
    ));
}
