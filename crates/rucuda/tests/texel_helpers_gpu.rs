//! GPU tests of `rucuda-helpers.cuh` (PyCUDA's `pycuda-helpers.hpp`): doubles, complex
//! doubles and complex floats read from textures over linear memory, 2D, 3D and layered
//! arrays (made in C and F order), and written and read through surfaces, each against
//! the exact host values (point sampling: no rounding anywhere). Kernels:
//! `tests/kernels/texel_helpers.cu`, compiled with NVRTC.

use rucuda::driver::*;
use rucuda::jit::{CompileOptions, SourceModule};
use rucuda::num_complex::Complex;
use rucuda_testkit::TestRng;

const KERNELS: &str = include_str!("kernels/texel_helpers.cu");

fn ctx() -> Context {
    Device::get(0)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)")
}

fn kernels(ctx: &Context) -> SourceModule {
    let dir = texel_helpers_include_dir().expect("the header is written");
    SourceModule::load(ctx, KERNELS, &CompileOptions::new().include_dir(dir))
        .expect("texel_helpers.cu compiles (NVRTC)")
}

/// Doubles over most of the exponent range, both words of each random.
fn doubles(rng: &mut TestRng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| rng.f64() * 2f64.powi(rng.range(-300, 300) as i32))
        .collect()
}

fn complex128(rng: &mut TestRng, n: usize) -> Vec<Complex<f64>> {
    let v = doubles(rng, 2 * n);
    v.chunks(2).map(|c| Complex::new(c[0], c[1])).collect()
}

fn complex64(rng: &mut TestRng, n: usize) -> Vec<Complex<f32>> {
    let v = rng.vec_f32(2 * n);
    v.chunks(2).map(|c| Complex::new(c[0], c[1])).collect()
}

fn grid(w: usize, h: usize, d: usize) -> LaunchConfig {
    LaunchConfig {
        grid: (w.div_ceil(16) as u32, h.div_ceil(16) as u32, d as u32),
        block: (16, 16, 1),
        shared_mem_bytes: 0,
    }
}

/// Bit patterns, so NaN poison and -0.0 compare exactly.
fn bits64(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn bits_c128(v: &[Complex<f64>]) -> Vec<(u64, u64)> {
    v.iter().map(|z| (z.re.to_bits(), z.im.to_bits())).collect()
}

fn bits_c64(v: &[Complex<f32>]) -> Vec<(u32, u32)> {
    v.iter().map(|z| (z.re.to_bits(), z.im.to_bits())).collect()
}

const NAN64: Complex<f64> = Complex::new(f64::NAN, f64::NAN);

#[test]
#[ignore = "needs a CUDA device"]
fn linear_textures_of_doubles_and_complex_fetch_exact_values() {
    let ctx = ctx();
    let m = kernels(&ctx);
    let mut rng = TestRng::fresh();
    let stream = Stream::null(&ctx);
    let n = 10_007;

    let host = doubles(&mut rng, n);
    let buf = DeviceBuffer::from_slice(&ctx, &host).unwrap();
    let tex = TextureObject::from_buffer(&buf, &TextureDescriptor::new()).unwrap();
    assert_eq!(tex.format(), (ArrayFormat::I32, 2));
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![f64::NAN; n]).unwrap();
    let f = m.function("fetch_f64").unwrap();
    // SAFETY: fetch_f64(tex, out, n) reads texels 0..n of `buf` (alive, unwritten) and
    // writes out[0..n).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 256),
            &stream,
            (tex.handle(), &mut out, n as u32),
        )
        .unwrap()
    };
    assert_eq!(bits64(&out.to_vec().unwrap()), bits64(&host), "double");

    let host = complex128(&mut rng, n);
    let buf = DeviceBuffer::from_slice(&ctx, &host).unwrap();
    let tex = TextureObject::from_buffer(&buf, &TextureDescriptor::new()).unwrap();
    assert_eq!(tex.format(), (ArrayFormat::I32, 4));
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![NAN64; n]).unwrap();
    let f = m.function("fetch_c128").unwrap();
    // SAFETY: as above, double2 elements (the layout of Complex<f64>).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 256),
            &stream,
            (tex.handle(), &mut out, n as u32),
        )
        .unwrap()
    };
    assert_eq!(
        bits_c128(&out.to_vec().unwrap()),
        bits_c128(&host),
        "complex double"
    );

    let host = complex64(&mut rng, n);
    let buf = DeviceBuffer::from_slice(&ctx, &host).unwrap();
    let tex = TextureObject::from_buffer(&buf, &TextureDescriptor::new()).unwrap();
    assert_eq!(tex.format(), (ArrayFormat::F32, 2));
    let nan32 = Complex::new(f32::NAN, f32::NAN);
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![nan32; n]).unwrap();
    let f = m.function("fetch_c64").unwrap();
    // SAFETY: as above, float2 elements (the layout of Complex<f32>).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 256),
            &stream,
            (tex.handle(), &mut out, n as u32),
        )
        .unwrap()
    };
    assert_eq!(
        bits_c64(&out.to_vec().unwrap()),
        bits_c64(&host),
        "complex float"
    );
}

