//! GPU tests of the scans: inclusive and exclusive int32 scans exact against the CPU at
//! sizes around the tile boundaries (tile - 1, tile, tile + 1, many tiles) for 1-, 4- and
//! 8-byte elements; float32 against an f64 prefix with an error bound; a max-scan; a
//! non-commutative operator (composition of affine maps) to check the order of every
//! combine; in place, misaligned views, refused overlaps; `cumsum` on arrays (every
//! element type, 2-D and strided views); 2^28 int32 and float32; more than 2^31
//! elements. Outputs are poisoned first; inputs are fresh random values.

mod common;

use common::{stream, RandomElement, RandomVec, Rng};
use rucuda_array::scan::{
    DeviceFacts, ExclusiveScanKernel, InclusiveScanKernel, L2Prefetch, ScanKernel, ScanKind,
    ScanSpec, ScanTuning,
};
use rucuda_array::{f16, Complex, DType, Element, GpuArray, SliceArg};
use rucuda_driver::Stream;

/// Elements per tile of a type of `size` bytes for large arrays on this device (16 KiB
/// tiles, or 40 KiB for 4- and 8-byte types where memory is fast:
/// `ScanTuning::for_device`; arrays under one wave of those take 16 KiB ones).
fn tile(size: usize) -> usize {
    let facts = DeviceFacts::of(stream().context()).unwrap();
    ScanTuning::for_device(size, &facts).tile_bytes() / size
}

/// Sizes that stress tile boundaries for elements of `size` bytes: the small arrays'
/// 16 KiB tiles, then arrays of more than one wave of the large arrays' tiles.
fn boundary_sizes(size: usize) -> Vec<usize> {
    let t = ScanTuning::for_size(size).tile_bytes() / size;
    let large = tile(size);
    vec![
        1,
        2,
        31,
        33,
        t - 1,
        t,
        t + 1,
        2 * t - 1,
        2 * t + 1,
        33 * t + 5,
        100 * t,
        600 * large - 1,
        600 * large + 1,
        1000 * large + 17,
    ]
}

fn poisoned<T: Element>(s: &Stream, n: usize, poison: T) -> GpuArray<T> {
    GpuArray::full(s, &[n], poison).unwrap()
}

/// The CPU scan of `xs` with `op` from `neutral`.
fn cpu_scan<T: Copy>(xs: &[T], neutral: T, kind: ScanKind, op: impl Fn(T, T) -> T) -> Vec<T> {
    let mut acc = neutral;
    xs.iter()
        .map(|&x| {
            let before = acc;
            acc = op(acc, x);
            match kind {
                ScanKind::Inclusive => acc,
                ScanKind::Exclusive => before,
            }
        })
        .collect()
}

/// Asserts equality, naming the first differing index.
fn assert_same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(k) = got.iter().zip(want).position(|(g, w)| g != w) {
        panic!(
            "{what}: first difference at {k} of {}: got {:?}, want {:?}",
            got.len(),
            got[k],
            want[k]
        );
    }
}

fn check_add_scan<T>(rng: &mut Rng, s: &Stream, wrapping_add: fn(T, T) -> T)
where
    T: RandomElement + PartialEq,
{
    let zero = T::from_f64(0.0);
    for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
        let spec = ScanSpec::builder(T::DTYPE)
            .scan("a + b")
            .neutral("0")
            .kind(kind);
        let k = match kind {
            // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
            ScanKind::Inclusive => unsafe { InclusiveScanKernel::from_builder(spec) }
                .unwrap()
                .into_kernel(),
            // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
            ScanKind::Exclusive => unsafe { ExclusiveScanKernel::from_builder(spec) }
                .unwrap()
                .into_kernel(),
        };
        for n in boundary_sizes(T::DTYPE.size_bytes()) {
            let xh: Vec<T> = rng.vec(n);
            let want = cpu_scan(&xh, zero, kind, wrapping_add);
            let x = GpuArray::from_slice(s, &xh).unwrap();
            let mut out = poisoned(s, n, T::from_f64(77.0));
            k.call(s, &x, &mut out).unwrap();
            let what = format!("{kind:?} {} n={n}", T::DTYPE);
            assert_same(&out.to_vec().unwrap(), &want, &what);
            // In place gives the same.
            let mut y = GpuArray::from_slice(s, &xh).unwrap();
            k.call_in_place(s, &mut y).unwrap();
            assert_same(&y.to_vec().unwrap(), &want, &format!("{what} in place"));
        }
    }
}

