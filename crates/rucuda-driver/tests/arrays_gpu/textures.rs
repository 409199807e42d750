//! GPU tests of texture objects: linear and point filtering with every address mode
//! against CPU references, integer and normalized reads, 1D, 3D, layered and cubemap
//! textures, PyCUDA's matrix orders, textures over linear and pitched memory.
//!
//! Every test uses fresh random data, poisons what the GPU writes before it writes it,
//! and compares with a CPU reference.

use crate::common::{assert_close, ctx, f64s, module, Rng};
use crate::{centres, poisoned_f32, sample_2d, POISON_U32, PTX};
use rucuda_driver::vector::Float4;
use rucuda_driver::*;

/// CPU bilinear filtering with clamped taps, normalized coordinates, half-texel offset.
fn bilinear_clamp(t: &[f32], w: usize, h: usize, u: f32, v: f32) -> f64 {
    let x = u as f64 * w as f64 - 0.5;
    let y = v as f64 * h as f64 - 0.5;
    let (x0, y0) = (x.floor(), y.floor());
    let (a, b) = (x - x0, y - y0);
    let clamp = |i: f64, n: usize| (i.max(0.0) as usize).min(n - 1);
    let (i0, i1) = (clamp(x0, w), clamp(x0 + 1.0, w));
    let (j0, j1) = (clamp(y0, h), clamp(y0 + 1.0, h));
    let at = |i: usize, j: usize| t[j * w + i] as f64;
    (1.0 - a) * (1.0 - b) * at(i0, j0)
        + a * (1.0 - b) * at(i1, j0)
        + (1.0 - a) * b * at(i0, j1)
        + a * b * at(i1, j1)
}

#[test]
#[ignore = "needs a CUDA device"]
fn linear_filtering_with_normalized_coordinates_matches_cpu_bilinear() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let (w, h) = (64, 32);
    let image = rng.vec_f32(w * h); // values in [-1, 1): a range of 2
    let array = matrix_to_array(&ctx, &image, [h, w], Order::C).expect("array");
    let tex = TextureObject::from_array(
        &array,
        &TextureDescriptor::new()
            .address_mode(AddressMode::Clamp)
            .filter_mode(FilterMode::Linear)
            .normalized_coordinates(true),
    )
    .expect("texture");
    assert_eq!(tex.format(), (ArrayFormat::F32, 1));
    assert!(tex.array().is_some());
    let n = 4096;
    // Coordinates slightly beyond [0, 1] exercise the clamped edges too.
    let mut coord = || -0.05 + 1.1 * (rng.f32() + 1.0) * 0.5;
    let us: Vec<f32> = (0..n).map(|_| coord()).collect();
    let vs: Vec<f32> = (0..n).map(|_| coord()).collect();
    let got = sample_2d(&ctx, &tex, &us, &vs);
    let want: Vec<f64> = (0..n)
        .map(|i| bilinear_clamp(&image, w, h, us[i], vs[i]))
        .collect();
    // Hardware weights are 8-bit fixed point: 1e-2 of the value range (2).
    assert_close(&f64s(&got), &want, 0.02);
}

