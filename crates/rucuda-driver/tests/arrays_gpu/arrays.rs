//! GPU tests of CUDA arrays: descriptors of every kind, round trips with host and device
//! memory (layered and cubemap arrays too), byte-offset and whole-row copies, and surface
//! objects written by a kernel.
//!
//! Every test uses fresh random data, poisons what the GPU writes before it writes it,
//! and compares with a CPU reference.

use crate::common::{assert_close, ctx, f64s, module, Rng};
use crate::{fortran, launch_2d, poisoned_f32, POISON_U32, PTX};
use rucuda_driver::vector::Float2;
use rucuda_driver::*;

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
    // F order: the row-major [2, w, h] block is reordered (axes reversed).
    assert_eq!(
        array_to_host::<i16>(&a).expect("read"),
        fortran(&px16, &[2, w, h])
    );

    // matrix_to_array in F order is rows wide and holds the transposed matrix.
    let (rows, cols) = (6, 10);
    let m = rng.vec_i32(rows * cols);
    let a = matrix_to_array(&ctx, &m, [rows, cols], Order::F).expect("matrix F");
    assert_eq!(
        a.descriptor().expect("descriptor"),
        ArrayDescriptor::new(rows, cols, ArrayFormat::I32, 1)
    );
    assert_eq!(
        a.to_host_vec::<i32>().expect("read"),
        fortran(&m, &[rows, cols])
    );

    // host_to_array in F order, 3D and odd sizes: the array is the first index wide.
    let (p, q, r) = (3, 5, 7);
    let v: Vec<f32> = rng.vec_f32(p * q * r);
    let a = host_to_array(&ctx, &v, &[p, q, r], Order::F, Array3DFlags::empty()).expect("3D F");
    assert_eq!(
        *a.desc(),
        ArrayDescriptor3D::d3(p, q, r, ArrayFormat::F32, 1)
    );
    assert_eq!(
        a.to_host_vec::<f32>().expect("read"),
        fortran(&v, &[p, q, r])
    );
    let a = host_to_array(&ctx, &v, &[p, q * r], Order::F, Array3DFlags::empty()).expect("2D F");
    assert_eq!(
        a.to_host_vec::<f32>().expect("read"),
        fortran(&v, &[p, q * r])
    );
    // C order copies the data as it is.
    let a = host_to_array(&ctx, &v, &[p, q, r], Order::C, Array3DFlags::empty()).expect("3D C");
    assert_eq!(a.to_host_vec::<f32>().expect("read"), v);

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
    let mut a = CudaArray::new_3d(
        &ctx,
        &ArrayDescriptor3D::layered_1d(50, 3, ArrayFormat::U16, 1),
    )
    .expect("1D layered");
    a.copy_from_host(&layers).expect("fill");
    assert_eq!(a.to_host_vec::<u16>().expect("read"), layers);

    // LAYERED with a 2D shape: a 2D array of one layer (PyCUDA's allowSurfaceBind).
    let flags = Array3DFlags::LAYERED | Array3DFlags::SURFACE_LDST;
    let a = CudaArray::from_host(&ctx, &layers, &[3, 50], Order::C, flags).expect("one layer");
    assert_eq!(
        *a.desc(),
        ArrayDescriptor3D::layered_2d(50, 3, 1, ArrayFormat::U16, 1).with_flags(flags)
    );
    let got = a.descriptor_3d().expect("cuArray3DGetDescriptor");
    assert_eq!((got.width, got.height, got.depth), (50, 3, 1));
    assert!(got.flags.contains(flags), "read back as {got:?}");
    assert_eq!(a.to_host_vec::<u16>().expect("read"), layers);
    let a = CudaArray::from_host(&ctx, &layers, &[3, 50], Order::F, Array3DFlags::LAYERED)
        .expect("one layer, F");
    assert_eq!(
        *a.desc(),
        ArrayDescriptor3D::layered_2d(3, 50, 1, ArrayFormat::U16, 1)
    );
    assert_eq!(
        a.to_host_vec::<u16>().expect("read"),
        fortran(&layers, &[3, 50])
    );

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
    let data = rng.vec_u32(n);
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
    let initial = rng.vec_u32(n);
    let mut a =
        CudaArray::new(&ctx, &ArrayDescriptor::new(n, 0, ArrayFormat::U32, 1)).expect("1D array");
    a.copy_from_host(&initial).expect("fill");
    let mut want = initial.clone();

    // memcpy_htoa: 30 elements at element 100.
    let h = rng.vec_u32(30);
    memcpy_htoa(&mut a, 100 * 4, &h).expect("memcpy_htoa");
    want[100..130].copy_from_slice(&h);

    // memcpy_dtoa: 40 elements of a device buffer at element 16.
    let dsrc = rng.vec_u32(50);
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
    let second = rng.vec_u32(80);
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
    let data = rng.vec_u32(w * h * d);
    let a =
        CudaArray::from_host(&ctx, &data, &[d, h, w], Order::C, Array3DFlags::empty()).expect("3D");
    let mut host = vec![POISON_U32; 9 * w];
    memcpy_atoh(&mut host, &a, 2 * row).expect("memcpy_atoh rows");
    assert_eq!(host, data[2 * w..11 * w]);

    // Device to the same rows of another 3D array and back.
    let fresh = rng.vec_u32(9 * w);
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