/// The tunings the bench sweeps: several tile shapes, loads and stores with and without
/// hints, prefetching near and far.
fn tunings() -> Vec<ScanTuning> {
    let mut all = vec![];
    for (threads, vectors) in [
        (128, 8),
        (128, 20),
        (256, 8),
        (128, 16),
        (64, 16),
        (256, 4),
        (128, 4),
    ] {
        let default = ScanTuning {
            threads,
            vectors,
            ..ScanTuning::for_size(4)
        };
        all.push(default);
        all.push(ScanTuning {
            streaming: false,
            prefetch: L2Prefetch::Off,
            ..default
        });
        all.push(ScanTuning {
            prefetch: L2Prefetch::Bytes(3 * default.tile_bytes() as u64),
            ..default
        });
    }
    // A look-back warp beside the tile's threads.
    for (threads, vectors) in [(128, 20), (128, 8), (64, 16)] {
        all.push(ScanTuning {
            threads,
            vectors,
            early_look_back: true,
            ..ScanTuning::for_size(4)
        });
    }
    all
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_tuning_is_exact_in_and_out_of_place() {
    let mut rng = Rng::fresh();
    let s = stream();
    for tuning in tunings() {
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
            let add = unsafe {
                ScanKernel::from_spec(
                    ScanSpec::builder(DType::I32)
                        .scan("a + b")
                        .neutral("0")
                        .kind(kind)
                        .build()
                        .unwrap(),
                )
            }
            .with_tuning(tuning)
            .unwrap();
            let t = tuning.tile_bytes() / 4;
            // Enough tiles for prefetches to land inside the array (fewer under the
            // sanitizer).
            let many = rucuda_testkit::scaled_for_sanitizer(2000, 40);
            for n in [1, 33, t - 1, t, t + 1, 3 * t + 5, many * t + 17] {
                let xh: Vec<i32> = rng.vec(n);
                let want = cpu_scan(&xh, 0, kind, i32::wrapping_add);
                let x = GpuArray::from_slice(&s, &xh).unwrap();
                let mut out = poisoned(&s, n, 77);
                add.call(&s, &x, &mut out).unwrap();
                let what = format!("{tuning:?} {kind:?} n={n}");
                assert_same(&out.to_vec().unwrap(), &want, &what);
                let mut y = GpuArray::from_slice(&s, &xh).unwrap();
                add.call_in_place(&s, &mut y).unwrap();
                assert_same(&y.to_vec().unwrap(), &want, &format!("{what} in place"));
            }
            // The order of every combine, with 8-byte elements.
            let order = affine_scan(kind).with_tuning(tuning).unwrap();
            let t = tuning.tile_bytes() / 8;
            for n in [
                t + 1,
                rucuda_testkit::scaled_for_sanitizer(1500, 30) * t + 3,
            ] {
                let xh: Vec<u64> = (0..n).map(|_| rng.next_u64() | (1 << 32)).collect();
                let want = cpu_scan(&xh, 1u64 << 32, kind, compose);
                let x = GpuArray::from_slice(&s, &xh).unwrap();
                let mut out = poisoned(&s, n, 0u64);
                order.call(&s, &x, &mut out).unwrap();
                let what = format!("affine {tuning:?} {kind:?} n={n}");
                assert_same(&out.to_vec().unwrap(), &want, &what);
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn integer_scans_are_exact_around_tile_boundaries() {
    let mut rng = Rng::fresh();
    let s = stream();
    check_add_scan::<i32>(&mut rng, &s, i32::wrapping_add);
    check_add_scan::<i64>(&mut rng, &s, i64::wrapping_add);
    check_add_scan::<u8>(&mut rng, &s, u8::wrapping_add);
}

#[test]
#[ignore = "needs a CUDA device"]
fn float_scans_stay_within_rounding_of_an_f64_prefix() {
    let mut rng = Rng::fresh();
    let s = stream();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let k = unsafe { InclusiveScanKernel::new(DType::F32, "a + b", "0") }.unwrap();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let kx = unsafe { ExclusiveScanKernel::new(DType::F32, "a + b", "0") }.unwrap();
    let t = tile(4);
    for n in [1usize, t - 1, t, t + 1, 37 * t + 3, (1 << 20) + 7] {
        let xh: Vec<f32> = (0..n).map(|_| rng.unit() as f32).collect();
        let x = GpuArray::from_slice(&s, &xh).unwrap();
        let mut out = poisoned(&s, n, f32::NAN);
        k.call(&s, &x, &mut out).unwrap();
        let got = out.to_vec().unwrap();
        let mut ex = poisoned(&s, n, f32::NAN);
        kx.call(&s, &x, &mut ex).unwrap();
        let got_ex = ex.to_vec().unwrap();
        // out[i] is a tree of partial sums: per tile at most a few dozen roundings, and
        // one more per earlier tile; bound by that many ulps of the running sum of |x|.
        let (mut prefix, mut abs) = (0.0f64, 0.0f64);
        for i in 0..n {
            let before = (prefix, abs);
            prefix += xh[i] as f64;
            abs += (xh[i] as f64).abs();
            let rounds = (i / t + 64) as f64;
            let bound = |a: f64| rounds * f32::EPSILON as f64 * a + 1e-30;
            assert!(
                (got[i] as f64 - prefix).abs() <= bound(abs),
                "inclusive n={n} i={i}: got {}, want {prefix}",
                got[i]
            );
            assert!(
                (got_ex[i] as f64 - before.0).abs() <= bound(before.1),
                "exclusive n={n} i={i}: got {}, want {}",
                got_ex[i],
                before.0
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn max_scans_of_floats_and_ints() {
    let mut rng = Rng::fresh();
    let s = stream();
    let kf =
        // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
        unsafe { InclusiveScanKernel::new(DType::F32, "fmaxf(a, b)", "__int_as_float(0xff800000)") }.unwrap();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let ki = unsafe { InclusiveScanKernel::new(DType::I32, "a > b ? a : b", "-2147483647 - 1") }
        .unwrap();
    for n in boundary_sizes(4) {
        let xh: Vec<f32> = rng.vec(n);
        let want = cpu_scan(&xh, f32::NEG_INFINITY, ScanKind::Inclusive, f32::max);
        let x = GpuArray::from_slice(&s, &xh).unwrap();
        let mut out = poisoned(&s, n, f32::NAN);
        kf.call(&s, &x, &mut out).unwrap();
        assert_same(&out.to_vec().unwrap(), &want, &format!("fmax n={n}"));
        let ih: Vec<i32> = rng.vec(n);
        let want = cpu_scan(&ih, i32::MIN, ScanKind::Inclusive, i32::max);
        let mut y = GpuArray::from_slice(&s, &ih).unwrap();
        ki.call_in_place(&s, &mut y).unwrap();
        assert_same(&y.to_vec().unwrap(), &want, &format!("imax n={n}"));
    }
}

/// [`compose`] in CUDA, for scan preambles.
const COMPOSE: &str =
    "__device__ unsigned long long compose(unsigned long long f, unsigned long long g)\n\
    {\n  unsigned int fm = (unsigned int)(f >> 32), fc = (unsigned int)f;\n  \
    unsigned int gm = (unsigned int)(g >> 32), gc = (unsigned int)g;\n  \
    return ((unsigned long long)(fm * gm) << 32) | (unsigned int)(fc * gm + gc);\n}";

/// A scan of `kind` that composes affine maps with [`COMPOSE`] (neutral: the identity map).
fn affine_scan(kind: ScanKind) -> ScanKernel {
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    unsafe {
        ScanKernel::from_spec(
            ScanSpec::builder(DType::U64)
                .preamble(COMPOSE)
                .scan("compose(a, b)")
                .neutral("1ull << 32")
                .kind(kind)
                .name("affine")
                .build()
                .unwrap(),
        )
    }
}

/// Composes affine maps x -> m x + c (mod 2^32) packed as (m << 32) | c: `compose(f, g)`
/// applies f first. Associative, not commutative: any combine out of order shows.
fn compose(f: u64, g: u64) -> u64 {
    let (fm, fc) = ((f >> 32) as u32, f as u32);
    let (gm, gc) = ((g >> 32) as u32, g as u32);
    ((fm.wrapping_mul(gm) as u64) << 32) | fc.wrapping_mul(gm).wrapping_add(gc) as u64
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_non_commutative_operator_keeps_the_order() {
    let mut rng = Rng::fresh();
    let s = stream();
    for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
        let k = affine_scan(kind);
        for n in boundary_sizes(8) {
            // Odd multipliers keep the maps invertible (no collapse to constants).
            let xh: Vec<u64> = (0..n).map(|_| rng.next_u64() | (1 << 32)).collect();
            let want = cpu_scan(&xh, 1u64 << 32, kind, compose);
            let x = GpuArray::from_slice(&s, &xh).unwrap();
            let mut out = poisoned(&s, n, 0u64);
            k.call(&s, &x, &mut out).unwrap();
            assert_same(
                &out.to_vec().unwrap(),
                &want,
                &format!("affine {kind:?} n={n}"),
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn misaligned_views_overlaps_and_refusals() {
    let mut rng = Rng::fresh();
    let s = stream();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    let k = unsafe { InclusiveScanKernel::new(DType::I32, "a + b", "0") }.unwrap();
    let n = 3 * tile(4) + 11;
    let xh: Vec<i32> = rng.vec(n + 1);
    let x = GpuArray::from_slice(&s, &xh).unwrap();
    // Input one element off 16-byte alignment: the element-wise variant.
    let view = x.slice(&[SliceArg::range(1, n as isize + 1)]).unwrap();
    let mut out = poisoned(&s, n, -1i32);
    k.call(&s, &view, &mut out).unwrap();
    let want = cpu_scan(&xh[1..], 0, ScanKind::Inclusive, i32::wrapping_add);
    assert_same(&out.to_vec().unwrap(), &want, "misaligned input");
    // Output misaligned too, inside a bigger buffer.
    let big = poisoned(&s, n + 3, -1i32);
    let mut inner = big.slice(&[SliceArg::range(3, n as isize + 3)]).unwrap();
    k.call(&s, &view, &mut inner).unwrap();
    let back = big.to_vec().unwrap();
    assert_eq!(&back[..3], &[-1, -1, -1], "nothing written before the view");
    assert_same(&back[3..], &want, "misaligned output");
    // The same array as input and output is in place; other overlaps are refused.
    let mut y = GpuArray::from_slice(&s, &xh[1..]).unwrap();
    let same = y.view();
    k.call(&s, &same, &mut y).unwrap();
    assert_same(&y.to_vec().unwrap(), &want, "same array in and out");
    let z = GpuArray::from_slice(&s, &xh).unwrap();
    let mut shifted = z.slice(&[SliceArg::range(1, n as isize + 1)]).unwrap();
    let head = z.slice(&[SliceArg::range(0, n as isize)]).unwrap();
    assert!(k.call(&s, &head, &mut shifted).is_err());
    // Wrong type, wrong length, non-contiguous, broadcast output.
    let f = GpuArray::<f32>::zeros(&s, &[4]).unwrap();
    let mut g = GpuArray::<f32>::zeros(&s, &[4]).unwrap();
    let e = k.call(&s, &f, &mut g).unwrap_err();
    assert!(e.to_string().contains("int32"), "{e}");
    let mut short = GpuArray::<i32>::zeros(&s, &[n - 1]).unwrap();
    assert!(k.call(&s, &view, &mut short).is_err());
    let strided = x.slice(&[SliceArg::stepped(None, None, 2)]).unwrap();
    let mut out2 = GpuArray::<i32>::zeros(&s, &[strided.len()]).unwrap();
    assert!(k.call(&s, &strided, &mut out2).is_err());
    // Nothing to do for an empty array.
    let e0 = GpuArray::<i32>::empty(&s, &[0]).unwrap();
    let mut o0 = GpuArray::<i32>::empty(&s, &[0]).unwrap();
    k.call(&s, &e0, &mut o0).unwrap();
}

/// `cumsum` of small random values against the CPU's running sum with `add` (wrapping
/// for integers; exact for the floats, whose running sums stay integers they hold).
fn check_cumsum<T: Element>(rng: &mut Rng, s: &Stream, gen: fn(&mut Rng) -> T, add: fn(T, T) -> T) {
    let n = 2 * tile(T::DTYPE.size_bytes()) + 5;
    let xh: Vec<T> = (0..n).map(|_| gen(rng)).collect();
    let x = GpuArray::from_slice(s, &xh).unwrap();
    let got = x.cumsum().unwrap().to_vec().unwrap();
    let want = cpu_scan(&xh, T::from_f64(0.0), ScanKind::Inclusive, add);
    assert_same(&got, &want, &format!("cumsum {}", T::DTYPE));
}

#[test]
#[ignore = "needs a CUDA device"]
fn cumsum_on_arrays_of_every_type() {
    let mut rng = Rng::fresh();
    let s = stream();
    // Small integer-valued inputs, so every type's running sums are exact.
    check_cumsum::<i8>(&mut rng, &s, |r| r.below(3) as i8 - 1, i8::wrapping_add);
    check_cumsum::<u8>(&mut rng, &s, |r| r.next_u64() as u8, u8::wrapping_add);
    check_cumsum::<i16>(&mut rng, &s, |r| r.below(7) as i16 - 3, i16::wrapping_add);
    check_cumsum::<i32>(&mut rng, &s, |r| r.next_u64() as i32, i32::wrapping_add);
    check_cumsum::<i64>(&mut rng, &s, |r| r.next_u64() as i64, i64::wrapping_add);
    check_cumsum::<u16>(&mut rng, &s, |r| r.next_u64() as u16, u16::wrapping_add);
    check_cumsum::<u32>(&mut rng, &s, |r| r.next_u64() as u32, u32::wrapping_add);
    check_cumsum::<u64>(&mut rng, &s, |r| r.next_u64(), u64::wrapping_add);
    // A walk of -1, 0, 1 stays far below 2048, where f16 still holds every integer.
    check_cumsum::<f16>(
        &mut rng,
        &s,
        |r| f16::from_f64(r.below(3) as f64 - 1.0),
        |a, b| a + b,
    );
    check_cumsum::<f32>(&mut rng, &s, |r| r.below(17) as f32 - 8.0, |a, b| a + b);
    check_cumsum::<f64>(
        &mut rng,
        &s,
        |r| r.below(2001) as f64 - 1000.0,
        |a, b| a + b,
    );
    check_cumsum::<Complex<f32>>(
        &mut rng,
        &s,
        |r| Complex::new(r.below(9) as f32 - 4.0, r.below(9) as f32 - 4.0),
        |a, b| a + b,
    );
    check_cumsum::<Complex<f64>>(
        &mut rng,
        &s,
        |r| Complex::new(r.below(9) as f64, -(r.below(9) as f64)),
        |a, b| a + b,
    );
    // bool: a + b converted back to bool is a running "or".
    let bh = [false, false, true, false, true];
    let b = GpuArray::from_slice(&s, &bh).unwrap();
    assert_eq!(
        b.cumsum().unwrap().to_vec().unwrap(),
        vec![false, false, true, true, true]
    );
    // 2-D and strided arrays scan in row-major order into a 1-D result.
    let h: Vec<i64> = rng.vec(12 * 1000);
    let a = GpuArray::from_shape_slice(&s, &[12, 1000], &h).unwrap();
    let t = a.transpose();
    let th = t.to_vec().unwrap();
    let got = t.cumsum().unwrap();
    assert_eq!(got.shape(), &[12000]);
    let want = cpu_scan(&th, 0i64, ScanKind::Inclusive, i64::wrapping_add);
    assert_same(&got.to_vec().unwrap(), &want, "cumsum of a transpose");
    let want = cpu_scan(&h, 0i64, ScanKind::Inclusive, i64::wrapping_add);
    assert_same(&a.cumsum().unwrap().to_vec().unwrap(), &want, "cumsum 2-D");
}

#[test]
#[ignore = "needs a CUDA device"]
fn inclusive_scans_of_2_pow_28_int32_and_float32() {
    let mut rng = Rng::fresh();
    let s = stream();
    // 2^24 under compute-sanitizer: the same kernels on less data.
    let n = rucuda_testkit::scaled_for_sanitizer(1usize << 28, 1 << 24);
    let ih: Vec<i32> = rng.vec(n);
    let want = cpu_scan(&ih, 0, ScanKind::Inclusive, i32::wrapping_add);
    let x = GpuArray::from_slice(&s, &ih).unwrap();
    let mut out = poisoned(&s, n, 0x5a5a_5a5a);
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    unsafe { InclusiveScanKernel::new(DType::I32, "a + b", "0") }
        .unwrap()
        .call(&s, &x, &mut out)
        .unwrap();
    assert_same(&out.to_vec().unwrap(), &want, "i32 2^28");
    drop((ih, want, x, out));
    // Non-negative floats: the running sum only grows, so the bound is relative to it.
    let fh: Vec<f32> = (0..n).map(|_| (rng.unit() as f32).abs()).collect();
    let x = GpuArray::from_slice(&s, &fh).unwrap();
    let mut out = poisoned(&s, n, f32::NAN);
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    unsafe { InclusiveScanKernel::new(DType::F32, "a + b", "0") }
        .unwrap()
        .call(&s, &x, &mut out)
        .unwrap();
    let got = out.to_vec().unwrap();
    let t = tile(4);
    let mut prefix = 0.0f64;
    for i in 0..n {
        prefix += fh[i] as f64;
        let bound = ((i / t) as f64 + 64.0) * f32::EPSILON as f64 * prefix + 1e-30;
        assert!(
            (got[i] as f64 - prefix).abs() <= bound,
            "f32 2^28 i={i}: got {}, want {prefix}",
            got[i]
        );
    }
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
    let xh: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
    let x = GpuArray::from_slice(&s, &xh).unwrap();
    let mut out = GpuArray::<u8>::empty(&s, &[n]).unwrap();
    // SAFETY: the kernel's code touches only element i of each array argument, in bounds.
    unsafe { ExclusiveScanKernel::new(DType::U8, "a + b", "0") }
        .unwrap()
        .call(&s, &x, &mut out)
        .unwrap();
    drop(x);
    let got = out.to_vec().unwrap();
    let mut acc = 0u8;
    for (i, (&v, &g)) in xh.iter().zip(&got).enumerate() {
        assert_eq!(g, acc, "exclusive u8 scan at {i} of {n}");
        acc = acc.wrapping_add(v);
    }
}
