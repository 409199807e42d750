//! GPU tests of struct and vector elements: CUDA's vector types (3-vectors of 3, 12 and
//! 24 bytes, 16-byte-aligned 2- and 4-vectors) and a struct of ours (nested vector,
//! half, complex and array fields) uploaded and read back, filled (with a struct value,
//! also through a strided view), copied (strided and reversed views, `copy_from`),
//! gathered and scattered (`take`/`put`, wrapping indices); an ElementwiseKernel that
//! reads and writes fields, with a `float3` scalar; ReductionKernels summing `float2`
//! (`make_float2`) and a struct (an `operator+` of the preamble) against CPU references
//! in f64; the operations that need numbers refused. Fresh random data, poisoned outputs.

mod common;

use common::{stream, Rng};
use rucuda_array::elementwise::{ElementwiseKernel, ElementwiseSpec};
use rucuda_array::ops::IndexMode;
use rucuda_array::reduction::{ReductionKernel, ReductionSpec};
use rucuda_array::vec::{self, Char3, Double2, Float2, Float3, Int4, Long4};
use rucuda_array::{f16, ArrayError, Complex, Element, GpuArray, SliceArg};

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Particle {
    pos: Float3,
    mass: f32,
    vel: Double2,
    charge: f16,
    flags: [u8; 6],
    z: Complex<f32>,
    id: u32,
    pad: [u8; 12],
}
rucuda_array::struct_element!(Particle as "gpu_particle" {
    pos: Float3, mass: f32, vel: Double2, charge: f16, flags: [u8; 6],
    z: Complex<f32>, id: u32, pad: [u8; 12]
});

/// Random values of the element types under test.
trait Random: Element {
    fn random(rng: &mut Rng) -> Self;
}

fn f(rng: &mut Rng) -> f32 {
    (rng.unit() * 100.0) as f32
}

impl Random for Float3 {
    fn random(rng: &mut Rng) -> Self {
        vec::make_float3(f(rng), f(rng), f(rng))
    }
}
impl Random for Float2 {
    fn random(rng: &mut Rng) -> Self {
        vec::make_float2(f(rng), f(rng))
    }
}
impl Random for Double2 {
    fn random(rng: &mut Rng) -> Self {
        vec::make_double2(rng.unit() * 1e3, rng.unit() * 1e3)
    }
}
impl Random for Char3 {
    fn random(rng: &mut Rng) -> Self {
        let b = rng.next_u64().to_le_bytes();
        vec::make_char3(b[0] as i8, b[1] as i8, b[2] as i8)
    }
}
impl Random for Int4 {
    fn random(rng: &mut Rng) -> Self {
        let (a, b) = (rng.next_u64(), rng.next_u64());
        vec::make_int4(a as i32, (a >> 32) as i32, b as i32, (b >> 32) as i32)
    }
}
impl Random for Long4 {
    fn random(rng: &mut Rng) -> Self {
        let mut n = || rng.next_u64() as i64;
        vec::make_long4(n(), n(), n(), n())
    }
}
impl Random for Particle {
    fn random(rng: &mut Rng) -> Self {
        let b = rng.next_u64().to_le_bytes();
        Particle {
            pos: Float3::random(rng),
            mass: f(rng).abs() + 1.0,
            vel: Double2::random(rng),
            charge: f16::from_f32(f(rng)),
            flags: [b[0], b[1], b[2], b[3], b[4], b[5]],
            z: Complex::new(f(rng), f(rng)),
            id: rng.next_u64() as u32,
            pad: [0; 12],
        }
    }
}

fn randoms<T: Random>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::random(rng)).collect()
}

