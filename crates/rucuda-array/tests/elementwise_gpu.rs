//! GPU tests of ElementwiseKernel: saxpy on 2^20 elements (vectorized), misaligned views
//! (scalar path), ranged calls, strided and broadcast inputs and outputs, every element
//! type, refused calls, and more than 2^31 elements. Outputs are poisoned first; CPU
//! references in f64.

mod common;

use common::{assert_close, stream, RandomElement, RandomVec, Rng};
use rucuda_array::codegen::ArgSpec;
use rucuda_array::elementwise::{ElementwiseKernel, ElementwiseSpec};
use rucuda_array::{bf16, f16, ArrayError, Complex, GpuArray, SliceArg};

fn saxpy() -> ElementwiseKernel {
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    unsafe {
        ElementwiseKernel::new(
            "float a, const float *x, const float *y, float *z",
            "z[i] = a * x[i] + y[i]",
            "saxpy",
        )
    }
    .unwrap()
}

fn f64s(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn saxpy_on_2_pow_20_elements() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 1 << 20;
    let (xh, yh) = (rng.vec::<f32>(n), rng.vec::<f32>(n));
    let a = f32::random(&mut rng);
    let x = GpuArray::from_slice(&s, &xh).unwrap();
    let y = GpuArray::from_slice(&s, &yh).unwrap();
    let mut z = GpuArray::full(&s, &[n], f32::NAN).unwrap();
    saxpy()
        .call(&s, &[a.into(), (&x).into(), (&y).into(), (&mut z).into()])
        .unwrap();
    let want: Vec<f64> = (0..n)
        .map(|k| a as f64 * xh[k] as f64 + yh[k] as f64)
        .collect();
    assert_close(&f64s(&z.to_vec().unwrap()), &want, 1e-5);
}