/// Reads every texel (x, y) of a 2D array texture with `kernel` into `w * h` elements.
fn read_2d<T: DeviceRepr>(
    ctx: &Context,
    m: &SourceModule,
    kernel: &str,
    array: &CudaArray,
    poison: T,
) -> Vec<T> {
    let (w, h) = (array.desc().width, array.desc().height.max(1));
    let tex = TextureObject::from_array(array, &TextureDescriptor::new()).unwrap();
    let mut out = DeviceBuffer::from_slice(ctx, &vec![poison; w * h]).unwrap();
    let f = m.function(kernel).unwrap();
    // SAFETY: the 2D kernels (tex, out, w, h) write out[0..w*h) and read the texture of
    // `array` (alive, unwritten meanwhile).
    unsafe {
        f.launch(
            grid(w, h, 1),
            &Stream::null(ctx),
            (tex.handle(), &mut out, w as u32, h as u32),
        )
        .unwrap()
    };
    out.to_vec().unwrap()
}

#[test]
#[ignore = "needs a CUDA device"]
fn arrays_of_doubles_and_complex_read_through_the_helpers_in_both_orders() {
    let ctx = ctx();
    let m = kernels(&ctx);
    let mut rng = TestRng::fresh();
    let (rows, cols) = (13, 37);

    // Doubles, C and F order: texel (x, y) is m[y][x] (C) or m[x][y] (F).
    let host = doubles(&mut rng, rows * cols);
    for order in [Order::C, Order::F] {
        let a = host_to_array(&ctx, &host, &[rows, cols], order, Array3DFlags::empty()).unwrap();
        let w = a.desc().width;
        let got = read_2d(&ctx, &m, "tex2d_f64", &a, f64::NAN);
        let want: Vec<f64> = (0..rows * cols)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                match order {
                    Order::C => host[y * cols + x],
                    Order::F => host[x * cols + y],
                }
            })
            .collect();
        assert_eq!(bits64(&got), bits64(&want), "double, {order:?}");
    }

    // Complex doubles through matrix_to_array in F order (transposed on the way).
    let host = complex128(&mut rng, rows * cols);
    let a = matrix_to_array(&ctx, &host, [rows, cols], Order::F).unwrap();
    assert_eq!((a.desc().width, a.desc().height), (rows, cols));
    let got = read_2d(&ctx, &m, "tex2d_c128", &a, NAN64);
    let want: Vec<Complex<f64>> = (0..rows * cols)
        .map(|i| host[(i % rows) * cols + i / rows])
        .collect();
    assert_eq!(bits_c128(&got), bits_c128(&want), "complex double, F");

    // Complex floats, C order.
    let host = complex64(&mut rng, rows * cols);
    let a = matrix_to_array(&ctx, &host, [rows, cols], Order::C).unwrap();
    assert_eq!(a.desc().format, ArrayFormat::F32);
    let got = read_2d(&ctx, &m, "tex2d_c64", &a, Complex::new(f32::NAN, f32::NAN));
    assert_eq!(bits_c64(&got), bits_c64(&host), "complex float, C");

    // A 2D shape with LAYERED: one layer, read with tex2DLayered at layer 0.
    let host = complex128(&mut rng, rows * cols);
    let a = host_to_array(&ctx, &host, &[rows, cols], Order::C, Array3DFlags::LAYERED).unwrap();
    assert_eq!(
        (a.desc().width, a.desc().height, a.desc().depth),
        (cols, rows, 1)
    );
    let tex = TextureObject::from_array(&a, &TextureDescriptor::new()).unwrap();
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![NAN64; rows * cols]).unwrap();
    let f = m.function("tex2d_layered_c128").unwrap();
    // SAFETY: tex2d_layered_c128(tex, out, w, h, layer) writes out[0..w*h).
    unsafe {
        f.launch(
            grid(cols, rows, 1),
            &Stream::null(&ctx),
            (tex.handle(), &mut out, cols as u32, rows as u32, 0i32),
        )
        .unwrap()
    };
    assert_eq!(
        bits_c128(&out.to_vec().unwrap()),
        bits_c128(&host),
        "complex double, one layer"
    );

    // Doubles in 3D, C order.
    let (d, h, w) = (5, 7, 19);
    let host = doubles(&mut rng, d * h * w);
    let a = host_to_array(&ctx, &host, &[d, h, w], Order::C, Array3DFlags::empty()).unwrap();
    let tex = TextureObject::from_array(&a, &TextureDescriptor::new()).unwrap();
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![f64::NAN; d * h * w]).unwrap();
    let f = m.function("tex3d_f64").unwrap();
    // SAFETY: tex3d_f64(tex, out, w, h, d) writes out[0..w*h*d).
    unsafe {
        f.launch(
            grid(w, h, d),
            &Stream::null(&ctx),
            (tex.handle(), &mut out, w as u32, h as u32, d as u32),
        )
        .unwrap()
    };
    assert_eq!(bits64(&out.to_vec().unwrap()), bits64(&host), "double, 3D");
}

