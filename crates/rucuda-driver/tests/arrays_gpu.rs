//! GPU tests of CUDA arrays, structured copies, texture objects and surface objects.
//! Kernels: tests/kernels/textures.cu (compiled to the committed textures.ptx).
//!
//! Every test uses fresh random data, poisons what the GPU writes before it writes it,
//! and compares with a CPU reference.

mod common;

use common::{assert_close, ctx, module, Rng};
use rucuda_driver::vector::{Float2, Float4};
use rucuda_driver::*;

const PTX: &str = include_str!("kernels/textures.ptx");
const POISON_U32: u32 = 0xDEAD_BEEF;

fn f64s(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

fn poisoned_f32(ctx: &Context, n: usize) -> DeviceBuffer<f32> {
    DeviceBuffer::from_slice(ctx, &vec![f32::NAN; n]).expect("allocate output")
}

fn vec_u32(rng: &mut Rng, n: usize) -> Vec<u32> {
    (0..n).map(|_| rng.next_u64() as u32).collect()
}

fn launch_2d(w: usize, h: usize) -> LaunchConfig {
    LaunchConfig {
        grid: (w.div_ceil(16) as u32, h.div_ceil(16) as u32, 1),
        block: (16, 16, 1),
        shared_mem_bytes: 0,
    }
}

/// Samples a 2D texture at `(xs[i], ys[i])` with `tex2d_sample`.
fn sample_2d(ctx: &Context, tex: &TextureObject<'_>, xs: &[f32], ys: &[f32]) -> Vec<f32> {
    let m = module(ctx, PTX);
    let f = m.function("tex2d_sample").expect("tex2d_sample");
    let n = xs.len();
    let dx = DeviceBuffer::from_slice(ctx, xs).expect("xs");
    let dy = DeviceBuffer::from_slice(ctx, ys).expect("ys");
    let mut out = poisoned_f32(ctx, n);
    // SAFETY: tex2d_sample(tex, xs, ys, out, n) reads xs[0..n), ys[0..n), writes out[0..n).
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 128),
            &Stream::null(ctx),
            (tex.handle(), &dx, &dy, &mut out, n as u32),
        )
    }
    .expect("launch tex2d_sample");
    out.to_vec().expect("read samples")
}

/// Texel-centre coordinates (unnormalized) of every element of a `w` x `h` grid.
fn centres(w: usize, h: usize) -> (Vec<f32>, Vec<f32>) {
    let mut xs = Vec::with_capacity(w * h);
    let mut ys = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            xs.push(x as f32 + 0.5);
            ys.push(y as f32 + 0.5);
        }
    }
    (xs, ys)
}

#[test]
#[ignore = "needs a CUDA device"]
fn arrays_of_every_kind_report_their_descriptors() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let mut ext = || 1 + (rng.next_u64() % 48) as usize;

    // cuArrayCreate: 1D and 2D, read back with both descriptor calls.
    for d in [
        ArrayDescriptor::new(ext(), 0, ArrayFormat::F32, 1),
        ArrayDescriptor::new(ext(), ext(), ArrayFormat::U8, 4),
        ArrayDescriptor::new(ext(), ext(), ArrayFormat::I16, 2),
    ] {
        let a = CudaArray::new(&ctx, &d).expect("cuArrayCreate");
        assert_eq!(a.descriptor().expect("cuArrayGetDescriptor"), d);
        let d3 = a.descriptor_3d().expect("cuArray3DGetDescriptor");
        assert_eq!(
            (d3.width, d3.height, d3.depth, d3.format, d3.num_channels),
            (d.width, d.height, 0, d.format, d.num_channels)
        );
        assert_eq!(*a.desc(), d.to_3d());
        a.free().expect("free");
    }

    // cuArray3DCreate: every kind.
    let s = ext();
    let kinds = [
        ArrayDescriptor3D::d1(ext(), ArrayFormat::U32, 2),
        ArrayDescriptor3D::d2(ext(), ext(), ArrayFormat::F32, 4),
        ArrayDescriptor3D::d3(ext(), ext(), ext(), ArrayFormat::I16, 2),
        ArrayDescriptor3D::layered_1d(ext(), ext(), ArrayFormat::U16, 1),
        ArrayDescriptor3D::layered_2d(ext(), ext(), ext(), ArrayFormat::F32, 2),
        ArrayDescriptor3D::cubemap(s, ArrayFormat::F32, 1),
        ArrayDescriptor3D::cubemap_layered(s, 2, ArrayFormat::U8, 4),
        ArrayDescriptor3D::d2(ext(), ext(), ArrayFormat::F32, 1)
            .with_flags(Array3DFlags::SURFACE_LDST),
        ArrayDescriptor3D::d3(ext(), ext(), ext(), ArrayFormat::I8, 1)
            .with_flags(Array3DFlags::SURFACE_LDST),
    ];
    for d in kinds {
        let a = CudaArray::new_3d(&ctx, &d).unwrap_or_else(|e| panic!("create {d:?}: {e}"));
        let got = a.descriptor_3d().expect("cuArray3DGetDescriptor");
        assert_eq!(
            (
                got.width,
                got.height,
                got.depth,
                got.format,
                got.num_channels
            ),
            (d.width, d.height, d.depth, d.format, d.num_channels),
            "{d:?}"
        );
        assert!(got.flags.contains(d.flags), "{d:?} read back as {got:?}");
        assert_eq!(a.byte_size().ok(), d.byte_size().ok());
    }

    // What the driver would refuse is refused before it.
    let bad = ArrayDescriptor3D::d2(8, 8, ArrayFormat::F32, 3);
    assert!(matches!(
        CudaArray::new_3d(&ctx, &bad),
        Err(Error::InvalidArgument(_))
    ));
    ctx.check_deferred_errors()
        .expect("no errors in destructors");
}

