//! The operations at their edges: empty, one-element and odd sizes, the
//! kernel memo, operands on different streams, async transfers through pinned staging,
//! more than 2^31 elements.

use crate::common;
use crate::common::{stream, RandomVec, Rng};
use crate::ops_support::gpu::up;
use rucuda_array::ops;
use rucuda_array::{ArrayError, Complex, GpuArray, SliceArg};

// ---------------------------------------------------------------------------------
// Edge sizes, memo, streams, async transfers, > 2^31 elements

#[test]
#[ignore = "needs a CUDA device"]
fn empty_one_element_and_odd_sizes() {
    let mut rng = Rng::fresh();
    let s = stream();
    let e = GpuArray::<f32>::empty(&s, &[0, 3]).unwrap();
    let r = (&e + 1.0).unwrap();
    assert_eq!(r.shape(), &[0, 3]);
    assert!(r.to_vec().unwrap().is_empty());
    assert_eq!(e.astype::<i8>().unwrap().shape(), &[0, 3]);
    e.fill(1.0).unwrap();
    let one = up(&s, &[1], &[2.5f64]);
    assert_eq!((&one * &one).unwrap().to_vec().unwrap(), vec![6.25]);
    let zero_d = up(&s, &[], &[3i32]);
    let r = (&zero_d + &up(&s, &[2, 2], &[1i32, 2, 3, 4])).unwrap();
    assert_eq!(r.to_vec().unwrap(), vec![4, 5, 6, 7]);
    for n in [
        1usize, 2, 3, 4, 5, 7, 8, 15, 16, 17, 255, 256, 257, 4095, 4097, 65537,
    ] {
        let (ah, bh) = (rng.vec::<u8>(n), rng.vec::<i64>(n));
        let (a, b) = (up(&s, &[n], &ah), up(&s, &[n], &bh));
        let c = (&a + &b).unwrap();
        let want: Vec<i64> = ah
            .iter()
            .zip(&bh)
            .map(|(&x, &y)| (x as i64).wrapping_add(y))
            .collect();
        assert_eq!(c.to_vec().unwrap(), want, "n = {n}");
        // A misaligned view (scalar path instead of 16-byte tiles).
        if n > 1 {
            let av = a.slice(&[SliceArg::range(1, n as isize)]).unwrap();
            let c = (&av * 3u8).unwrap();
            let want: Vec<u8> = ah[1..].iter().map(|&x| x.wrapping_mul(3)).collect();
            assert_eq!(c.to_vec().unwrap(), want, "misaligned n = {n}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn repeated_operations_reuse_memoized_kernels_and_report_their_host_cost() {
    let s = stream();
    let a = GpuArray::<f32>::ones(&s, &[1000]).unwrap();
    let b = GpuArray::<f32>::ones(&s, &[1000]).unwrap();
    let _ = (&a + &b).unwrap(); // compile
    let before = ops::memoized_kernel_count();
    // Each launch costs far more under compute-sanitizer: fewer repetitions there.
    let reps = rucuda_testkit::scaled_for_sanitizer(20_000, 1_000);
    let t = std::time::Instant::now();
    for _ in 0..reps {
        let c = (&a + &b).unwrap();
        drop(c);
    }
    s.synchronize().unwrap();
    let us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
    println!("a + b on 1000 f32 with the result allocated: {us:.2} us per op (host, debug or release as built)");
    assert_eq!(ops::memoized_kernel_count(), before);
    let c = (&a + &b).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![2.0; 1000]);
    // Different scalar values: one kernel.
    let _ = (&a * 2.0).unwrap();
    let k = ops::memoized_kernel_count();
    let d = (&a * 3.5).unwrap();
    assert_eq!(ops::memoized_kernel_count(), k);
    assert_eq!(d.to_vec().unwrap(), vec![3.5f32; 1000]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn operands_on_different_streams_are_ordered() {
    let mut rng = Rng::fresh();
    let ctx = common::ctx();
    let s1 = rucuda_driver::Stream::new(&ctx, rucuda_driver::StreamFlags::NON_BLOCKING).unwrap();
    let s2 = rucuda_driver::Stream::new(&ctx, rucuda_driver::StreamFlags::NON_BLOCKING).unwrap();
    let n = 1 << 22;
    let ah = rng.vec::<f32>(n);
    for _ in 0..5 {
        let a = up(&s1, &[n], &ah);
        // Work queued on s2 writes b; the sum on s1 must see it.
        let b = GpuArray::<f32>::empty(&s2, &[n]).unwrap();
        b.fill(2.0).unwrap();
        let mut b2 = b.view();
        for _ in 0..4 {
            b2.try_mul_assign(1.0).unwrap();
        }
        let c = (&a + &b).unwrap();
        assert_eq!(c.stream().raw(), s1.raw());
        drop(b);
        drop(b2);
        let v = c.to_vec().unwrap();
        assert!(v.iter().zip(&ah).all(|(&p, &q)| p == q + 2.0));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn async_get_and_set_through_pinned_staging() {
    let mut rng = Rng::fresh();
    let s = stream();
    let ctx = common::ctx();
    let other = rucuda_driver::Stream::new(&ctx, rucuda_driver::StreamFlags::NON_BLOCKING).unwrap();
    let n = (1 << 20) + 13;
    let h = rng.vec::<Complex<f32>>(n);
    let a = GpuArray::<Complex<f32>>::empty(&s, &[n]).unwrap();
    let pending = a.set_async(&other, &h).unwrap();
    pending.wait().unwrap();
    let got = a.get_async(&other).unwrap();
    let mut spins = 0u64;
    while !got.is_ready().unwrap() {
        spins += 1;
    }
    println!("get_async ready after {spins} polls");
    assert_eq!(got.wait().unwrap(), h);
    // Reusing the staging buffer; ndarray out; a view.
    let b = up(&s, &[4, 5], &rng.vec::<bool>(20));
    let staged = b.get_async(&s).unwrap();
    let want = b.to_ndarray().unwrap();
    let pinned = staged.into_pinned().unwrap();
    let again = b
        .transpose()
        .get_async_with(&s, pinned)
        .unwrap()
        .wait_ndarray()
        .unwrap();
    assert_eq!(again, want.t().to_owned());
    // set_async into a view, scattered on the device.
    let m = GpuArray::<i64>::zeros(&s, &[6, 4]).unwrap();
    let col = m.slice(&[SliceArg::All, SliceArg::index(1)]).unwrap();
    col.set_async(&s, &[1, 2, 3, 4, 5, 6])
        .unwrap()
        .wait()
        .unwrap();
    let v = m.to_vec().unwrap();
    assert_eq!(
        (0..6).map(|r| v[r * 4 + 1]).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5, 6]
    );
    assert!(v.iter().enumerate().all(|(k, &x)| k % 4 == 1 || x == 0));
    assert!(matches!(
        m.set_async(&s, &[1, 2]),
        Err(ArrayError::LengthMismatch { .. })
    ));
    // Dropping a handle early waits for its copy (no use after free).
    let big = GpuArray::<f64>::ones(&s, &[1 << 22]).unwrap();
    drop(big.get_async(&other).unwrap());
}

#[test]
#[ignore = "needs a CUDA device"]
fn an_operation_on_more_than_2_pow_31_elements() {
    if rucuda_testkit::skip_under_sanitizer("over 2^31 elements: hours under instrumentation") {
        return;
    }
    let s = stream();
    let n = (1usize << 31) + 37;
    let a = GpuArray::<u8>::empty(&s, &[n]).unwrap();
    // Distinct values along the array: (index mod 251) through the copy kernel.
    let pattern: Vec<u8> = (0..251u32).map(|k| k as u8).collect();
    let p = up(&s, &[251], &pattern);
    let reps = n / 251;
    let body = a
        .slice(&[SliceArg::range(0, (reps * 251) as isize)])
        .unwrap()
        .reshape(&[reps as isize, 251])
        .unwrap();
    body.copy_from(&p).unwrap();
    a.slice(&[SliceArg::range((reps * 251) as isize, n as isize)])
        .unwrap()
        .fill(7)
        .unwrap();
    let c = (&a + 3u8).unwrap();
    let check = |k: usize| -> u8 {
        if k < reps * 251 {
            (k % 251) as u8 + 3
        } else {
            10
        }
    };
    for k in [
        0usize,
        1,
        250,
        251,
        (1 << 31) - 1,
        1 << 31,
        (1 << 31) + 1,
        n - 40,
        n - 1,
    ] {
        let v = c
            .slice(&[SliceArg::range(k as isize, k as isize + 1)])
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(v, vec![check(k)], "element {k}");
    }
}
