//! GPU tests of the fusion API: fused results are bit-identical to the same expression
//! evaluated one operation at a time (every type, arithmetic, comparisons, where, math,
//! casts, complex), broadcasting and non-contiguous leaves, evaluation into arrays and
//! in place, memoization by structure (not scalar values), errors, a large vectorized
//! run. Fresh random inputs, outputs poisoned.

mod common;

use common::{stream, RandomElement, RandomVec, Rng};
use rucuda_array::fusion::Expr;
use rucuda_array::ops::{self, BinaryOp};
use rucuda_array::{bf16, f16, fuse, math, ArrayError, Complex, Element, GpuArray, SliceArg};
use rucuda_driver::{Stream, StreamFlags};

/// The stored bytes of every element (bitwise comparison, NaN included).
fn bits<T: Element>(a: &GpuArray<T>) -> Vec<Vec<u8>> {
    a.to_vec()
        .unwrap()
        .into_iter()
        .map(|v| bytemuck::bytes_of(&v.to_storage()).to_vec())
        .collect()
}

fn assert_same<T: Element>(what: &str, fused: &GpuArray<T>, unfused: &GpuArray<T>) {
    assert_eq!(fused.shape(), unfused.shape(), "{what}: shapes");
    let (f, u) = (bits(fused), bits(unfused));
    let (fv, uv) = (fused.to_vec().unwrap(), unfused.to_vec().unwrap());
    for (k, (a, b)) in f.iter().zip(&u).enumerate() {
        // NaN payloads are not specified by the hardware (seen on the H100: max(-x, y)
        // fused gave 0xffc00000, unfused 0x7fffffff): two NaNs are equal here.
        let (x, y) = (fv[k].to_complex_f64(), uv[k].to_complex_f64());
        let nan = |(re, im): (f64, f64)| re.is_nan() || im.is_nan();
        if nan(x) && nan(y) {
            continue;
        }
        assert_eq!(
            a,
            b,
            "{what}: element {k} differs: fused {:?}, unfused {:?}",
            fused.to_vec().unwrap()[k],
            unfused.to_vec().unwrap()[k]
        );
    }
}

fn poison_pool(s: &Stream) {
    drop(GpuArray::<u32>::full(s, &[1 << 22], 0xA5A5_A5A5).unwrap());
}

fn axpy_for<T>(s: &Stream, rng: &mut Rng)
where
    T: RandomElement + ops::PromoteWeak<f64> + ops::Promote<<T as ops::PromoteWeak<f64>>::Output>,
    <T as ops::PromoteWeak<f64>>::Output: ops::Promote<T>,
{
    let n = 100_003;
    let x = GpuArray::from_slice(s, &rng.vec::<T>(n)).unwrap();
    let y = GpuArray::from_slice(s, &rng.vec::<T>(n)).unwrap();
    poison_pool(s);
    let unfused = ((2.0f64 * &x).unwrap() + &y).unwrap();
    poison_pool(s);
    let e = fuse!(x, y => 2.0 * x + y);
    assert_eq!(e.dtype(), unfused.dtype());
    let fused = e.eval().unwrap();
    assert_same(&format!("2x + y, {}", T::DTYPE), &fused, &unfused);
}

#[test]
#[ignore = "needs a CUDA device"]
fn axpy_fused_equals_unfused_bitwise_for_every_type() {
    let mut rng = Rng::fresh();
    let s = stream();
    axpy_for::<f32>(&s, &mut rng);
    axpy_for::<f64>(&s, &mut rng);
    axpy_for::<f16>(&s, &mut rng);
    axpy_for::<bf16>(&s, &mut rng);
    axpy_for::<Complex<f32>>(&s, &mut rng);
    axpy_for::<Complex<f64>>(&s, &mut rng);
}