#[test]
#[ignore = "needs a CUDA device"]
fn misaligned_views_and_odd_sizes_take_the_scalar_path() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 1_000_003;
    let (xh, yh) = (rng.vec::<f32>(n + 1), rng.vec::<f32>(n + 2));
    let x = GpuArray::from_slice(&s, &xh).unwrap();
    let y = GpuArray::from_slice(&s, &yh).unwrap();
    let xv = x.slice(&[SliceArg::stepped(Some(1), None, 1)]).unwrap();
    let yv = y.slice(&[SliceArg::range(2, n as isize + 2)]).unwrap();
    let mut z = GpuArray::full(&s, &[n], f32::NAN).unwrap();
    let k = saxpy();
    k.call(
        &s,
        &[
            (-1.5f32).into(),
            (&xv).into(),
            (&yv).into(),
            (&mut z).into(),
        ],
    )
    .unwrap();
    let want: Vec<f64> = (0..n)
        .map(|k| -1.5 * xh[k + 1] as f64 + yh[k + 2] as f64)
        .collect();
    assert_close(&f64s(&z.to_vec().unwrap()), &want, 1e-5);
    // Sizes below one tile and around it, vectorized.
    for n in [1usize, 3, 4, 5, 255, 257] {
        let xh = rng.vec::<f32>(n);
        let x = GpuArray::from_slice(&s, &xh).unwrap();
        let mut z = GpuArray::full(&s, &[n], f32::NAN).unwrap();
        k.call(
            &s,
            &[2.0f32.into(), (&x).into(), (&x).into(), (&mut z).into()],
        )
        .unwrap();
        let want: Vec<f64> = xh.iter().map(|&v| 3.0 * v as f64).collect();
        assert_close(&f64s(&z.to_vec().unwrap()), &want, 1e-6);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn ranged_calls_in_both_directions() {
    let s = stream();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let k = unsafe {
        ElementwiseKernel::new("long long *x, long long mark", "x[i] = mark + i", "marker")
    }
    .unwrap();
    let n = 100_000usize;
    let mut x = GpuArray::full(&s, &[n], -7i64).unwrap();
    k.call_range(&s, 5, n as i64, 3, &[(&mut x).into(), 1000i64.into()])
        .unwrap();
    k.call_range(&s, n as i64 - 2, 0, -5, &[(&mut x).into(), 0i64.into()])
        .unwrap();
    let got = x.to_vec().unwrap();
    for (i, &v) in got.iter().enumerate() {
        let mut want = -7i64;
        if i >= 5 && (i - 5) % 3 == 0 {
            want = 1000 + i as i64;
        }
        if i <= n - 2 && i > 0 && (n - 2 - i) % 5 == 0 {
            want = i as i64;
        }
        assert_eq!(v, want, "index {i}");
    }
    let e = k
        .call_range(&s, 0, n as i64 + 1, 1, &[(&mut x).into(), 0i64.into()])
        .unwrap_err();
    assert!(e.to_string().contains("past argument `x`"), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn strided_and_broadcast_inputs_and_outputs() {
    let mut rng = Rng::fresh();
    let s = stream();
    let (r, c) = (37usize, 53usize);
    let mh: Vec<f64> = rng.vec(r * c);
    let rowh: Vec<f64> = rng.vec(2 * r);
    let m = GpuArray::from_shape_slice(&s, &[r, c], &mh).unwrap();
    let rows = GpuArray::from_slice(&s, &rowh).unwrap();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let add = unsafe {
        ElementwiseKernel::new(
            "const double *a, const double *b, double *out",
            "out[i] = a[i] - 2.0 * b[i]",
            "sub2",
        )
    }
    .unwrap();
    // a: the transposed matrix (c x r); b: every other element reversed, broadcast over
    // the c rows; out: contiguous.
    let a = m.transpose();
    let b = rows
        .slice(&[SliceArg::stepped(None, None, -2)])
        .unwrap()
        .insert_axis(0)
        .unwrap();
    let mut out = GpuArray::full(&s, &[c, r], f64::NAN).unwrap();
    add.call(&s, &[(&a).into(), (&b).into(), (&mut out).into()])
        .unwrap();
    let bh: Vec<f64> = (0..r).map(|k| rowh[2 * r - 1 - 2 * k]).collect();
    let want: Vec<f64> = (0..c * r)
        .map(|k| {
            let (i, j) = (k / r, k % r);
            mh[j * c + i] - 2.0 * bh[j]
        })
        .collect();
    assert_close(&out.to_vec().unwrap(), &want, 1e-12);
    // A strided output: write into the transpose of a fresh matrix.
    let mut t = GpuArray::full(&s, &[r, c], f64::NAN).unwrap().transpose();
    add.call(&s, &[(&a).into(), (&b).into(), (&mut t).into()])
        .unwrap();
    assert_close(&t.to_vec().unwrap(), &want, 1e-12);
    // Written arrays may not be broadcast.
    let mut small = GpuArray::<f64>::zeros(&s, &[r]).unwrap();
    let e = add
        .call(&s, &[(&a).into(), (&b).into(), (&mut small).into()])
        .unwrap_err();
    assert!(e.to_string().contains("argument `out`"), "{e}");
}

fn copy_every_layout<T: RandomElement>(rng: &mut Rng) {
    let s = stream();
    let spec = ElementwiseSpec::builder("copy")
        .arg(ArgSpec::const_vector("src", T::DTYPE))
        .arg(ArgSpec::vector("dst", T::DTYPE))
        .operation("dst[i] = src[i]")
        .build()
        .unwrap();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let k = unsafe { ElementwiseKernel::from_spec(spec) };
    let n = 4099usize;
    let h: Vec<T> = rng.vec(n);
    let src = GpuArray::from_slice(&s, &h).unwrap();
    let poison = T::random(rng);
    // vectorized
    let mut dst = GpuArray::full(&s, &[n], poison).unwrap();
    k.call(&s, &[(&src).into(), (&mut dst).into()]).unwrap();
    assert_eq!(dst.to_vec().unwrap(), h, "{}", T::DTYPE);
    // strided: reversed source
    let rev = src.flip(0).unwrap();
    let mut dst = GpuArray::full(&s, &[n], poison).unwrap();
    k.call(&s, &[(&rev).into(), (&mut dst).into()]).unwrap();
    let want: Vec<T> = h.iter().rev().copied().collect();
    assert_eq!(dst.to_vec().unwrap(), want, "{}", T::DTYPE);
}

#[test]
#[ignore = "needs a CUDA device"]
fn copies_of_every_dtype_are_bit_exact() {
    let mut rng = Rng::fresh();
    copy_every_layout::<bool>(&mut rng);
    copy_every_layout::<i8>(&mut rng);
    copy_every_layout::<u16>(&mut rng);
    copy_every_layout::<i32>(&mut rng);
    copy_every_layout::<u64>(&mut rng);
    copy_every_layout::<f16>(&mut rng);
    copy_every_layout::<bf16>(&mut rng);
    copy_every_layout::<f32>(&mut rng);
    copy_every_layout::<f64>(&mut rng);
    copy_every_layout::<Complex<f32>>(&mut rng);
    copy_every_layout::<Complex<f64>>(&mut rng);
}

#[test]
#[ignore = "needs a CUDA device"]
fn half_bfloat16_and_complex_arithmetic() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 10_001;
    let hh: Vec<f16> = rng.vec(n);
    let bh: Vec<bf16> = rng.vec(n);
    let ch: Vec<Complex<f64>> = rng.vec(n);
    let h = GpuArray::from_slice(&s, &hh).unwrap();
    let b = GpuArray::from_slice(&s, &bh).unwrap();
    let c = GpuArray::from_slice(&s, &ch).unwrap();
    let mut oh = GpuArray::full(&s, &[n], f16::NAN).unwrap();
    let mut ob = GpuArray::full(&s, &[n], bf16::NAN).unwrap();
    let mut oc = GpuArray::full(&s, &[n], Complex::new(f64::NAN, f64::NAN)).unwrap();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let k = unsafe {
        ElementwiseKernel::new(
            "const __half *h, const __nv_bfloat16 *b, const complex<double> *c, __half *oh, \
         __nv_bfloat16 *ob, complex<double> *oc",
            "oh[i] = h[i] * 0.5f + 1.0f; ob[i] = (float)b[i] * 2.0f; \
         oc[i] = c[i] * conj(c[i]) / (c[i] + 1.0) + (double)(float)h[i]",
            "mixed",
        )
    }
    .unwrap();
    k.call(
        &s,
        &[
            (&h).into(),
            (&b).into(),
            (&c).into(),
            (&mut oh).into(),
            (&mut ob).into(),
            (&mut oc).into(),
        ],
    )
    .unwrap();
    let want_h: Vec<f16> = hh
        .iter()
        .map(|v| f16::from_f32(v.to_f32() * 0.5 + 1.0))
        .collect();
    assert_eq!(oh.to_vec().unwrap(), want_h);
    let want_b: Vec<bf16> = bh
        .iter()
        .map(|v| bf16::from_f32(v.to_f32() * 2.0))
        .collect();
    assert_eq!(ob.to_vec().unwrap(), want_b);
    let got_c = oc.to_vec().unwrap();
    for k in 0..n {
        let z = ch[k];
        let want = z * z.conj() / (z + 1.0) + hh[k].to_f64();
        assert!(
            (got_c[k] - want).norm() <= 1e-12 * want.norm().max(1.0),
            "{k}: {} vs {want}",
            got_c[k]
        );
    }
}

/// NumPy's complex division by zero divides each part by +0 (Smith's formula alone gives
/// NaN for both): `(1+2j)/0 = inf+infj`, `(-1+0j)/0 = -inf+nanj`, `0/0 = nan+nanj`;
/// PyCUDA's `test_binary_ops_with_unequal_dtypes[truediv-int32-complex64]` checks it.
#[test]
#[ignore = "needs a CUDA device"]
fn complex_division_by_zero_is_numpys() {
    let s = stream();
    let num = [
        Complex::new(1.0f64, 2.0),
        Complex::new(-1.0, 0.0),
        Complex::new(0.0, 0.0),
        Complex::new(3.0, -4.0),
    ];
    let den = [
        Complex::new(0.0f64, 0.0),
        Complex::new(-0.0, 0.0),
        Complex::new(0.0, -0.0),
        Complex::new(0.0, 2.0),
    ];
    let a = GpuArray::from_slice(&s, &num).unwrap();
    let b = GpuArray::from_slice(&s, &den).unwrap();
    let mut q = GpuArray::full(&s, &[4], Complex::new(7.0, 7.0)).unwrap();
    // SAFETY: the kernel's code touches only element i of each array argument.
    let k = unsafe {
        ElementwiseKernel::new(
            "const complex<double> *a, const complex<double> *b, complex<double> *q",
            "q[i] = a[i] / b[i]",
            "cdiv",
        )
    }
    .unwrap();
    k.call(&s, &[(&a).into(), (&b).into(), (&mut q).into()])
        .unwrap();
    let got = q.to_vec().unwrap();
    let inf = f64::INFINITY;
    let want = [
        (inf, inf),
        (-inf, f64::NAN),
        (f64::NAN, f64::NAN),
        (-2.0, -1.5),
    ];
    for (k, (g, (re, im))) in got.iter().zip(want).enumerate() {
        let same = |x: f64, y: f64| x == y || (x.is_nan() && y.is_nan());
        assert!(same(g.re, re) && same(g.im, im), "{k}: {g} vs {re}+{im}j");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn bad_calls_name_the_argument() {
    let s = stream();
    let x = GpuArray::<f32>::zeros(&s, &[10]).unwrap();
    let mut z = GpuArray::<f32>::zeros(&s, &[10]).unwrap();
    let zi = GpuArray::<i32>::zeros(&s, &[10]).unwrap();
    let k = saxpy();
    // A complex scalar for a `float` argument does not convert (NumPy's same_kind).
    let e = k
        .call(
            &s,
            &[
                Complex::new(2.0f32, 1.0).into(),
                (&x).into(),
                (&x).into(),
                (&mut z).into(),
            ],
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("argument `a`") && e.to_string().contains("complex64 scalar"),
        "{e}"
    );
    let e = k
        .call(
            &s,
            &[2.0f32.into(), (&zi).into(), (&x).into(), (&mut z).into()],
        )
        .unwrap_err();
    assert!(e.to_string().contains("argument `x`"), "{e}");
    let e = k
        .call(&s, &[2.0f32.into(), (&x).into(), (&x).into(), (&z).into()])
        .unwrap_err();
    assert!(e.to_string().contains("pass `&mut`"), "{e}");
    let e = k.call(&s, &[2.0f32.into()]).unwrap_err();
    assert!(
        e.to_string().contains("takes 4 arguments, 1 were given"),
        "{e}"
    );
    let y = GpuArray::<f32>::zeros(&s, &[11]).unwrap();
    let e = k
        .call(
            &s,
            &[2.0f32.into(), (&x).into(), (&y).into(), (&mut z).into()],
        )
        .unwrap_err();
    assert!(matches!(e, ArrayError::Layout(_)), "{e}");
    assert!(e.to_string().contains("[10] and [11]"), "{e}");
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let diff = unsafe {
        ElementwiseKernel::new(
            "const float *x, float *z",
            "z[i] = x[i] - x[i > 0 ? i - 1 : 0]",
            "diff",
        )
    }
    .unwrap();
    let xs = x.slice(&[SliceArg::stepped(None, None, -1)]).unwrap();
    let e = diff.call(&s, &[(&xs).into(), (&mut z).into()]).unwrap_err();
    assert!(e.to_string().contains("is not contiguous"), "{e}");
    // The same kernel on contiguous arrays is fine.
    diff.call(&s, &[(&x).into(), (&mut z).into()]).unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn more_than_2_pow_31_elements() {
    if rucuda_testkit::skip_under_sanitizer("over 2^31 elements: hours under instrumentation") {
        return;
    }
    let s = stream();
    let n = (1usize << 31) + 1001;
    let mut x = GpuArray::<u8>::full(&s, &[n], 0xAB).unwrap();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let k = unsafe {
        ElementwiseKernel::new("unsigned char *x", "x[i] = (unsigned char)(i % 251)", "big")
    }
    .unwrap();
    k.call(&s, &[(&mut x).into()]).unwrap();
    for start in [0usize, (1 << 31) - 300, n - 700] {
        let v = x
            .slice(&[SliceArg::range(start as isize, start as isize + 600)])
            .unwrap()
            .to_vec()
            .unwrap();
        for (k, &b) in v.iter().enumerate() {
            assert_eq!(b as usize, (start + k) % 251, "index {}", start + k);
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn negative_range_bounds_are_refused_and_slices_count_from_the_end() {
    let s = stream();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let k = unsafe {
        ElementwiseKernel::new("long long *x, long long mark", "x[i] = mark + i", "marker2")
    }
    .unwrap();
    let n = 1000usize;
    let mut x = GpuArray::full(&s, &[n], -7i64).unwrap();
    // PyCUDA-style `range(1000, -1, 1)`: never a silent no-op.
    for (start, stop, step) in [(1000, -1, 1), (-5, 10, 1), (0, -3, 2), (-1, -10, -1)] {
        let e = k
            .call_range(&s, start, stop, step, &[(&mut x).into(), 0i64.into()])
            .unwrap_err();
        assert!(
            matches!(
                e,
                ArrayError::Codegen(rucuda_array::codegen::CodegenError::NegativeRangeBound { .. })
            ),
            "{e}"
        );
        assert!(e.to_string().contains("call_slice"), "{e}");
    }
    // stop == -1 with a negative step walks down to index 0.
    k.call_range(&s, 9, -1, -1, &[(&mut x).into(), 100i64.into()])
        .unwrap();
    // Slices: the last 10 with step 3 counting from the end, and a reversed slice.
    k.call_slice(&s, Some(-10), None, 3, &[(&mut x).into(), 2000i64.into()])
        .unwrap();
    k.call_slice(
        &s,
        Some(-20),
        Some(-30),
        -4,
        &[(&mut x).into(), 5000i64.into()],
    )
    .unwrap();
    // An empty slice runs nothing, without error (Python's semantics).
    k.call_slice(&s, Some(1000), Some(-1), 1, &[(&mut x).into(), 9i64.into()])
        .unwrap();
    let got = x.to_vec().unwrap();
    let mut want = vec![-7i64; n];
    for (i, w) in want.iter_mut().enumerate().take(10) {
        *w = 100 + i as i64;
    }
    for i in (n - 10..n).step_by(3) {
        want[i] = 2000 + i as i64;
    }
    let mut i = n - 20;
    while i > n - 30 {
        want[i] = 5000 + i as i64;
        i -= 4;
    }
    assert_eq!(got, want);
}

#[test]
#[ignore = "needs a CUDA device"]
fn scalars_convert_to_the_declared_type() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 1001;
    let xh = rng.vec::<f32>(n);
    let x = GpuArray::from_slice(&s, &xh).unwrap();
    let k = saxpy();
    // An f64, an i64 and a bool for `float a`: converted as PyCUDA packs them.
    for (a, av) in [
        (rucuda_array::elementwise::KernelValue::from(0.1f64), 0.1f32),
        (3i64.into(), 3.0f32),
        (true.into(), 1.0f32),
    ] {
        let mut z = GpuArray::full(&s, &[n], f32::NAN).unwrap();
        k.call(&s, &[a, (&x).into(), (&x).into(), (&mut z).into()])
            .unwrap();
        // The kernel may fuse `a * x + y` into one rounding: compare in f64.
        let want: Vec<f64> = xh
            .iter()
            .map(|&v| f64::from(av) * f64::from(v) + f64::from(v))
            .collect();
        assert_close(&f64s(&z.to_vec().unwrap()), &want, 1e-6);
    }
    // An integer argument: an i64 that fits converts, one that does not and a float are
    // refused with the reason.
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let add =
        unsafe { ElementwiseKernel::new("signed char d, signed char *y", "y[i] += d", "add_i8") }
            .unwrap();
    let mut y = GpuArray::from_slice(&s, &[1i8, 2, 3]).unwrap();
    add.call(&s, &[(-5i64).into(), (&mut y).into()]).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![-4, -3, -2]);
    let e = add.call(&s, &[300i64.into(), (&mut y).into()]).unwrap_err();
    assert!(e.to_string().contains("300 does not fit"), "{e}");
    let e = add.call(&s, &[1.0f64.into(), (&mut y).into()]).unwrap_err();
    assert!(
        e.to_string().contains("does not convert to an integer"),
        "{e}"
    );
    let e = add
        .call_range(&s, 0, 3, 1, &[2.5f32.into(), (&mut y).into()])
        .unwrap_err();
    assert!(e.to_string().contains("argument `d`"), "{e}");
}