/// Runs kernel `name(surf, w, h)` of `m` over a `w` × `h` grid on a surface object of
/// `a` (borrowed mutably for the launch), then waits for it.
///
/// # Safety
/// The kernel reads and writes only elements (x < w, y < h) of its surface.
unsafe fn on_surface(
    ctx: &Context,
    m: &SourceModule,
    name: &str,
    a: &mut CudaArray,
    w: usize,
    h: usize,
) {
    let surf = SurfaceObject::new(a).unwrap();
    let f = m.function(name).unwrap();
    // SAFETY: the caller's contract: the kernel stays inside the surface's w × h
    // elements, whose array `surf` borrows mutably.
    unsafe {
        f.launch(
            grid(w, h, 1),
            &Stream::null(ctx),
            (surf.handle(), w as u32, h as u32),
        )
        .unwrap()
    };
    ctx.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn surfaces_of_doubles_and_complex_round_trip_through_the_helpers() {
    let ctx = ctx();
    let m = kernels(&ctx);
    let mut rng = TestRng::fresh();
    let (h, w) = (11, 29);

    let host = doubles(&mut rng, h * w);
    let mut a = host_to_array(&ctx, &host, &[h, w], Order::C, Array3DFlags::SURFACE_LDST).unwrap();
    // SAFETY: surf2d_f64_affine(surf, w, h) reads and writes elements (x < w, y < h).
    unsafe { on_surface(&ctx, &m, "surf2d_f64_affine", &mut a, w, h) };
    let want: Vec<f64> = host.iter().map(|v| 2.0 * v + 1.0).collect();
    assert_eq!(
        bits64(&a.to_host_vec::<f64>().unwrap()),
        bits64(&want),
        "double surface"
    );

    let host = complex128(&mut rng, h * w);
    let mut a = host_to_array(&ctx, &host, &[h, w], Order::C, Array3DFlags::SURFACE_LDST).unwrap();
    // SAFETY: as above, complex double elements.
    unsafe { on_surface(&ctx, &m, "surf2d_c128_affine", &mut a, w, h) };
    let want: Vec<Complex<f64>> = host
        .iter()
        .map(|z| Complex::new(z.re + 1.0, 2.0 * z.im))
        .collect();
    assert_eq!(
        bits_c128(&a.to_host_vec::<Complex<f64>>().unwrap()),
        bits_c128(&want),
        "complex double surface"
    );
}
