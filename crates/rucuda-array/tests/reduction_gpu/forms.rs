//! The other forms of reduction: the subset forms and their index checks, a
//! struct reduction, ReductionKernel from the string form with two arrays and a scalar,
//! determinism, strided views, 2^28 float32, more than 2^31 elements, refused calls.

use crate::common::{stream, RandomElement, RandomVec, Rng};
use crate::{assert_sum_close, into_poisoned, kahan, upload, SIZES};
use rucuda_array::reduction::{ReductionKernel, ReductionSpec};
use rucuda_array::{DType, GpuArray, SliceArg};

#[test]
#[ignore = "needs a CUDA device"]
fn subset_reductions_and_their_index_checks() {
    let mut rng = Rng::fresh();
    let s = stream();
    for (n, m) in [
        (1usize, 1usize),
        (31, 1000),
        (1000, 31),
        (1 << 20, (1 << 20) + 7),
    ] {
        let xh: Vec<i64> = rng.vec(n);
        let yh: Vec<i64> = rng.vec(n);
        let idx: Vec<i32> = (0..m).map(|_| rng.below(n as u64) as i32).collect();
        let (x, y, i) = (upload(&s, &xh), upload(&s, &yh), upload(&s, &idx));
        let pick = |v: &[i64]| idx.iter().map(|&k| v[k as usize]).collect::<Vec<_>>();
        let (px, py) = (pick(&xh), pick(&yh));
        let sum = px.iter().fold(0i64, |a, &b| a.wrapping_add(b));
        let dot = px
            .iter()
            .zip(&py)
            .fold(0i64, |a, (&p, &q)| a.wrapping_add(p.wrapping_mul(q)));
        assert_eq!(
            x.subset_sum(&i).unwrap().to_scalar().unwrap(),
            sum,
            "n={n} m={m}"
        );
        assert_eq!(x.subset_dot(&y, &i).unwrap().to_scalar().unwrap(), dot);
        assert_eq!(
            x.subset_max(&i).unwrap().to_scalar().unwrap(),
            *px.iter().max().unwrap()
        );
        assert_eq!(
            x.subset_min(&i).unwrap().to_scalar().unwrap(),
            *px.iter().min().unwrap()
        );
        // Float values, 64-bit indices.
        let fh: Vec<f32> = rng.vec(n);
        let f = upload(&s, &fh);
        let idx64: Vec<i64> = idx.iter().map(|&k| k as i64).collect();
        let i64s = upload(&s, &idx64);
        let (want, abs) = kahan(idx.iter().map(|&k| fh[k as usize] as f64));
        let got = f.subset_sum(&i64s).unwrap().to_scalar().unwrap() as f64;
        assert_sum_close(
            got,
            want,
            abs,
            m,
            f32::EPSILON as f64,
            0.0,
            "subset_sum f32",
        );
    }
    let x = upload(&s, &[1.0f32, 2.0, 3.0]);
    for bad in [vec![0i64, 3], vec![-1i64], vec![2, 1, 7, 0]] {
        let i = upload(&s, &bad);
        let e = x.subset_sum(&i).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
    }
    let empty = GpuArray::<u32>::empty(&s, &[0]).unwrap();
    assert_eq!(x.subset_sum(&empty).unwrap().to_scalar().unwrap(), 0.0);
    assert!(x.subset_max(&empty).is_err());
    // A strided value array is copied before the gather.
    let big = upload(&s, &[5i32, 0, 6, 0, 7, 0]);
    let odd = big.slice(&[SliceArg::stepped(None, None, 2)]).unwrap();
    let i = upload(&s, &[2u8, 2, 0]);
    assert_eq!(odd.subset_sum(&i).unwrap().to_scalar().unwrap(), 19);
}

/// PyCUDA's struct reduction: minimum and maximum in one pass.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct MinMax {
    lo: f32,
    hi: f32,
}