#[test]
#[ignore = "needs a CUDA device"]
fn expressions_fused_equal_their_unfused_evaluation() {
    let mut rng = Rng::fresh();
    let s = stream();
    let n = 4099;
    let xh = rng.vec::<f32>(n);
    let yh = rng.vec::<f32>(n);
    let (x, y) = (
        GpuArray::from_slice(&s, &xh).unwrap(),
        GpuArray::from_slice(&s, &yh).unwrap(),
    );

    // sqrt(x*x + y) clipped: math and NaN (negative radicands).
    let f: GpuArray<f32> = fuse!(x, y => (x * x + y).sqrt().minimum(10.0))
        .eval()
        .unwrap();
    let u = math::sqrt(&((&x * &x).unwrap() + &y).unwrap())
        .unwrap()
        .minimum(10.0)
        .unwrap();
    assert_same("sqrt(x*x + y) min 10", &f, &u);

    // (x - y)^2 * 0.5 + sin(x).
    let f: GpuArray<f32> = fuse!(x, y => (x - y).pow(2) * 0.5 + x.sin())
        .eval()
        .unwrap();
    let u =
        (((&x - &y).unwrap().pow(2).unwrap() * 0.5).unwrap() + &math::sin(&x).unwrap()).unwrap();
    assert_same("(x-y)^2/2 + sin x", &f, &u);

    // where with a comparison; an f64 array mixed in.
    let zh = rng.vec::<f64>(n);
    let z = GpuArray::from_slice(&s, &zh).unwrap();
    let f: GpuArray<f64> = fuse!(x, z => Expr::where_(x.greater(0), z * 3, x - 1))
        .eval()
        .unwrap();
    let u = ops::where_(
        &x.greater(0).unwrap(),
        &(&z * 3).unwrap(),
        &(&x - 1).unwrap(),
    )
    .unwrap();
    assert_same("where(x > 0, 3z, x - 1)", &f, &u);

    // Logical combinations of comparisons to bool.
    let f: GpuArray<bool> =
        fuse!(x, y => x.less(y).logical_and(y.greater_equal(0)).logical_or(x.equal(y)))
            .eval()
            .unwrap();
    let u = x
        .less(&y)
        .unwrap()
        .logical_and(&y.greater_equal(0).unwrap())
        .unwrap()
        .logical_or(&x.equal(&y).unwrap())
        .unwrap();
    assert_same("logical", &f, &u);

    // Mixed integer and float types, division, floor division, remainder.
    let ih = rng.vec::<i16>(n);
    let i = GpuArray::from_slice(&s, &ih).unwrap();
    let f: GpuArray<f32> = fuse!(i, y => i * y + 3).eval().unwrap();
    let u = ((&i * &y).unwrap() + 3).unwrap();
    assert_same("i16 * f32 + 3", &f, &u);
    let f: GpuArray<f64> = fuse!(i => i / 7 + i.floor_div(5) - i % 3).eval().unwrap();
    let u = (((&i / 7).unwrap() + &i.floor_div(5).unwrap()).unwrap() - &(&i % 3).unwrap()).unwrap();
    assert_same("i/7 + i//5 - i%3", &f, &u);
    let f: GpuArray<i32> = fuse!(x => x.cast::<i32>() % 7).eval().unwrap();
    let u = (&x.astype::<i32>().unwrap() % 7).unwrap();
    assert_same("int(x) % 7", &f, &u);

    // f16 arithmetic rounds at every node as the unfused operations do.
    let hh = rng.vec::<f16>(n);
    let gh = rng.vec::<f16>(n);
    let (h, g) = (
        GpuArray::from_slice(&s, &hh).unwrap(),
        GpuArray::from_slice(&s, &gh).unwrap(),
    );
    let f: GpuArray<f16> = fuse!(h, g => h.abs() / (g + 1.5) - h * g).eval().unwrap();
    let u = ((h.abs().unwrap() / &(&g + 1.5).unwrap()).unwrap() - &(&h * &g).unwrap()).unwrap();
    assert_same("f16", &f, &u);

    // Complex: z * conj(z) + 1, |z|, exp.
    let ch = rng.vec::<Complex<f32>>(n);
    let c = GpuArray::from_slice(&s, &ch).unwrap();
    let f: GpuArray<Complex<f32>> = fuse!(c => c * c.conj() + 1.0).eval().unwrap();
    let u = ((&c * &c.conj().unwrap()).unwrap() + 1.0).unwrap();
    assert_same("z * conj(z) + 1", &f, &u);
    let f: GpuArray<f32> = fuse!(c => c.abs() * 2.0).eval().unwrap();
    let u = (c.abs().unwrap() * 2.0).unwrap();
    assert_same("|z| * 2", &f, &u);
    let small = (&c * 0.01f32).unwrap();
    let f: GpuArray<Complex<f32>> = fuse!(small => small.exp() - small).eval().unwrap();
    let u = (math::exp(&small).unwrap() - &small).unwrap();
    assert_same("exp(z) - z", &f, &u);

    // Negation, bitwise not, maximum with NaN, bitwise and.
    let mut xn = xh.clone();
    xn[0] = f32::NAN;
    xn[5] = f32::NAN;
    let xq = GpuArray::from_slice(&s, &xn).unwrap();
    let f: GpuArray<f32> = fuse!(xq, y => (-xq).maximum(y)).eval().unwrap();
    let u = (-&xq).unwrap().maximum(&y).unwrap();
    assert_same("max(-x, y) with NaN", &f, &u);
    let f: GpuArray<i16> = fuse!(i => !i & 0x0ff0).eval().unwrap();
    let u = ((!&i).unwrap() & 0x0ff0).unwrap();
    assert_same("!i & 0x0ff0", &f, &u);
}