#[test]
#[ignore = "needs a CUDA device"]
fn host_array_round_trips_are_byte_exact() {
    let ctx = ctx();
    let mut rng = Rng::fresh();

    // 2D, four 8-bit channels.
    let (h, w) = (23, 37);
    let rgba: Vec<[u8; 4]> = (0..h * w)
        .map(|_| (rng.next_u64() as u32).to_le_bytes())
        .collect();
    let a = host_to_array(&ctx, &rgba, &[h, w], Order::C, Array3DFlags::empty()).expect("2D");
    assert_eq!(
        *a.desc(),
        ArrayDescriptor3D::d2(w, h, ArrayFormat::U8, 4),
        "2D descriptor"
    );
    assert_eq!(a.to_host_vec::<[u8; 4]>().expect("read 2D"), rgba);
    let mut back = vec![[0xA5u8; 4]; h * w];
    a.copy_to_host(&mut back).expect("copy_to_host");
    assert_eq!(back, rgba);

    // 3D, two float channels.
    let (d, h, w) = (5, 7, 9);
    let vol: Vec<Float2> = (0..d * h * w)
        .map(|_| Float2 {
            x: rng.f32(),
            y: rng.f32(),
        })
        .collect();
    let a =
        CudaArray::from_host(&ctx, &vol, &[d, h, w], Order::C, Array3DFlags::empty()).expect("3D");
    assert_eq!(
        *a.desc(),
        ArrayDescriptor3D::d3(w, h, d, ArrayFormat::F32, 2)
    );
    assert_eq!(a.to_host_vec::<Float2>().expect("read 3D"), vol);

    // make_multichannel_2d_array, both orders.
    let (h, w) = (12, 20);
    let px = rng.vec_f32(h * w * 4);
    let a = make_multichannel_2d_array(&ctx, &px, [h, w, 4], Order::C).expect("multichannel C");
    assert_eq!(
        a.descriptor().expect("descriptor"),
        ArrayDescriptor::new(w, h, ArrayFormat::F32, 4)
    );
    assert_eq!(a.to_host_vec::<f32>().expect("read"), px);
    let px16: Vec<i16> = (0..h * w * 2).map(|_| rng.next_u64() as i16).collect();
    let a = make_multichannel_2d_array(&ctx, &px16, [2, w, h], Order::F).expect("multichannel F");
    assert_eq!(
        a.descriptor().expect("descriptor"),
        ArrayDescriptor::new(w, h, ArrayFormat::I16, 2)
    );
    assert_eq!(array_to_host::<i16>(&a).expect("read"), px16);

    // matrix_to_array in F order is rows wide.
    let (rows, cols) = (6, 10);
    let m = rng.vec_i32(rows * cols);
    let a = matrix_to_array(&ctx, &m, [rows, cols], Order::F).expect("matrix F");
    assert_eq!(
        a.descriptor().expect("descriptor"),
        ArrayDescriptor::new(rows, cols, ArrayFormat::I32, 1)
    );
    assert_eq!(a.to_host_vec::<i32>().expect("read"), m);

    // Wrong sizes are refused.
    let mut a =
        CudaArray::new_3d(&ctx, &ArrayDescriptor3D::d2(4, 4, ArrayFormat::F32, 1)).expect("array");
    assert!(matches!(
        a.copy_from_host(&[0f32; 15]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        a.to_host_vec::<[u8; 3]>(),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
#[ignore = "needs a CUDA device"]
fn layered_and_cubemap_round_trips_are_byte_exact() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    // 1D layered: height 0, one row per layer.
    let layers: Vec<u16> = (0..3 * 50).map(|_| rng.next_u64() as u16).collect();
    let a = CudaArray::from_host(&ctx, &layers, &[3, 50], Order::C, Array3DFlags::LAYERED)
        .expect("1D layered");
    assert_eq!(
        *a.desc(),
        ArrayDescriptor3D::layered_1d(50, 3, ArrayFormat::U16, 1)
    );
    assert_eq!(a.to_host_vec::<u16>().expect("read"), layers);

    // A cubemap: six square layers.
    let cube = rng.vec_f32(6 * 8 * 8);
    let a = CudaArray::from_host(&ctx, &cube, &[6, 8, 8], Order::C, Array3DFlags::CUBEMAP)
        .expect("cubemap");
    assert_eq!(a.to_host_vec::<f32>().expect("read"), cube);

    // 2D layered, two 8-bit channels.
    let stack: Vec<[u8; 2]> = (0..4 * 5 * 6)
        .map(|_| [rng.next_u64() as u8, rng.next_u64() as u8])
        .collect();
    let a = CudaArray::from_host(&ctx, &stack, &[4, 5, 6], Order::C, Array3DFlags::LAYERED)
        .expect("2D layered");
    assert_eq!(
        *a.desc(),
        ArrayDescriptor3D::layered_2d(6, 5, 4, ArrayFormat::U8, 2)
    );
    assert_eq!(a.to_host_vec::<[u8; 2]>().expect("read"), stack);

    // Two layered cubemaps, one face at a time through Memcpy3D.
    let s = 4;
    let face_len = s * s;
    let faces = rng.vec_i32(12 * face_len);
    let mut a = CudaArray::new_3d(
        &ctx,
        &ArrayDescriptor3D::cubemap_layered(s, 2, ArrayFormat::I32, 1),
    )
    .expect("layered cubemap");
    for cube in 0..2 {
        for face in CubemapFace::ALL {
            let layer = face.layer(cube);
            Memcpy3D::new(&ctx)
                .src_host(&faces[layer * face_len..(layer + 1) * face_len])
                .dst_array(&mut a)
                .dst_z(layer)
                .width_in_bytes(s * 4)
                .height(s)
                .execute()
                .expect("one face");
        }
    }
    assert_eq!(a.to_host_vec::<i32>().expect("read"), faces);
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_array_copies_of_whole_arrays() {
    let ctx = ctx();
    let mut rng = Rng::fresh();

    // gpuarray_to_array's core, then back to device memory.
    let (h, w) = (19, 31);
    let data = rng.vec_i32(h * w);
    let src = DeviceBuffer::from_slice(&ctx, &data).expect("upload");
    let a = CudaArray::from_device_buffer(&src, &[h, w], Order::C, Array3DFlags::empty())
        .expect("from_device_buffer");
    assert_eq!(*a.desc(), ArrayDescriptor3D::d2(w, h, ArrayFormat::I32, 1));
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![i32::MIN; h * w]).expect("poison");
    a.copy_to_device(&mut out).expect("copy_to_device");
    assert_eq!(out.to_vec().expect("read"), data);

    // 3D from device, back into the middle of a larger buffer through a view.
    let (d, h, w) = (3, 6, 10);
    let n = d * h * w;
    let data = vec_u32(&mut rng, n);
    let src = DeviceBuffer::from_slice(&ctx, &data).expect("upload");
    let mut a = CudaArray::new_3d(&ctx, &ArrayDescriptor3D::d3(w, h, d, ArrayFormat::U32, 1))
        .expect("3D array");
    a.copy_from_host(&vec![POISON_U32; n]).expect("poison");
    a.copy_from_device(&src).expect("copy_from_device");
    let mut big = DeviceBuffer::from_slice(&ctx, &vec![POISON_U32; n + 7]).expect("poison");
    {
        let mut view = big.slice_mut(5..5 + n).expect("view");
        a.copy_to_device(&mut view).expect("copy_to_device (view)");
    }
    let got = big.to_vec().expect("read");
    let mut want = vec![POISON_U32; n + 7];
    want[5..5 + n].copy_from_slice(&data);
    assert_eq!(got, want);

    // Array to array, same shape.
    let mut b = CudaArray::new_3d(&ctx, a.desc()).expect("second array");
    b.copy_from_host(&vec![POISON_U32; n]).expect("poison");
    b.copy_from_array(&a).expect("copy_from_array");
    assert_eq!(b.to_host_vec::<u32>().expect("read"), data);
    let other = CudaArray::new_3d(
        &ctx,
        &ArrayDescriptor3D::d3(w, h, d + 1, ArrayFormat::U32, 1),
    )
    .expect("other shape");
    assert!(matches!(
        b.copy_from_array(&other),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
#[ignore = "needs a CUDA device"]
fn byte_offset_copies_on_1d_arrays() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let n = 256;
    let initial = vec_u32(&mut rng, n);
    let mut a =
        CudaArray::new(&ctx, &ArrayDescriptor::new(n, 0, ArrayFormat::U32, 1)).expect("1D array");
    a.copy_from_host(&initial).expect("fill");
    let mut want = initial.clone();

    // memcpy_htoa: 30 elements at element 100.
    let h = vec_u32(&mut rng, 30);
    memcpy_htoa(&mut a, 100 * 4, &h).expect("memcpy_htoa");
    want[100..130].copy_from_slice(&h);

    // memcpy_dtoa: 40 elements of a device buffer at element 16.
    let dsrc = vec_u32(&mut rng, 50);
    let dbuf = DeviceBuffer::from_slice(&ctx, &dsrc).expect("upload");
    memcpy_dtoa(&mut a, 16 * 4, &dbuf, 40 * 4).expect("memcpy_dtoa");
    want[16..56].copy_from_slice(&dsrc[..40]);
    assert_eq!(a.to_host_vec::<u32>().expect("read"), want);

    // memcpy_atoh: 64 elements from element 8.
    let mut host = vec![POISON_U32; 64];
    memcpy_atoh(&mut host, &a, 8 * 4).expect("memcpy_atoh");
    assert_eq!(host, want[8..72]);

    // memcpy_atod: 100 elements from element 10 into a view at element 3.
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![POISON_U32; 110]).expect("poison");
    {
        let mut view = out.slice_mut(3..103).expect("view");
        memcpy_atod(&mut view, &a, 10 * 4, 100 * 4).expect("memcpy_atod");
    }
    let got = out.to_vec().expect("read");
    assert_eq!(got[3..103], want[10..110]);
    assert!(got[..3].iter().chain(&got[103..]).all(|&v| v == POISON_U32));

    // memcpy_atoa between 1D arrays: 50 elements from element 20 to element 8.
    let second = vec_u32(&mut rng, 80);
    let mut b = CudaArray::new(&ctx, &ArrayDescriptor::new(80, 0, ArrayFormat::U32, 1))
        .expect("second 1D array");
    b.copy_from_host(&second).expect("fill");
    memcpy_atoa(&mut b, 8 * 4, &a, 20 * 4, 50 * 4).expect("memcpy_atoa");
    let mut want_b = second;
    want_b[8..58].copy_from_slice(&want[20..70]);
    assert_eq!(b.to_host_vec::<u32>().expect("read"), want_b);

    // Out of range is refused.
    assert!(matches!(
        memcpy_htoa(&mut a, 250 * 4, &h),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
#[ignore = "needs a CUDA device"]
fn whole_row_copies_on_2d_and_3d_arrays() {
    let ctx = ctx();
    let mut rng = Rng::fresh();

    // 2D: rows 3..7 of a 12 x 9 array from the host.
    let (w, h) = (12, 9);
    let row = w * 4;
    let initial = rng.vec_f32(w * h);
    let mut a = matrix_to_array(&ctx, &initial, [h, w], Order::C).expect("2D");
    let rows = rng.vec_f32(4 * w);
    memcpy_htoa(&mut a, 3 * row, &rows).expect("memcpy_htoa rows");
    let mut want = initial;
    want[3 * w..7 * w].copy_from_slice(&rows);
    assert_eq!(a.to_host_vec::<f32>().expect("read"), want);

    // 3D, 5 x 4 x 3: rows 2..11 cross two slice boundaries.
    let (w, h, d) = (5, 4, 3);
    let row = w * 4;
    let data = vec_u32(&mut rng, w * h * d);
    let a =
        CudaArray::from_host(&ctx, &data, &[d, h, w], Order::C, Array3DFlags::empty()).expect("3D");
    let mut host = vec![POISON_U32; 9 * w];
    memcpy_atoh(&mut host, &a, 2 * row).expect("memcpy_atoh rows");
    assert_eq!(host, data[2 * w..11 * w]);

    // Device to the same rows of another 3D array and back.
    let fresh = vec_u32(&mut rng, 9 * w);
    let src = DeviceBuffer::from_slice(&ctx, &fresh).expect("upload");
    let mut b = CudaArray::new_3d(&ctx, a.desc()).expect("second 3D");
    b.copy_from_host(&data).expect("fill");
    memcpy_dtoa(&mut b, 2 * row, &src, 9 * row).expect("memcpy_dtoa rows");
    let mut want = data.clone();
    want[2 * w..11 * w].copy_from_slice(&fresh);
    assert_eq!(b.to_host_vec::<u32>().expect("read"), want);
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![POISON_U32; 6 * w]).expect("poison");
    memcpy_atod(&mut out, &b, 4 * row, 6 * row).expect("memcpy_atod rows");
    assert_eq!(out.to_vec().expect("read"), want[4 * w..10 * w]);

    // Array to array over the same rows.
    let mut c = CudaArray::new_3d(&ctx, a.desc()).expect("third 3D");
    c.copy_from_host(&vec![POISON_U32; w * h * d])
        .expect("poison");
    memcpy_atoa(&mut c, 3 * row, &b, 3 * row, 7 * row).expect("memcpy_atoa rows");
    let mut want_c = vec![POISON_U32; w * h * d];
    want_c[3 * w..10 * w].copy_from_slice(&want[3 * w..10 * w]);
    assert_eq!(c.to_host_vec::<u32>().expect("read"), want_c);

    // Partial rows are refused.
    assert!(matches!(
        memcpy_atoh(&mut host[..3], &a, 0),
        Err(Error::InvalidArgument(_))
    ));
}

/// Copies a `w` x `h` box (in elements) between two pitched linear images (pitches in
/// elements), the CPU reference of a 2D copy.
#[allow(clippy::too_many_arguments)]
fn copy_box_2d(
    src: &[u32],
    src_pitch: usize,
    (sx, sy): (usize, usize),
    dst: &mut [u32],
    dst_pitch: usize,
    (dx, dy): (usize, usize),
    w: usize,
    h: usize,
) {
    for r in 0..h {
        let s = (sy + r) * src_pitch + sx;
        let d = (dy + r) * dst_pitch + dx;
        dst[d..d + w].copy_from_slice(&src[s..s + w]);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn memcpy2d_with_pitches_and_offsets_between_host_device_and_array() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let (w, h) = (13, 6); // the box, in u32 elements and rows

    // Host (pitch 40, box at (3, 2)) -> device (pitch 64, box at (5, 1)).
    let (hp, hrows) = (40, 11);
    let host = vec_u32(&mut rng, hp * hrows);
    let (dp, drows) = (64, 9);
    let mut dev = DeviceBuffer::from_slice(&ctx, &vec![POISON_U32; dp * drows]).expect("poison");
    Memcpy2D::new(&ctx)
        .src_host(&host)
        .src_pitch(hp * 4)
        .src_x_in_bytes(3 * 4)
        .src_y(2)
        .dst_device(&mut dev)
        .dst_pitch(dp * 4)
        .dst_x_in_bytes(5 * 4)
        .dst_y(1)
        .width_in_bytes(w * 4)
        .height(h)
        .execute()
        .expect("host -> device");
    let mut want_dev = vec![POISON_U32; dp * drows];
    copy_box_2d(&host, hp, (3, 2), &mut want_dev, dp, (5, 1), w, h);
    assert_eq!(dev.to_vec().expect("read device"), want_dev);

    // Device (the same box) -> array (24 x 10, box at (7, 3)), unaligned variant.
    let (aw, ah) = (24, 10);
    let mut array =
        CudaArray::new(&ctx, &ArrayDescriptor::new(aw, ah, ArrayFormat::U32, 1)).expect("array");
    array
        .copy_from_host(&vec![POISON_U32; aw * ah])
        .expect("poison array");
    Memcpy2D::new(&ctx)
        .src_device(&dev)
        .src_pitch(dp * 4)
        .src_x_in_bytes(5 * 4)
        .src_y(1)
        .dst_array(&mut array)
        .dst_x_in_bytes(7 * 4)
        .dst_y(3)
        .width_in_bytes(w * 4)
        .height(h)
        .execute_unaligned()
        .expect("device -> array");
    let mut want_array = vec![POISON_U32; aw * ah];
    copy_box_2d(&want_dev, dp, (5, 1), &mut want_array, aw, (7, 3), w, h);
    assert_eq!(array.to_host_vec::<u32>().expect("read array"), want_array);

    // Array (the box) -> host (pitch 30, box at (2, 4)).
    let (op, orows) = (30, 12);
    let mut out = vec![POISON_U32; op * orows];
    Memcpy2D::new(&ctx)
        .src_array(&array)
        .src_x_in_bytes(7 * 4)
        .src_y(3)
        .dst_host(&mut out)
        .dst_pitch(op * 4)
        .dst_x_in_bytes(2 * 4)
        .dst_y(4)
        .width_in_bytes(w * 4)
        .height(h)
        .execute()
        .expect("array -> host");
    let mut want_out = vec![POISON_U32; op * orows];
    copy_box_2d(&want_array, aw, (7, 3), &mut want_out, op, (2, 4), w, h);
    assert_eq!(out, want_out);

    // A box past the end of the host slice is refused before the driver sees it.
    let short = vec![0u32; hp * 7];
    let e = Memcpy2D::new(&ctx)
        .src_host(&short)
        .src_pitch(hp * 4)
        .src_y(2)
        .dst_device(&mut dev)
        .dst_pitch(dp * 4)
        .width_in_bytes(w * 4)
        .height(h)
        .execute()
        .expect_err("out of bounds");
    assert!(e.to_string().contains("source host memory"), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn memcpy2d_unified_addresses_and_async() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING).expect("stream");
    let (w, h, hp, dp) = (9, 7, 12, 16);
    let host = vec_u32(&mut rng, hp * h);
    let mut dev = DeviceBuffer::from_slice(&ctx, &vec![POISON_U32; dp * h]).expect("poison");
    let copy = Memcpy2D::new(&ctx)
        .src_unified(&host)
        .src_pitch(hp * 4)
        .src_x_in_bytes(2 * 4)
        .dst_device(&mut dev)
        .dst_pitch(dp * 4)
        .dst_x_in_bytes(4 * 4)
        .width_in_bytes(w * 4)
        .height(h);
    // SAFETY: `host` and `dev` outlive the stream synchronisation below.
    unsafe { copy.execute_async(&stream) }.expect("unified -> device, async");
    stream.synchronize().expect("sync");
    let mut want_dev = vec![POISON_U32; dp * h];
    copy_box_2d(&host, hp, (2, 0), &mut want_dev, dp, (4, 0), w, h);
    assert_eq!(dev.to_vec().expect("read"), want_dev);

    let mut back = vec![POISON_U32; w * h];
    let copy = Memcpy2D::new(&ctx)
        .src_device(&dev)
        .src_pitch(dp * 4)
        .src_x_in_bytes(4 * 4)
        .dst_unified(&mut back)
        .width_in_bytes(w * 4)
        .height(h);
    // SAFETY: `dev` and `back` outlive the stream synchronisation below.
    unsafe { copy.execute_async(&stream) }.expect("device -> unified, async");
    stream.synchronize().expect("sync");
    let mut want_back = vec![POISON_U32; w * h];
    copy_box_2d(&host, hp, (2, 0), &mut want_back, w, (0, 0), w, h);
    assert_eq!(back, want_back);
}

/// A 3D box copy between pitched volumes (pitches in elements, `sh`/`dh` rows per slice).
#[allow(clippy::too_many_arguments)]
fn copy_box_3d(
    src: &[u32],
    (sp, sh): (usize, usize),
    (sx, sy, sz): (usize, usize, usize),
    dst: &mut [u32],
    (dp, dh): (usize, usize),
    (dx, dy, dz): (usize, usize, usize),
    (w, h, d): (usize, usize, usize),
) {
    for k in 0..d {
        for r in 0..h {
            let s = ((sz + k) * sh + sy + r) * sp + sx;
            let t = ((dz + k) * dh + dy + r) * dp + dx;
            dst[t..t + w].copy_from_slice(&src[s..s + w]);
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn memcpy3d_boxes_between_host_array_and_device() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let boxed = (6, 4, 3); // w (elements), h, d

    // Host volume: pitch 20 elements, 9 rows per slice, 5 slices; box at (2, 3, 1).
    let (hp, hh, hd) = (20, 9, 5);
    let host = vec_u32(&mut rng, hp * hh * hd);
    // Array 10 x 7 x 6, box at (3, 2, 2).
    let (aw, ah, ad) = (10, 7, 6);
    let mut array = CudaArray::new_3d(
        &ctx,
        &ArrayDescriptor3D::d3(aw, ah, ad, ArrayFormat::U32, 1),
    )
    .expect("3D array");
    array
        .copy_from_host(&vec![POISON_U32; aw * ah * ad])
        .expect("poison");
    Memcpy3D::new(&ctx)
        .src_host(&host)
        .src_pitch(hp * 4)
        .src_height(hh)
        .src_x_in_bytes(2 * 4)
        .src_y(3)
        .src_z(1)
        .dst_array(&mut array)
        .dst_x_in_bytes(3 * 4)
        .dst_y(2)
        .dst_z(2)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2)
        .execute()
        .expect("host -> array");
    let mut want_array = vec![POISON_U32; aw * ah * ad];
    copy_box_3d(
        &host,
        (hp, hh),
        (2, 3, 1),
        &mut want_array,
        (aw, ah),
        (3, 2, 2),
        boxed,
    );
    assert_eq!(array.to_host_vec::<u32>().expect("read"), want_array);

    // Array box -> device volume: pitch 16 elements, 6 rows per slice, 4 slices; at (1, 1, 1).
    let (dp, dh, dd) = (16, 6, 4);
    let mut dev = DeviceBuffer::from_slice(&ctx, &vec![POISON_U32; dp * dh * dd]).expect("poison");
    Memcpy3D::new(&ctx)
        .src_array(&array)
        .src_x_in_bytes(3 * 4)
        .src_y(2)
        .src_z(2)
        .dst_device(&mut dev)
        .dst_pitch(dp * 4)
        .dst_height(dh)
        .dst_x_in_bytes(4)
        .dst_y(1)
        .dst_z(1)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2)
        .execute()
        .expect("array -> device");
    let mut want_dev = vec![POISON_U32; dp * dh * dd];
    copy_box_3d(
        &want_array,
        (aw, ah),
        (3, 2, 2),
        &mut want_dev,
        (dp, dh),
        (1, 1, 1),
        boxed,
    );
    assert_eq!(dev.to_vec().expect("read"), want_dev);

    // Device box -> tight host volume, asynchronously.
    let stream = Stream::new(&ctx, StreamFlags::DEFAULT).expect("stream");
    let mut out = vec![POISON_U32; boxed.0 * boxed.1 * boxed.2];
    let copy = Memcpy3D::new(&ctx)
        .src_device(&dev)
        .src_pitch(dp * 4)
        .src_height(dh)
        .src_x_in_bytes(4)
        .src_y(1)
        .src_z(1)
        .dst_host(&mut out)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2);
    // SAFETY: `dev` and `out` outlive the synchronisation below.
    unsafe { copy.execute_async(&stream) }.expect("device -> host, async");
    stream.synchronize().expect("sync");
    let mut want_out = vec![POISON_U32; out.len()];
    copy_box_3d(
        &want_dev,
        (dp, dh),
        (1, 1, 1),
        &mut want_out,
        (boxed.0, boxed.1),
        (0, 0, 0),
        boxed,
    );
    assert_eq!(out, want_out);

    // A box past the array's slices is refused.
    let e = Memcpy3D::new(&ctx)
        .src_array(&array)
        .src_z(4)
        .dst_host(&mut out)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2)
        .execute()
        .expect_err("past the last slice");
    assert!(e.to_string().contains("src_z + depth"), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn memcpy3d_peer_between_two_contexts() {
    let ctx = ctx();
    let other = ctx
        .device()
        .make_context(ContextFlags::SCHED_AUTO)
        .expect("a second context");
    let mut rng = Rng::fresh();
    let boxed = (10, 4, 2);
    let (sp, sh, sd) = (32, 6, 3);
    let data = vec_u32(&mut rng, sp * sh * sd);
    let src = DeviceBuffer::from_slice(&ctx, &data).expect("upload");
    let n = boxed.0 * boxed.1 * boxed.2;
    let mut dst = DeviceBuffer::from_slice(&other, &vec![POISON_U32; n]).expect("poison");
    Memcpy3DPeer::new(&other, &ctx)
        .src_context(&ctx)
        .dst_context(&other)
        .src_device(&src)
        .src_pitch(sp * 4)
        .src_height(sh)
        .src_x_in_bytes(3 * 4)
        .src_y(1)
        .src_z(1)
        .dst_device(&mut dst)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2)
        .execute()
        .expect("peer copy");
    let mut want = vec![POISON_U32; n];
    copy_box_3d(
        &data,
        (sp, sh),
        (3, 1, 1),
        &mut want,
        (boxed.0, boxed.1),
        (0, 0, 0),
        boxed,
    );
    assert_eq!(dst.to_vec().expect("read"), want);

    // Back again through Memcpy3D::peer, into an array of the first context.
    let mut array = CudaArray::new_3d(
        &ctx,
        &ArrayDescriptor3D::d3(boxed.0, boxed.1, boxed.2, ArrayFormat::U32, 1),
    )
    .expect("array");
    array.copy_from_host(&vec![POISON_U32; n]).expect("poison");
    Memcpy3D::new(&ctx)
        .src_device(&dst)
        .dst_array(&mut array)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2)
        .peer(&other, &ctx)
        .execute()
        .expect("peer copy into an array");
    assert_eq!(array.to_host_vec::<u32>().expect("read"), want);

    // An array named with the wrong context is refused.
    let mut host = vec![0u32; n];
    let e = Memcpy3DPeer::new(&other, &other)
        .src_array(&array)
        .dst_host(&mut host)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2)
        .execute()
        .expect_err("wrong context");
    assert!(e.to_string().contains("another context"), "{e}");
}

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

    // F order: tex2D(x, y) reads m[x][y] of column-major data, at y * rows + x.
    let a = matrix_to_array(&ctx, &m, [rows, cols], Order::F).expect("F");
    let tex = TextureObject::from_array(&a, &TextureDescriptor::new()).expect("texture");
    let (xs, ys) = centres(rows, cols);
    let got = sample_2d(&ctx, &tex, &xs, &ys);
    let want: Vec<f64> = (0..rows * cols)
        .map(|i| {
            let (x, y) = (i % rows, i / rows);
            m[y * rows + x] as f64
        })
        .collect();
    assert_close(&f64s(&got), &want, 0.0);

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

#[test]
#[ignore = "needs a CUDA device"]
fn surface_written_by_a_kernel_then_read_back() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let m = module(&ctx, PTX);
    let null = Stream::null(&ctx);
    let (w, h) = (40, 24);
    let desc =
        ArrayDescriptor3D::d2(w, h, ArrayFormat::F32, 1).with_flags(Array3DFlags::SURFACE_LDST);
    let mut array = CudaArray::new_3d(&ctx, &desc).expect("surface array");
    array
        .copy_from_host(&vec![f32::NAN; w * h])
        .expect("poison");

    // surf2Dwrite of 2 * in + 1.
    let input = rng.vec_f32(w * h);
    let din = DeviceBuffer::from_slice(&ctx, &input).expect("upload");
    {
        let surf = SurfaceObject::new(&mut array).expect("surface");
        let f = m.function("surf2d_write").expect("surf2d_write");
        // SAFETY: surf2d_write(surf, in, w, h) reads in[0..w*h), writes (x, y) < (w, h).
        unsafe {
            f.launch(
                launch_2d(w, h),
                &null,
                (surf.handle(), &din, w as u32, h as u32),
            )
        }
        .expect("launch write");
        null.synchronize().expect("sync");
        surf.destroy().expect("destroy surface");
    }
    let want: Vec<f64> = input
        .iter()
        .map(|&v| (2.0f32 * v + 1.0f32) as f64)
        .collect();
    assert_close(
        &f64s(&array.to_host_vec::<f32>().expect("read")),
        &want,
        0.0,
    );

    // surf2Dread of fresh data.
    let fresh = rng.vec_f32(w * h);
    array.copy_from_host(&fresh).expect("fill");
    let mut out = poisoned_f32(&ctx, w * h);
    {
        let surf = SurfaceObject::new(&mut array).expect("surface");
        let f = m.function("surf2d_read").expect("surf2d_read");
        // SAFETY: surf2d_read(surf, out, w, h) writes out[0..w*h).
        unsafe {
            f.launch(
                launch_2d(w, h),
                &null,
                (surf.handle(), &mut out, w as u32, h as u32),
            )
        }
        .expect("launch read");
        assert_close(&f64s(&out.to_vec().expect("read")), &f64s(&fresh), 0.0);
    }

    // An array made without SURFACE_LDST is refused.
    let mut plain = CudaArray::new_3d(&ctx, &ArrayDescriptor3D::d2(w, h, ArrayFormat::F32, 1))
        .expect("plain array");
    assert!(matches!(
        SurfaceObject::new(&mut plain),
        Err(Error::InvalidArgument(_))
    ));
    ctx.check_deferred_errors()
        .expect("no errors in destructors");
}