/// Where a point fetch at texel `k` of an extent `n` lands, or `None` for the border.
fn address(k: i64, n: usize, mode: AddressMode) -> Option<usize> {
    let n = n as i64;
    match mode {
        AddressMode::Clamp => Some(k.clamp(0, n - 1) as usize),
        AddressMode::Wrap => Some(k.rem_euclid(n) as usize),
        AddressMode::Mirror => {
            let j = k.rem_euclid(2 * n);
            Some(if j < n { j } else { 2 * n - 1 - j } as usize)
        }
        AddressMode::Border => (0..n).contains(&k).then_some(k as usize),
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn point_filtering_with_each_address_mode_matches_cpu_indexing() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let (w, h) = (16, 8);
    let image = rng.vec_f32(w * h);
    let array = matrix_to_array(&ctx, &image, [h, w], Order::C).expect("array");
    let border = 0.75f32;
    // Texel centres over three periods in each direction, as normalized coordinates.
    let (mut us, mut vs, mut ks) = (vec![], vec![], vec![]);
    for ky in -(h as i64)..2 * h as i64 {
        for kx in -(w as i64)..2 * w as i64 {
            us.push((kx as f32 + 0.5) / w as f32);
            vs.push((ky as f32 + 0.5) / h as f32);
            ks.push((kx, ky));
        }
    }
    for mode in [
        AddressMode::Clamp,
        AddressMode::Wrap,
        AddressMode::Mirror,
        AddressMode::Border,
    ] {
        let tex = TextureObject::from_array(
            &array,
            &TextureDescriptor::new()
                .address_mode(mode)
                .filter_mode(FilterMode::Point)
                .normalized_coordinates(true)
                .border_color([border; 4]),
        )
        .expect("texture");
        assert_eq!(tex.descriptor().address_mode, [mode; 3]);
        let got = sample_2d(&ctx, &tex, &us, &vs);
        let want: Vec<f64> = ks
            .iter()
            .map(
                |&(kx, ky)| match (address(kx, w, mode), address(ky, h, mode)) {
                    (Some(i), Some(j)) => image[j * w + i] as f64,
                    _ => border as f64,
                },
            )
            .collect();
        println!("address mode {mode:?}");
        assert_close(&f64s(&got), &want, 0.0);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn u8_texture_reads_integers_or_normalized_floats() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let (w, h) = (32, 16);
    let image = rng.vec_u8(w * h);
    let array = matrix_to_array(&ctx, &image, [h, w], Order::C).expect("array");
    let (xs, ys) = centres(w, h);
    let n = w * h;

    // Element type: the stored integers.
    let tex = TextureObject::from_array(&array, &TextureDescriptor::new()).expect("texture");
    let m = module(&ctx, PTX);
    let f = m.function("tex2d_u8_element").expect("kernel");
    let dx = DeviceBuffer::from_slice(&ctx, &xs).expect("xs");
    let dy = DeviceBuffer::from_slice(&ctx, &ys).expect("ys");
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![POISON_U32; n]).expect("poison");
    // SAFETY: tex2d_u8_element(tex, xs, ys, out, n) writes out[0..n).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 128),
            &Stream::null(&ctx),
            (tex.handle(), &dx, &dy, &mut out, n as u32),
        )
    }
    .expect("launch");
    let want: Vec<u32> = image.iter().map(|&v| v as u32).collect();
    assert_eq!(out.to_vec().expect("read"), want);

    // Normalized float: value / 255.
    let tex = TextureObject::from_array(
        &array,
        &TextureDescriptor::new().read_mode(ReadMode::NormalizedFloat),
    )
    .expect("texture");
    let got = sample_2d(&ctx, &tex, &xs, &ys);
    let want: Vec<f64> = image.iter().map(|&v| v as f64 / 255.0).collect();
    assert_close(&f64s(&got), &want, 1e-6);

    // Interpolating integers read as integers is refused before the driver sees it.
    let e = TextureObject::from_array(
        &array,
        &TextureDescriptor::new().filter_mode(FilterMode::Linear),
    )
    .expect_err("linear filtering of integers");
    assert!(matches!(e, Error::InvalidArgument(_)));
}