// SAFETY: two f32, no padding; every bit pattern is a valid value.
unsafe impl rucuda_driver::DeviceRepr for MinMax {
    const C_TYPE: &'static str = "minmax_collector";
}

fn minmax_kernel() -> ReductionKernel {
    let spec = ReductionSpec::builder("minmax")
        .preamble(
            "struct minmax_collector {\n  float lo, hi;\n  __device__ minmax_collector() {}\n  \
             __device__ minmax_collector(float l, float h) : lo(l), hi(h) {}\n};\n\
             __device__ minmax_collector agg(minmax_collector a, minmax_collector b)\n\
             { return minmax_collector(fminf(a.lo, b.lo), fmaxf(a.hi, b.hi)); }",
        )
        .output_struct::<MinMax>("minmax_collector")
        .neutral("minmax_collector(3.4e38f, -3.4e38f)")
        .reduce("agg(a, b)")
        .map("minmax_collector(x[i], x[i])")
        .input::<f32>("x")
        .build()
        .unwrap();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    unsafe { ReductionKernel::from_spec(spec) }
}

#[test]
#[ignore = "needs a CUDA device"]
fn struct_reduction_finds_min_and_max_together() {
    let mut rng = Rng::fresh();
    let s = stream();
    let k = minmax_kernel();
    for n in [1usize, 31, 1000, (1 << 20) + 7] {
        let xh: Vec<f32> = rng.vec(n);
        let x = upload(&s, &xh);
        let got: MinMax = k.call_struct_to_host(&s, &[(&x).into()]).unwrap();
        let lo = xh.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = xh.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(got, MinMax { lo, hi }, "n={n}");
        // The device-buffer form, read back through the driver.
        let dev = k.call_struct::<MinMax>(&s, &[(&x).into()]).unwrap();
        s.synchronize().unwrap();
        assert_eq!(dev.to_vec().unwrap(), vec![MinMax { lo, hi }]);
    }
    let x = upload(&s, &[1.0f32]);
    // The wrong Rust type for the struct is refused.
    assert!(k.call_struct::<[f32; 4]>(&s, &[(&x).into()]).is_err());
    assert!(k.call::<f32>(&s, &[(&x).into()]).is_err());
}

#[test]
#[ignore = "needs a CUDA device"]
fn string_form_with_two_arrays_a_scalar_and_out() {
    let mut rng = Rng::fresh();
    let s = stream();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let k = unsafe {
        ReductionKernel::new(
            DType::F64,
            "0",
            "a+b",
            "w * x[i] * y[i]",
            "double w, const float *x, const double *y",
            "weighted_dot",
        )
    }
    .unwrap();
    for n in SIZES {
        let xh: Vec<f32> = rng.vec(n);
        let yh: Vec<f64> = rng.vec(n);
        let w = f64::random(&mut rng);
        let (x, y) = (upload(&s, &xh), upload(&s, &yh));
        let (want, abs) = kahan(xh.iter().zip(&yh).map(|(&a, &b)| w * a as f64 * b));
        let got = into_poisoned(&s, f64::NAN, |out| {
            k.call_into(&s, &[w.into(), (&x).into(), (&y).into()], out)
        });
        assert_sum_close(got, want, abs, n, f64::EPSILON, 0.0, &format!("n={n}"));
        let host: f64 = k
            .call_to_host(&s, &[w.into(), (&x).into(), (&y).into()])
            .unwrap();
        assert_eq!(
            host.to_bits(),
            got.to_bits(),
            "n={n}: same kernel, same bits"
        );
    }
    // Refusals name the argument.
    let x = upload(&s, &[1.0f32, 2.0]);
    let y64 = upload(&s, &[1.0f64, 2.0]);
    let y32 = upload(&s, &[1.0f32, 2.0]);
    let e = k
        .call::<f64>(&s, &[1.0f64.into(), (&x).into(), (&y32).into()])
        .unwrap_err();
    assert!(e.to_string().contains("`y`"), "{e}");
    let e = k
        .call::<f64>(&s, &[1.0f64.into(), (&x).into()])
        .unwrap_err();
    assert!(e.to_string().contains("takes 3 arguments"), "{e}");
    // A scalar converts to its declared type (an i64 for a double); a complex does not.
    let conv = k
        .call_to_host::<f64>(&s, &[2i64.into(), (&x).into(), (&y64).into()])
        .unwrap();
    let same = k
        .call_to_host::<f64>(&s, &[2.0f64.into(), (&x).into(), (&y64).into()])
        .unwrap();
    assert_eq!(conv, same);
    let e = k
        .call::<f64>(
            &s,
            &[
                rucuda_array::Complex::new(1.0f64, 0.0).into(),
                (&x).into(),
                (&y64).into(),
            ],
        )
        .unwrap_err();
    assert!(e.to_string().contains("complex"), "{e}");
    let e = k
        .call::<f32>(&s, &[1.0f64.into(), (&x).into(), (&y64).into()])
        .unwrap_err();
    assert!(e.to_string().contains("float64"), "{e}");
    let short = upload(&s, &[1.0f64]);
    let e = k
        .call::<f64>(&s, &[1.0f64.into(), (&x).into(), (&short).into()])
        .unwrap_err();
    assert!(e.to_string().contains("shape"), "{e}");
    let mut two = GpuArray::<f64>::zeros(&s, &[2]).unwrap();
    assert!(k
        .call_into(&s, &[1.0f64.into(), (&x).into(), (&y64).into()], &mut two)
        .is_err());
}