#[test]
#[ignore = "needs a CUDA device"]
fn broadcasting_and_non_contiguous_leaves() {
    let mut rng = Rng::fresh();
    let s = stream();
    let (r, c) = (61, 47);
    let m = GpuArray::from_shape_slice(&s, &[r, c], &rng.vec::<f64>(r * c)).unwrap();
    let row = GpuArray::from_slice(&s, &rng.vec::<f32>(r)).unwrap();
    let col = GpuArray::from_shape_slice(&s, &[c, 1], &rng.vec::<f64>(c)).unwrap();
    let t = m.transpose(); // [c, r], strided
    let st = m
        .slice(&[SliceArg::stepped(None, None, -1), SliceArg::All])
        .unwrap()
        .transpose();
    let f: GpuArray<f64> = fuse!(t, row, col, st => t * row - col + st * 0.25)
        .eval()
        .unwrap();
    assert_eq!(f.shape(), &[c, r]);
    let u = ((((&t * &row).unwrap() - &col).unwrap()) + &(&st * 0.25).unwrap()).unwrap();
    assert_same("broadcast + strided", &f, &u);
    // A 0-d leaf.
    let k = GpuArray::from_shape_slice(&s, &[], &[1.5f64]).unwrap();
    let f: GpuArray<f64> = fuse!(k, col => col / k).eval().unwrap();
    let u = (&col / &k).unwrap();
    assert_same("0-d leaf", &f, &u);
    // Shapes that do not broadcast: the error names both.
    let bad = GpuArray::<f64>::zeros(&s, &[5]).unwrap();
    let e = fuse!(t, bad => t + bad)
        .eval::<f64>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("[47, 61]") && e.contains("[5]"), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn eval_into_in_place_other_types_and_streams() {
    let mut rng = Rng::fresh();
    let s = stream();
    let other = Stream::new(&common::ctx(), StreamFlags::NON_BLOCKING).unwrap();
    let n = 10_007;
    let xh = rng.vec::<f32>(n);
    let yh = rng.vec::<f32>(n);
    let x = GpuArray::from_slice(&s, &xh).unwrap();
    let y = GpuArray::from_slice(&s, &yh).unwrap();
    let want = ((&x * 2.0).unwrap() + &y).unwrap();
    // In place: x = 2x + y through one pointer.
    let mut xo = x.view();
    (Expr::from(&x) * 2.0 + &y).eval_into(&mut xo).unwrap();
    assert_same("x = 2x + y", &x, &want);
    // Into an f64 array (same_kind), poisoned.
    let x2 = GpuArray::from_slice(&s, &xh).unwrap();
    let mut wide = GpuArray::<f64>::full(&s, &[n], f64::NAN).unwrap();
    (Expr::from(&x2) * 2.0 + &y).eval_into(&mut wide).unwrap();
    let w: Vec<f64> = want.to_vec().unwrap().into_iter().map(f64::from).collect();
    assert_eq!(wide.to_vec().unwrap(), w);
    // Into an integer array: refused.
    let mut ints = GpuArray::<i32>::zeros(&s, &[n]).unwrap();
    assert!(matches!(
        (Expr::from(&x2) + 1.0).eval_into(&mut ints),
        Err(ArrayError::Casting { .. })
    ));
    // Into a view that overlaps a leaf other than exactly: refused.
    let mut shifted = x2.slice(&[SliceArg::range(1, n as isize)]).unwrap();
    let head = x2.slice(&[SliceArg::range(0, n as isize - 1)]).unwrap();
    assert!((Expr::from(&head) + 1.0).eval_into(&mut shifted).is_err());
    // Broadcast into a bigger output; into a strided view.
    let mut mat = GpuArray::<f32>::zeros(&s, &[3, n]).unwrap();
    (Expr::from(&y) - 1.0).eval_into(&mut mat).unwrap();
    let yv = (&y - 1.0).unwrap().to_vec().unwrap();
    assert_eq!(
        mat.to_vec().unwrap(),
        [yv.clone(), yv.clone(), yv.clone()].concat()
    );
    let mut every_other = mat
        .slice(&[SliceArg::index(1), SliceArg::stepped(None, None, 2)])
        .unwrap();
    let half = y.slice(&[SliceArg::stepped(None, None, 2)]).unwrap();
    (Expr::from(&half) * 0.0)
        .eval_into(&mut every_other)
        .unwrap();
    let got = mat.to_vec().unwrap();
    for k in 0..n {
        let want = if k % 2 == 0 { 0.0 * yh[k] } else { yv[k] };
        assert_eq!(got[n + k], want, "{k}");
    }
    // eval_on another stream.
    let r: GpuArray<f32> = (Expr::from(&y) + &y).eval_on(&other).unwrap();
    assert_eq!(r.stream().raw(), other.raw());
    assert_same("eval_on", &r, &(&y + &y).unwrap());
}

#[test]
#[ignore = "needs a CUDA device"]
fn kernels_are_memoized_by_structure_not_scalar_values() {
    let s = stream();
    let x = GpuArray::<f32>::ones(&s, &[1000]).unwrap();
    let y = GpuArray::<f32>::ones(&s, &[1000]).unwrap();
    let a: GpuArray<f32> = fuse!(x, y => 2.0 * x + y).eval().unwrap();
    let count = ops::memoized_kernel_count();
    let b: GpuArray<f32> = fuse!(x, y => 3.5 * x + y).eval().unwrap();
    assert_eq!(
        ops::memoized_kernel_count(),
        count,
        "a new scalar value compiled a new kernel"
    );
    assert_eq!(a.to_vec().unwrap(), vec![3.0; 1000]);
    assert_eq!(b.to_vec().unwrap(), vec![4.5; 1000]);
    // Another array of the same type and shape: the same kernel.
    let z = GpuArray::<f32>::zeros(&s, &[1000]).unwrap();
    let c: GpuArray<f32> = fuse!(z, y => 3.5 * z + y).eval().unwrap();
    assert_eq!(ops::memoized_kernel_count(), count);
    assert_eq!(c.to_vec().unwrap(), vec![1.0; 1000]);
    // Another structure: a new kernel. The same array twice is one argument.
    let d: GpuArray<f32> = fuse!(x => x * x + x).eval().unwrap();
    assert_eq!(ops::memoized_kernel_count(), count + 1);
    assert_eq!(d.to_vec().unwrap(), vec![2.0; 1000]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn refused_expressions_report_typed_errors() {
    let s = stream();
    let b = GpuArray::from_slice(&s, &[true, false]).unwrap();
    let e = fuse!(b => b - b).eval::<bool>().unwrap_err();
    assert!(matches!(e, ArrayError::UnsupportedType { .. }), "{e}");
    let f = GpuArray::from_slice(&s, &[1.0f32]).unwrap();
    assert!(fuse!(f => !f).eval::<f32>().is_err());
    assert!((Expr::from(2.0f64) * 3.0).eval::<f64>().is_err());
    assert!(Expr::symbol(rucuda_array::DType::F32)
        .eval::<f32>()
        .is_err());
    let c = GpuArray::from_slice(&s, &[Complex::new(1.0f32, 0.0)]).unwrap();
    assert!(fuse!(c => c.floor_div(2.0)).eval::<Complex<f32>>().is_err());
    assert!(Expr::if_positive(&c, 1.0, 2.0).eval::<f64>().is_err());
    let _ = BinaryOp::Add;
}

#[test]
#[ignore = "needs a CUDA device"]
fn large_fused_axpy_on_the_vectorized_path() {
    let s = stream();
    // 2^22 + 3 under compute-sanitizer: still the vectorized path with a ragged tail.
    let n = rucuda_testkit::scaled_for_sanitizer(1usize << 27, 1 << 22) + 3;
    let x = GpuArray::<f32>::arange(&s, 0.0, n as f64, 1.0).unwrap();
    let y = GpuArray::<f32>::full(&s, &[n], 0.5).unwrap();
    let z: GpuArray<f32> = fuse!(x, y => 2.0 * x + y).eval().unwrap();
    for k in [
        0usize,
        1,
        2,
        3,
        4,
        1 << 20,
        n / 2,
        n - 4,
        n - 3,
        n - 2,
        n - 1,
    ] {
        let v = z
            .slice(&[SliceArg::range(k as isize, k as isize + 1)])
            .unwrap()
            .to_vec()
            .unwrap()[0];
        let xk = k as f32; // arange in f64, stored as f32
        assert_eq!(v, 2.0 * xk + 0.5, "element {k}");
    }
}