#[test]
#[ignore = "needs a CUDA device"]
fn textures_over_1d_3d_and_layered_arrays() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let m = module(&ctx, PTX);
    let null = Stream::null(&ctx);
    let point = TextureDescriptor::new();

    // 1D.
    let n = 100;
    let line = rng.vec_f32(n);
    let a = CudaArray::from_host(&ctx, &line, &[n], Order::C, Array3DFlags::empty()).expect("1D");
    let tex = TextureObject::from_array(&a, &point).expect("texture");
    let xs: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
    let dx = DeviceBuffer::from_slice(&ctx, &xs).expect("xs");
    let mut out = poisoned_f32(&ctx, n);
    let f = m.function("tex1d_sample").expect("tex1d_sample");
    // SAFETY: tex1d_sample(tex, xs, out, n) writes out[0..n).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 128),
            &null,
            (tex.handle(), &dx, &mut out, n as u32),
        )
    }
    .expect("launch 1D");
    assert_close(&f64s(&out.to_vec().expect("read")), &f64s(&line), 0.0);

    // 3D: every texel centre.
    let (d, h, w) = (4, 5, 6);
    let n = d * h * w;
    let vol = rng.vec_f32(n);
    let a =
        CudaArray::from_host(&ctx, &vol, &[d, h, w], Order::C, Array3DFlags::empty()).expect("3D");
    let tex = TextureObject::from_array(&a, &point).expect("texture");
    let (mut xs, mut ys, mut zs) = (vec![], vec![], vec![]);
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                xs.push(x as f32 + 0.5);
                ys.push(y as f32 + 0.5);
                zs.push(z as f32 + 0.5);
            }
        }
    }
    let (dx, dy, dz) = (
        DeviceBuffer::from_slice(&ctx, &xs).expect("xs"),
        DeviceBuffer::from_slice(&ctx, &ys).expect("ys"),
        DeviceBuffer::from_slice(&ctx, &zs).expect("zs"),
    );
    let mut out = poisoned_f32(&ctx, n);
    let f = m.function("tex3d_sample").expect("tex3d_sample");
    // SAFETY: tex3d_sample(tex, xs, ys, zs, out, n) writes out[0..n).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 128),
            &null,
            (tex.handle(), &dx, &dy, &dz, &mut out, n as u32),
        )
    }
    .expect("launch 3D");
    assert_close(&f64s(&out.to_vec().expect("read")), &f64s(&vol), 0.0);

    // 2D layered: (x, y, layer) for every element.
    let (layers, h, w) = (3, 4, 5);
    let n = layers * h * w;
    let stack = rng.vec_f32(n);
    let a = CudaArray::from_host(
        &ctx,
        &stack,
        &[layers, h, w],
        Order::C,
        Array3DFlags::LAYERED,
    )
    .expect("layered");
    assert_eq!(
        *a.desc(),
        ArrayDescriptor3D::layered_2d(w, h, layers, ArrayFormat::F32, 1)
    );
    let tex = TextureObject::from_array(&a, &point).expect("texture");
    let (mut xs, mut ys, mut ls) = (vec![], vec![], vec![]);
    for l in 0..layers {
        for y in 0..h {
            for x in 0..w {
                xs.push(x as f32 + 0.5);
                ys.push(y as f32 + 0.5);
                ls.push(l as i32);
            }
        }
    }
    let (dx, dy, dl) = (
        DeviceBuffer::from_slice(&ctx, &xs).expect("xs"),
        DeviceBuffer::from_slice(&ctx, &ys).expect("ys"),
        DeviceBuffer::from_slice(&ctx, &ls).expect("layers"),
    );
    let mut out = poisoned_f32(&ctx, n);
    let f = m
        .function("tex2d_layered_sample")
        .expect("tex2d_layered_sample");
    // SAFETY: tex2d_layered_sample(tex, xs, ys, layers, out, n) writes out[0..n).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 128),
            &null,
            (tex.handle(), &dx, &dy, &dl, &mut out, n as u32),
        )
    }
    .expect("launch layered");
    assert_close(&f64s(&out.to_vec().expect("read")), &f64s(&stack), 0.0);
}

#[test]
#[ignore = "needs a CUDA device"]
fn cubemap_texture_reads_each_face_in_layer_order() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let m = module(&ctx, PTX);
    let null = Stream::null(&ctx);
    // Cubemap: the direction along each face's axis reads that face's centre texel
    // (odd size, so the centre is a texel centre whatever the face's orientation).
    let s = 7;
    let faces = rng.vec_f32(6 * s * s);
    let a = CudaArray::from_host(&ctx, &faces, &[6, s, s], Order::C, Array3DFlags::CUBEMAP)
        .expect("cubemap");
    let tex = TextureObject::from_array(&a, &TextureDescriptor::new().normalized_coordinates(true))
        .expect("texture");
    let dirs: [(f32, f32, f32); 6] = [
        (1.0, 0.0, 0.0),
        (-1.0, 0.0, 0.0),
        (0.0, 1.0, 0.0),
        (0.0, -1.0, 0.0),
        (0.0, 0.0, 1.0),
        (0.0, 0.0, -1.0),
    ];
    let (dx, dy, dz) = (
        DeviceBuffer::from_slice(&ctx, &dirs.map(|d| d.0)).expect("xs"),
        DeviceBuffer::from_slice(&ctx, &dirs.map(|d| d.1)).expect("ys"),
        DeviceBuffer::from_slice(&ctx, &dirs.map(|d| d.2)).expect("zs"),
    );
    let mut out = poisoned_f32(&ctx, 6);
    let f = m
        .function("tex_cubemap_sample")
        .expect("tex_cubemap_sample");
    // SAFETY: tex_cubemap_sample(tex, xs, ys, zs, out, n) writes out[0..n).
    unsafe {
        f.launch(
            LaunchConfig::linear(1, 32),
            &null,
            (tex.handle(), &dx, &dy, &dz, &mut out, 6u32),
        )
    }
    .expect("launch cubemap");
    let want: Vec<f64> = CubemapFace::ALL
        .iter()
        .map(|f| faces[(f.index() * s + s / 2) * s + s / 2] as f64)
        .collect();
    assert_close(&f64s(&out.to_vec().expect("read")), &want, 0.0);
}