/// Upload, read back, fill (whole and strided), copies of views, take and put.
fn storage_round_trip<T: Random>(rng: &mut Rng) {
    let s = stream();
    let name = T::DTYPE.c_type();
    for n in [1usize, 7, 1000, 65_537] {
        let host: Vec<T> = randoms(rng, n);
        let a = GpuArray::from_slice(&s, &host).unwrap();
        assert_eq!(a.to_vec().unwrap(), host, "{name} n={n}: upload");
        assert_eq!(a.nbytes(), n * std::mem::size_of::<T>());

        // Fill the whole array, then every other element through a strided view.
        let (v1, v2) = (T::random(rng), T::random(rng));
        let b = GpuArray::from_slice(&s, &randoms::<T>(rng, n)).unwrap();
        b.fill(v1).unwrap();
        assert!(b.to_vec().unwrap().iter().all(|v| *v == v1), "{name}: fill");
        b.slice(&[SliceArg::stepped(Some(1), None, 2)])
            .unwrap()
            .fill(v2)
            .unwrap();
        let got = b.to_vec().unwrap();
        for (k, v) in got.iter().enumerate() {
            assert_eq!(
                *v,
                if k % 2 == 1 { v2 } else { v1 },
                "{name}: strided fill {k}"
            );
        }

        // Copies: a reversed view's contiguous copy, a strided view into a fresh array.
        let r = a.reversed().unwrap();
        let want: Vec<T> = host.iter().rev().copied().collect();
        assert_eq!(r.to_vec().unwrap(), want, "{name}: reversed copy");
        let view = a.slice(&[SliceArg::stepped(None, None, 3)]).unwrap();
        let out = GpuArray::from_slice(&s, &randoms::<T>(rng, view.len())).unwrap();
        out.copy_from(&view).unwrap();
        let want: Vec<T> = host.iter().step_by(3).copied().collect();
        assert_eq!(out.to_vec().unwrap(), want, "{name}: strided copy");
        assert_eq!(view.copy().unwrap().to_vec().unwrap(), want);

        // take with wrapping indices (negative ones count from the end), then put back.
        let m = 2 * n + 3;
        let idx_host: Vec<i64> = (0..m)
            .map(|_| rng.range(-(n as i64), 2 * n as i64 - 1))
            .collect();
        let idx = GpuArray::from_slice(&s, &idx_host).unwrap();
        let taken = a.take(&idx, IndexMode::Wrap).unwrap();
        let wrap = |i: i64| i.rem_euclid(n as i64) as usize;
        let want: Vec<T> = idx_host.iter().map(|&i| host[wrap(i)]).collect();
        assert_eq!(taken.to_vec().unwrap(), want, "{name} n={n}: take");

        let dst = GpuArray::from_slice(&s, &randoms::<T>(rng, n)).unwrap();
        let before = dst.to_vec().unwrap();
        // Distinct in-range destinations, so the result does not depend on the order.
        let perm: Vec<i32> = (0..n as i32).rev().step_by(2).collect();
        let vals: Vec<T> = randoms(rng, perm.len());
        dst.put(
            &GpuArray::from_slice(&s, &perm).unwrap(),
            &GpuArray::from_slice(&s, &vals).unwrap(),
            IndexMode::Clip,
        )
        .unwrap();
        let mut want = before;
        for (k, &p) in perm.iter().enumerate() {
            want[p as usize] = vals[k];
        }
        assert_eq!(dst.to_vec().unwrap(), want, "{name} n={n}: put");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn vector_types_upload_fill_copy_take_and_put() {
    let mut rng = Rng::fresh();
    storage_round_trip::<Float3>(&mut rng);
    storage_round_trip::<Char3>(&mut rng);
    storage_round_trip::<Double2>(&mut rng);
    storage_round_trip::<Int4>(&mut rng);
    storage_round_trip::<Long4>(&mut rng);
}

#[test]
#[ignore = "needs a CUDA device"]
fn struct_elements_upload_fill_copy_take_and_put() {
    let mut rng = Rng::fresh();
    storage_round_trip::<Particle>(&mut rng);
}

#[test]
#[ignore = "needs a CUDA device"]
fn elementwise_kernels_read_and_write_fields() {
    let mut rng = Rng::fresh();
    let s = stream();
    let spec = ElementwiseSpec::builder("step_particles")
        .scalar::<Float3>("force")
        .scalar::<f32>("dt")
        .input::<Particle>("p")
        .output::<Float3>("pos")
        .output::<Particle>("q")
        .operation(
            "pos[i] = make_float3(p[i].pos.x + dt * force.x / p[i].mass, \
             p[i].pos.y + dt * force.y / p[i].mass, p[i].pos.z + dt * force.z / p[i].mass); \
             q[i] = p[i]; q[i].vel.y = p[i].vel.x * 2.0; q[i].id = (unsigned int)i; \
             q[i].flags[5] = p[i].flags[0]",
        )
        .build()
        .unwrap();
    // SAFETY: the operation touches only element i of each array argument.
    let k = unsafe { ElementwiseKernel::from_spec(spec) };
    for n in [1usize, 33, 100_003] {
        let host: Vec<Particle> = randoms(&mut rng, n);
        let p = GpuArray::from_slice(&s, &host).unwrap();
        let force = Float3::random(&mut rng);
        let dt = f(&mut rng) / 100.0;
        let mut pos =
            GpuArray::full(&s, &[n], vec::make_float3(f32::NAN, f32::NAN, f32::NAN)).unwrap();
        let mut q = GpuArray::from_slice(&s, &randoms::<Particle>(&mut rng, n)).unwrap();
        // A strided (reversed) view of p takes the strided variant.
        let p_rev = p.reverse().unwrap();
        k.call(
            &s,
            &[
                force.into(),
                // An f64 scalar converts to the declared float.
                f64::from(dt).into(),
                (&p_rev).into(),
                (&mut pos).into(),
                (&mut q).into(),
            ],
        )
        .unwrap();
        let (got_pos, got_q) = (pos.to_vec().unwrap(), q.to_vec().unwrap());
        for i in 0..n {
            let src = host[n - 1 - i];
            let m = f64::from(src.mass);
            let want = [
                f64::from(src.pos.x) + f64::from(dt) * f64::from(force.x) / m,
                f64::from(src.pos.y) + f64::from(dt) * f64::from(force.y) / m,
                f64::from(src.pos.z) + f64::from(dt) * f64::from(force.z) / m,
            ];
            let got = [got_pos[i].x, got_pos[i].y, got_pos[i].z];
            for c in 0..3 {
                let tol = 1e-5 * want[c].abs().max(1.0);
                assert!(
                    (f64::from(got[c]) - want[c]).abs() <= tol,
                    "n={n} i={i} component {c}: {} vs {}",
                    got[c],
                    want[c]
                );
            }
            let mut want_q = src;
            want_q.vel.y = src.vel.x * 2.0;
            want_q.id = i as u32;
            want_q.flags[5] = src.flags[0];
            assert_eq!(got_q[i], want_q, "n={n} i={i}");
        }
    }
    // A scalar of another struct type is refused, naming the argument.
    let p = GpuArray::from_slice(&s, &randoms::<Particle>(&mut rng, 4)).unwrap();
    let mut pos = GpuArray::<Float3>::empty(&s, &[4]).unwrap();
    let mut q = GpuArray::<Particle>::empty(&s, &[4]).unwrap();
    let e = k
        .call(
            &s,
            &[
                vec::make_float2(1.0, 2.0).into(),
                1.0f32.into(),
                (&p).into(),
                (&mut pos).into(),
                (&mut q).into(),
            ],
        )
        .unwrap_err();
    assert!(e.to_string().contains("argument `force`"), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn reductions_fold_vectors_and_structs() {
    let mut rng = Rng::fresh();
    let s = stream();
    let spec = ReductionSpec::builder("sum_float2")
        .output_dtype(Float2::DTYPE)
        .neutral("make_float2(0.0f, 0.0f)")
        .reduce("make_float2(a.x + b.x, a.y + b.y)")
        .map("x[i]")
        .input::<Float2>("x")
        .build()
        .unwrap();
    // SAFETY: the map expression reads only x[i].
    let sum2 = unsafe { ReductionKernel::from_spec(spec) };

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Stats {
        count: i64,
        sum: f64,
        max_id: u32,
        min_id: u32,
    }
    rucuda_array::struct_element!(Stats as "gpu_stats" { count: i64, sum: f64, max_id: u32, min_id: u32 });
    let spec = ReductionSpec::builder("particle_stats")
        .output_dtype(Stats::DTYPE)
        .neutral("gpu_stats{0, 0.0, 0u, 0xffffffffu}")
        .reduce("a + b")
        .map("gpu_stats{1, (double)p[i].mass * p[i].vel.x, p[i].id, p[i].id}")
        .preamble(
            "__device__ __forceinline__ gpu_stats operator+(gpu_stats a, gpu_stats b) {\n\
             \x20 return gpu_stats{a.count + b.count, a.sum + b.sum,\n\
             \x20   a.max_id > b.max_id ? a.max_id : b.max_id,\n\
             \x20   a.min_id < b.min_id ? a.min_id : b.min_id};\n}",
        )
        .input::<Particle>("p")
        .build()
        .unwrap();
    // SAFETY: the map expression reads only p[i].
    let stats = unsafe { ReductionKernel::from_spec(spec) };

    for n in [1usize, 1000, 1 << 20, (1 << 20) + 7] {
        let host: Vec<Float2> = randoms(&mut rng, n);
        let x = GpuArray::from_slice(&s, &host).unwrap();
        let got: Float2 = sum2.call_to_host(&s, &[(&x).into()]).unwrap();
        let (wx, wy) = host.iter().fold((0.0f64, 0.0f64), |(a, b), v| {
            (a + f64::from(v.x), b + f64::from(v.y))
        });
        let (ax, ay) = host.iter().fold((0.0f64, 0.0f64), |(a, b), v| {
            (a + f64::from(v.x).abs(), b + f64::from(v.y).abs())
        });
        // f32 accumulation in a tree: error bounded by ~log2(n) ulps of the |sum|.
        let tol = |abs: f64| abs * f64::from(f32::EPSILON) * 64.0;
        assert!(
            (f64::from(got.x) - wx).abs() <= tol(ax),
            "n={n}: x {} vs {wx}",
            got.x
        );
        assert!(
            (f64::from(got.y) - wy).abs() <= tol(ay),
            "n={n}: y {} vs {wy}",
            got.y
        );
        // Strided input (every other element, reversed): the strided variant.
        let view = x.slice(&[SliceArg::stepped(None, None, -2)]).unwrap();
        let got: Float2 = sum2.call_to_host(&s, &[(&view).into()]).unwrap();
        let wx: f64 = host.iter().rev().step_by(2).map(|v| f64::from(v.x)).sum();
        assert!((f64::from(got.x) - wx).abs() <= tol(ax), "n={n}: strided x");

        let parts: Vec<Particle> = randoms(&mut rng, n);
        let p = GpuArray::from_slice(&s, &parts).unwrap();
        let got: Stats = stats.call_to_host(&s, &[(&p).into()]).unwrap();
        let want_sum: f64 = parts.iter().map(|q| f64::from(q.mass) * q.vel.x).sum();
        let abs_sum: f64 = parts
            .iter()
            .map(|q| (f64::from(q.mass) * q.vel.x).abs())
            .sum();
        assert_eq!(got.count, n as i64);
        assert_eq!(got.max_id, parts.iter().map(|q| q.id).max().unwrap());
        assert_eq!(got.min_id, parts.iter().map(|q| q.id).min().unwrap());
        assert!(
            (got.sum - want_sum).abs() <= abs_sum * 1e-13,
            "n={n}: {} vs {want_sum}",
            got.sum
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn operations_that_need_numbers_are_refused() {
    let s = stream();
    let a = GpuArray::from_slice(&s, &[vec::make_float3(1.0, 2.0, 3.0); 4]).unwrap();
    let unsupported = |e: ArrayError| matches!(e, ArrayError::UnsupportedType { .. });
    assert!(unsupported(a.sum().unwrap_err()));
    assert!(unsupported(a.max().unwrap_err()));
    assert!(unsupported(a.astype::<f32>().unwrap_err()));
    assert!(unsupported((-&a).unwrap_err()));
    // Comparisons and binary arithmetic do not compile for struct types (no Promote).
    assert!(unsupported(GpuArray::<Float3>::ones(&s, &[3]).unwrap_err()));
    assert!(unsupported(
        GpuArray::<Float3>::arange(&s, 0.0, 3.0, 1.0).unwrap_err()
    ));
    // Zeros are all-zero bytes: fine for any plain type.
    let z = GpuArray::<Particle>::zeros(&s, &[3]).unwrap();
    assert!(z
        .to_vec()
        .unwrap()
        .iter()
        .all(|p| p.mass == 0.0 && p.id == 0));
}