#[test]
#[ignore = "needs a CUDA device"]
fn results_are_deterministic() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = (1 << 24) + 3;
    let xh: Vec<f32> = rng.vec(n);
    let x = upload(&s, &xh);
    let copy = upload(&s, &xh);
    let first = x.sum().unwrap().to_scalar().unwrap().to_bits();
    for _ in 0..3 {
        assert_eq!(x.sum().unwrap().to_scalar().unwrap().to_bits(), first);
    }
    assert_eq!(copy.sum().unwrap().to_scalar().unwrap().to_bits(), first);
    let d = x.dot(&copy).unwrap().to_scalar().unwrap().to_bits();
    assert_eq!(copy.dot(&x).unwrap().to_scalar().unwrap().to_bits(), d);
}

#[test]
#[ignore = "needs a CUDA device"]
fn strided_views_reduce_through_their_strides() {
    let mut rng = Rng::fresh();
    let s = stream();
    let (rows, cols) = (301usize, 257usize);
    let h: Vec<i32> = rng.vec(rows * cols);
    let a = GpuArray::from_shape_slice(&s, &[rows, cols], &h).unwrap();
    let host = ndarray::Array2::from_shape_vec((rows, cols), h.clone()).unwrap();
    let views = [
        a.transpose(),
        a.slice(&[
            SliceArg::stepped(None, None, 3),
            SliceArg::stepped(None, None, -2),
        ])
        .unwrap(),
        a.slice(&[SliceArg::All, SliceArg::index(7)]).unwrap(),
        a.reverse().unwrap(),
    ];
    for v in &views {
        let hv = v.to_vec().unwrap();
        let sum = hv.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        assert_eq!(
            v.sum().unwrap().to_scalar().unwrap(),
            sum,
            "{:?}",
            v.strides()
        );
        let max = *hv.iter().max().unwrap();
        assert_eq!(v.max().unwrap().to_scalar().unwrap(), max);
        let arg = hv.iter().position(|&x| x == max).unwrap() as i64;
        assert_eq!(
            v.argmax().unwrap().to_scalar().unwrap(),
            arg,
            "{:?}",
            v.strides()
        );
    }
    // dot of a transposed view with a contiguous array of its shape.
    let t = a.transpose();
    let th: Vec<i32> = rng.vec(rows * cols);
    let b = GpuArray::from_shape_slice(&s, &[cols, rows], &th).unwrap();
    let want = host
        .t()
        .iter()
        .zip(&th)
        .fold(0i32, |acc, (&p, &q)| acc.wrapping_add(p.wrapping_mul(q)));
    assert_eq!(t.dot(&b).unwrap().to_scalar().unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA device"]
fn sum_max_and_dot_of_2_pow_28_float32() {
    let mut rng = Rng::fresh();
    let s = stream();
    // 2^24 under compute-sanitizer: the same kernels on less data.
    let n = rucuda_testkit::scaled_for_sanitizer(1usize << 28, 1 << 24);
    let xh: Vec<f32> = rng.vec(n);
    let x = upload(&s, &xh);
    let (want, abs) = kahan(xh.iter().map(|&v| v as f64));
    let got = into_poisoned(&s, f32::NAN, |out| {
        // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
        let k = unsafe {
            ReductionKernel::new(DType::F32, "0", "a+b", "x[i]", "const float *x", "s28")
        }?;
        k.call_into(&s, &[(&x).into()], out)
    });
    // Bound: each thread folds n / threads elements, then two trees.
    assert_sum_close(
        got as f64,
        want,
        abs,
        4096,
        f32::EPSILON as f64,
        0.0,
        "sum 2^28",
    );
    let method = x.sum().unwrap().to_scalar().unwrap();
    assert_sum_close(
        method as f64,
        want,
        abs,
        4096,
        f32::EPSILON as f64,
        0.0,
        "sum()",
    );
    let m = rng.below(n as u64) as usize;
    let mut yh = xh;
    yh[m] = 1.0e6;
    let y = upload(&s, &yh);
    assert_eq!(y.max().unwrap().to_scalar().unwrap(), 1.0e6);
    assert_eq!(y.argmax().unwrap().to_scalar().unwrap(), m as i64);
    let (want, abs) = kahan(yh.iter().map(|&v| v as f64 * v as f64));
    let got = y.dot(&y).unwrap().to_scalar().unwrap();
    assert_sum_close(
        got as f64,
        want,
        abs,
        4096,
        f32::EPSILON as f64,
        0.0,
        "dot 2^28",
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn more_than_2_pow_31_elements() {
    if rucuda_testkit::skip_under_sanitizer("over 2^31 elements: hours under instrumentation") {
        return;
    }
    let mut rng = Rng::fresh();
    let s = stream();
    let n = (1usize << 31) + 7;
    let mut xh: Vec<u8> = (0..n).map(|_| (rng.next_u64() % 255) as u8).collect();
    // The only 255 lies beyond index 2^31: argmax must find it with 64-bit indices.
    let m = (1usize << 31) + rng.below(7) as usize;
    xh[m] = 255;
    let want: i64 = xh.iter().map(|&v| v as i64).sum();
    let x = upload(&s, &xh);
    drop(xh);
    assert_eq!(x.sum_as::<i64>().unwrap().to_scalar().unwrap(), want);
    assert_eq!(x.max().unwrap().to_scalar().unwrap(), 255);
    assert_eq!(x.argmax().unwrap().to_scalar().unwrap(), m as i64);
}

#[test]
#[ignore = "needs a CUDA device"]
fn refused_calls() {
    let s = stream();
    let empty = GpuArray::<f32>::empty(&s, &[0]).unwrap();
    assert_eq!(empty.sum().unwrap().to_scalar().unwrap(), 0.0);
    let e = empty.max().unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
    let a = GpuArray::<f32>::ones(&s, &[3]).unwrap();
    let b = GpuArray::<f32>::ones(&s, &[4]).unwrap();
    let e = a.dot(&b).unwrap_err();
    assert!(
        e.to_string().contains("[4]") && e.to_string().contains("[3]"),
        "{e}"
    );
    assert!(a.sum().unwrap().to_scalar().is_ok());
    assert!(a.to_scalar().is_err(), "three elements are not a scalar");
}