#[test]
#[ignore = "needs a CUDA device"]
fn matrix_orders_and_multichannel_textures_fetch_like_pycuda() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let (rows, cols) = (6, 10);
    let m = rng.vec_f32(rows * cols);

    // C order: tex2D(x, y) reads m[y][x] (row-major data).
    let a = matrix_to_array(&ctx, &m, [rows, cols], Order::C).expect("C");
    let tex = TextureObject::from_array(&a, &TextureDescriptor::new()).expect("texture");
    let (xs, ys) = centres(cols, rows);
    let got = sample_2d(&ctx, &tex, &xs, &ys);
    let want: Vec<f64> = (0..rows * cols)
        .map(|i| m[(i / cols) * cols + i % cols] as f64)
        .collect();
    assert_close(&f64s(&got), &want, 0.0);

    // F order: the row-major matrix is reordered to column-major on the way, as
    // PyCUDA's np.asarray(m, order="F") does; tex2D(x, y) reads m[x][y].
    let a = matrix_to_array(&ctx, &m, [rows, cols], Order::F).expect("F");
    assert_eq!(
        (a.desc().width, a.desc().height),
        (rows, cols),
        "F: rows wide"
    );
    let tex = TextureObject::from_array(&a, &TextureDescriptor::new()).expect("texture");
    let (xs, ys) = centres(rows, cols);
    let got = sample_2d(&ctx, &tex, &xs, &ys);
    let want: Vec<f64> = (0..rows * cols)
        .map(|i| {
            let (x, y) = (i % rows, i / rows);
            m[x * cols + y] as f64
        })
        .collect();
    assert_close(&f64s(&got), &want, 0.0);
    // Odd, non-square shapes in both orders against a CPU reference of the texel grid.
    for (rows, cols) in [(1, 7), (13, 5), (31, 64)] {
        let m = rng.vec_f32(rows * cols);
        for order in [Order::C, Order::F] {
            let a = matrix_to_array(&ctx, &m, [rows, cols], order).expect("matrix");
            let (w, h) = (a.desc().width, a.desc().height.max(1));
            let tex = TextureObject::from_array(&a, &TextureDescriptor::new()).expect("texture");
            let (xs, ys) = centres(w, h);
            let got = sample_2d(&ctx, &tex, &xs, &ys);
            let want: Vec<f64> = (0..w * h)
                .map(|i| {
                    let (x, y) = (i % w, i / w);
                    let (r, c) = if order == Order::C { (y, x) } else { (x, y) };
                    m[r * cols + c] as f64
                })
                .collect();
            assert_close(&f64s(&got), &want, 0.0);
        }
    }

    // Four float channels read as float4.
    let (h, w) = (8, 12);
    let px = rng.vec_f32(h * w * 4);
    let a = make_multichannel_2d_array(&ctx, &px, [h, w, 4], Order::C).expect("multichannel");
    let tex = TextureObject::from_array(&a, &TextureDescriptor::new()).expect("texture");
    assert_eq!(tex.format(), (ArrayFormat::F32, 4));
    let (xs, ys) = centres(w, h);
    let n = w * h;
    let f = module(&ctx, PTX)
        .function("tex2d_sample4")
        .expect("tex2d_sample4");
    let dx = DeviceBuffer::from_slice(&ctx, &xs).expect("xs");
    let dy = DeviceBuffer::from_slice(&ctx, &ys).expect("ys");
    let nan = Float4 {
        x: f32::NAN,
        y: f32::NAN,
        z: f32::NAN,
        w: f32::NAN,
    };
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![nan; n]).expect("poison");
    // SAFETY: tex2d_sample4(tex, xs, ys, out, n) writes out[0..n).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 128),
            &Stream::null(&ctx),
            (tex.handle(), &dx, &dy, &mut out, n as u32),
        )
    }
    .expect("launch");
    let got: Vec<f64> = out
        .to_vec()
        .expect("read")
        .iter()
        .flat_map(|v| [v.x, v.y, v.z, v.w])
        .map(|v| v as f64)
        .collect();
    assert_close(&got, &f64s(&px), 0.0);

    // F order: shape [channels, width, height] of row-major data, reordered so texel
    // (x, y) holds px[c][x][y] in channel c.
    let px = rng.vec_f32(4 * w * h);
    let a = make_multichannel_2d_array(&ctx, &px, [4, w, h], Order::F).expect("multichannel F");
    assert_eq!((a.desc().width, a.desc().height), (w, h));
    let tex = TextureObject::from_array(&a, &TextureDescriptor::new()).expect("texture");
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![nan; n]).expect("poison");
    // SAFETY: as above.
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 128),
            &Stream::null(&ctx),
            (tex.handle(), &dx, &dy, &mut out, n as u32),
        )
    }
    .expect("launch");
    let got: Vec<f64> = out
        .to_vec()
        .expect("read")
        .iter()
        .flat_map(|v| [v.x, v.y, v.z, v.w])
        .map(|v| v as f64)
        .collect();
    let want: Vec<f64> = (0..n)
        .flat_map(|i| {
            let (x, y) = (i % w, i / w);
            (0..4).map(move |c| (c, x, y))
        })
        .map(|(c, x, y)| px[(c * w + x) * h + y] as f64)
        .collect();
    assert_close(&got, &want, 0.0);
}

/// An f32 view of `n` elements of `buf` starting at an element whose address is a
/// multiple of `align` bytes (`buf` must have `align / 4` spare elements).
fn aligned_start(buf: &DeviceBuffer<f32>, align: usize) -> usize {
    let addr = buf.device_range().address() as usize;
    ((align - addr % align) % align) / 4
}

#[test]
#[ignore = "needs a CUDA device"]
fn texture_over_linear_memory_fetches_elements() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let align = ctx
        .device()
        .attribute(DeviceAttribute::TextureAlignment)
        .expect("alignment") as usize;
    let n = 1000;
    let host = rng.vec_f32(n + align / 4);
    let buf = DeviceBuffer::from_slice(&ctx, &host).expect("upload");
    let start = aligned_start(&buf, align);
    let view = buf.slice(start..start + n).expect("view");
    let tex =
        TextureObject::from_linear(&ctx, &view, ArrayFormat::F32, 1, &TextureDescriptor::new())
            .expect("texture over linear memory");
    assert!(tex.array().is_none());
    let mut out = poisoned_f32(&ctx, n);
    let f = module(&ctx, PTX)
        .function("tex1d_fetch")
        .expect("tex1d_fetch");
    // SAFETY: tex1d_fetch(tex, out, n) writes out[0..n).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 128),
            &Stream::null(&ctx),
            (tex.handle(), &mut out, n as u32),
        )
    }
    .expect("launch");
    assert_close(
        &f64s(&out.to_vec().expect("read")),
        &f64s(&host[start..start + n]),
        0.0,
    );

    // A misaligned start is refused before the driver sees it; a whole buffer works
    // exactly when its allocation is aligned.
    if align > 4 {
        let misaligned = buf.slice(start + 1..start + 1 + n).expect("view");
        assert!(matches!(
            TextureObject::from_linear(
                &ctx,
                &misaligned,
                ArrayFormat::F32,
                1,
                &TextureDescriptor::new()
            ),
            Err(Error::InvalidArgument(_))
        ));
    }
    let whole = TextureObject::from_buffer(&buf, &TextureDescriptor::new());
    assert_eq!(
        whole.is_ok(),
        buf.device_range().address() as usize % align == 0
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn texture_over_pitched_2d_memory_fetches_texels() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let dev = ctx.device();
    let align = dev
        .attribute(DeviceAttribute::TextureAlignment)
        .expect("alignment") as usize;
    let pitch_align = dev
        .attribute(DeviceAttribute::TexturePitchAlignment)
        .expect("pitch alignment") as usize;
    let (w, h): (usize, usize) = (50, 20);
    let pitch = (w * 4).div_ceil(pitch_align) * pitch_align;
    let image = rng.vec_f32(w * h);
    let rows_elems = pitch / 4 * h;
    let mut buf = poisoned_f32(&ctx, rows_elems + align / 4);
    let start = aligned_start(&buf, align);
    {
        // Tight host rows into pitched device rows.
        let mut view = buf.slice_mut(start..start + rows_elems).expect("view");
        Memcpy2D::new(&ctx)
            .src_host(&image)
            .dst_device(&mut view)
            .dst_pitch(pitch)
            .width_in_bytes(w * 4)
            .height(h)
            .execute()
            .expect("host -> pitched device");
    }
    let view = buf.slice(start..start + rows_elems).expect("view");
    let shape = ArrayDescriptor::new(w, h, ArrayFormat::F32, 1);
    let tex = TextureObject::from_pitch_2d(&ctx, &view, &shape, pitch, &TextureDescriptor::new())
        .expect("texture over pitched memory");
    let (xs, ys) = centres(w, h);
    let got = sample_2d(&ctx, &tex, &xs, &ys);
    assert_close(&f64s(&got), &f64s(&image), 0.0);

    // A pitch off the device's pitch alignment is refused.
    if pitch_align > 4 {
        assert!(matches!(
            TextureObject::from_pitch_2d(&ctx, &view, &shape, pitch + 4, &TextureDescriptor::new()),
            Err(Error::InvalidArgument(_))
        ));
    }
}
