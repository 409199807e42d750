//! GL interop mappings: several resources mapped in one call, misuse reported as typed
//! errors, a dropped mapping unmapped, no leaks over 1000 register/map/unmap cycles.

use crate::common::*;
use glow::HasContext;
use rucuda_driver::{
    ContextFlags, Device, DeviceBuffer, DevicePointerArg, LaunchConfig, Stream, StreamFlags,
};
use rucuda_gl::*;

#[test]
#[ignore = "needs a CUDA device"]
fn several_resources_map_in_one_call() {
    let Some(env) = env() else { return };
    let gl = env.glow();
    let mut rng = Rng::fresh();
    let n = 4099usize;
    let (w, h) = (64u32, 48u32);
    let x = rng.vec_f32(n);
    let src = rng.vec_u8((w * h * 4) as usize);
    let x_dev = DeviceBuffer::from_slice(&env.ctx, &x).unwrap();
    let src_dev = DeviceBuffer::from_slice(&env.ctx, &src).unwrap();
    let poison = vec![0xFFu8; n * 4];
    // SAFETY: the context is current on this thread for the buffers' lives.
    let (b1, b2) = unsafe {
        (
            BufferObject::from_bytes(gl, &poison, BufferUsage::DynamicDraw).unwrap(),
            BufferObject::from_bytes(gl, &poison, BufferUsage::DynamicDraw).unwrap(),
        )
    };
    let tex = texture_rgba8(gl, w, h, &vec![0; (w * h * 4) as usize]);
    let r1 = b1.register(&env.ctx, RegisterFlags::WRITE_DISCARD).unwrap();
    let r2 = b2.register(&env.ctx, RegisterFlags::NONE).unwrap();
    // SAFETY: the context is current while `img` lives.
    let img = unsafe {
        RegisteredImage::new(
            &env.ctx,
            gl,
            tex_name(tex),
            ImageTarget::Texture2D,
            RegisterFlags::SURFACE_LDST,
        )
    }
    .unwrap();
    let stream = Stream::new(&env.ctx, StreamFlags::NON_BLOCKING).unwrap();
    let m = kernels(&env.ctx);
    let affine = m.function("affine_f32").unwrap();
    let write = m.function("write_rgba8_surface").unwrap();
    {
        let mapping = map_resources(&[&r1, &img, &r2], &stream).unwrap();
        assert_eq!(mapping.len(), 3);
        assert!(r1.is_mapped() && img.is_mapped() && r2.is_mapped());
        assert_eq!(mapping.kind_of(1).unwrap(), ResourceKind::Image);
        let (p1, s1) = mapping.device_ptr_and_size_of(0).unwrap();
        let (p2, s2) = mapping.device_ptr_and_size_of(2).unwrap();
        assert_eq!((s1, s2), (n * 4, n * 4));
        assert_ne!(p1, p2);
        // Wrong kinds and indices are typed errors.
        assert!(matches!(
            mapping.device_ptr_and_size_of(1),
            Err(Error::WrongResourceKind {
                index: 1,
                wanted: ResourceKind::Buffer,
                ..
            })
        ));
        assert!(matches!(
            mapping.array_of(0, 0, 0),
            Err(Error::WrongResourceKind {
                index: 0,
                wanted: ResourceKind::Image,
                ..
            })
        ));
        assert!(matches!(
            mapping.device_ptr_and_size_of(3),
            Err(Error::IndexOutOfRange { index: 3, len: 3 })
        ));
        let surf = Surface::new(&env.ctx, mapping.array_of(1, 0, 0).unwrap().raw());
        // SAFETY: each launch stays inside its mapped buffer of n floats / the w x h
        // array, and reads n floats of x / w*h*4 bytes of src.
        unsafe {
            affine
                .launch(
                    LaunchConfig::for_elements(n, 256),
                    &stream,
                    (&x_dev, DevicePointerArg(p1), 2.0f32, 1.0f32, n as u32),
                )
                .unwrap();
            affine
                .launch(
                    LaunchConfig::for_elements(n, 256),
                    &stream,
                    (&x_dev, DevicePointerArg(p2), -0.5f32, 0.25f32, n as u32),
                )
                .unwrap();
            write
                .launch(grid_2d(w, h), &stream, (surf.0, &src_dev, w, h))
                .unwrap();
        }
        stream.synchronize().unwrap();
    } // all three unmapped in one call
    assert!(!r1.is_mapped() && !img.is_mapped() && !r2.is_mapped());
    let want1: Vec<f32> = x.iter().map(|&v| 2.0f32.mul_add(v, 1.0)).collect();
    let want2: Vec<f32> = x.iter().map(|&v| (-0.5f32).mul_add(v, 0.25)).collect();
    assert_close(&bytes_f32(&b1.to_vec().unwrap()), &want1, 1e-6);
    assert_close(&bytes_f32(&b2.to_vec().unwrap()), &want2, 1e-6);
    let got = read_rgba8(gl, Attachment::Texture(tex), w, h);
    assert_same_pixels(
        &got,
        &surface_transform(&src, w as usize, h as usize),
        w as usize,
    );
    drop((r1, r2, img));
    // SAFETY: the context is current; nothing uses the texture any more.
    unsafe { gl.delete_texture(tex) };
    take_deferred_errors().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn misuse_is_reported_as_typed_errors() {
    let Some(env) = env() else { return };
    let gl = env.glow();
    let ctx = &env.ctx;
    let stream = Stream::null(ctx);

    // Names that are no GL object of the kind asked for.
    let bogus = 0x00C0_FFEEu32;
    // SAFETY: the context is current on this thread.
    let e =
        unsafe { RegisteredBuffer::from_gl_name(ctx, gl, bogus, RegisterFlags::NONE) }.unwrap_err();
    assert!(
        matches!(e, Error::NoSuchGlObject { name, expected: "buffer" } if name == bogus),
        "{e}"
    );
    // SAFETY: as above.
    let e = unsafe {
        RegisteredImage::new(ctx, gl, bogus, ImageTarget::Texture2D, RegisterFlags::NONE)
    }
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::NoSuchGlObject {
                expected: "texture",
                ..
            }
        ),
        "{e}"
    );
    // SAFETY: as above.
    let e = unsafe {
        RegisteredImage::new(
            ctx,
            gl,
            bogus,
            ImageTarget::Renderbuffer,
            RegisterFlags::NONE,
        )
    }
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::NoSuchGlObject {
                expected: "renderbuffer",
                ..
            }
        ),
        "{e}"
    );
    // A texture is not a buffer; a deleted buffer is no buffer.
    let tex = texture_rgba8(gl, 8, 8, &[7; 256]);
    // SAFETY: as above.
    let e = unsafe { RegisteredBuffer::from_gl_name(ctx, gl, tex_name(tex), RegisterFlags::NONE) }
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::NoSuchGlObject {
                expected: "buffer",
                ..
            }
        ),
        "{e}"
    );
    // SAFETY: as above, for the buffer's life.
    let deleted = unsafe { BufferObject::new(gl, 64, BufferUsage::StaticDraw) }
        .unwrap()
        .name();
    // SAFETY: as above.
    let e = unsafe { RegisteredBuffer::from_gl_name(ctx, gl, deleted, RegisterFlags::NONE) }
        .unwrap_err();
    assert!(matches!(e, Error::NoSuchGlObject { .. }), "{e}");
    println!("unregistrable names: {e}");

    // Bad buffer arguments.
    // SAFETY: as above.
    let e = unsafe { BufferObject::new(gl, 0, BufferUsage::StaticDraw) }.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    // SAFETY: as above, for the buffer's life.
    let vbo = unsafe { BufferObject::new(gl, 256, BufferUsage::DynamicDraw) }.unwrap();
    assert!(matches!(
        vbo.read(200, &mut [0; 100]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        vbo.write(usize::MAX, &[1]),
        Err(Error::InvalidArgument(_))
    ));
    // SAFETY: as above, for the buffer's life.
    let vbo2 = unsafe { BufferObject::new(gl, 256, BufferUsage::DynamicDraw) }.unwrap();
    let reg = vbo.register(ctx, RegisterFlags::NONE).unwrap();
    let reg2 = vbo2.register(ctx, RegisterFlags::NONE).unwrap();
    // SAFETY: the context is current while `img` lives.
    let img = unsafe {
        RegisteredImage::new(
            ctx,
            gl,
            tex_name(tex),
            ImageTarget::Texture2D,
            RegisterFlags::NONE,
        )
    }
    .unwrap();

    // Mapping a mapped resource.
    let mut m = reg.map(&stream).unwrap();
    let e = reg.map(&stream).unwrap_err();
    assert!(
        matches!(e, Error::AlreadyMapped { gl_name } if gl_name == vbo.name()),
        "{e}"
    );
    let e = map_resources(&[&reg2, &img, &reg], &stream).unwrap_err();
    assert!(matches!(e, Error::AlreadyMapped { .. }), "{e}");
    assert!(
        !reg2.is_mapped() && !img.is_mapped(),
        "a failed map call left resources mapped"
    );
    let e = reg.set_map_flags(MapFlags::WriteDiscard).unwrap_err();
    assert!(matches!(e, Error::FlagsWhileMapped { .. }), "{e}");
    // Buffer accessors on a buffer mapping work; image accessors are the wrong kind.
    assert!(m.device_ptr_and_size().is_ok());
    assert!(matches!(
        m.array(0, 0),
        Err(Error::WrongResourceKind { .. })
    ));

    // Using a mapping after unmap.
    m.unmap().unwrap();
    assert!(!m.is_mapped() && !reg.is_mapped());
    assert!(matches!(m.device_ptr_and_size(), Err(Error::NotMapped)));
    assert!(matches!(m.device_ptr(), Err(Error::NotMapped)));
    assert!(matches!(m.array(0, 0), Err(Error::NotMapped)));
    assert!(matches!(m.unmap(), Err(Error::NotMapped)));
    drop(m);
    // The resource maps again once unmapped.
    drop(reg.map(&stream).unwrap());

    // The same resource twice, no resources, a stream of another context.
    let e = map_resources(&[&reg, &reg2, &reg], &stream).unwrap_err();
    assert!(matches!(e, Error::DuplicateResource { .. }), "{e}");
    assert!(!reg.is_mapped() && !reg2.is_mapped());
    assert!(matches!(
        map_resources(&[], &stream),
        Err(Error::NoResources)
    ));
    let other = Device::get(env.ctx.device().ordinal())
        .unwrap()
        .make_context(ContextFlags::SCHED_AUTO)
        .unwrap();
    let other_stream = Stream::null(&other);
    let e = map_resources(&[&reg], &other_stream).unwrap_err();
    assert!(matches!(e, Error::ContextMismatch), "{e}");
    drop(other_stream);
    drop(other);
    ctx.bind().unwrap();

    // Everything still works, and no destructor met an error.
    let m = map_resources(&[&reg, &img, &reg2], &stream).unwrap();
    assert!(m.array_of(1, 0, 0).is_ok());
    drop(m);
    drop((reg, reg2, img));
    // SAFETY: the context is current; nothing uses the texture any more.
    unsafe { gl.delete_texture(tex) };
    take_deferred_errors().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn dropping_a_mapping_unmaps_it() {
    let Some(env) = env() else { return };
    let gl = env.glow();
    let mut rng = Rng::fresh();
    let n = 1000usize;
    let x = rng.vec_f32(n);
    let x_dev = DeviceBuffer::from_slice(&env.ctx, &x).unwrap();
    // SAFETY: the context is current on this thread for the buffer's life.
    let vbo = unsafe { BufferObject::from_bytes(gl, &vec![0xFF; n * 4], BufferUsage::DynamicDraw) }
        .unwrap();
    let reg = vbo.register(&env.ctx, RegisterFlags::NONE).unwrap();
    let stream = Stream::new(&env.ctx, StreamFlags::NON_BLOCKING).unwrap();
    let f = kernels(&env.ctx).function("affine_f32").unwrap();
    let mapping = reg.map(&stream).unwrap();
    let ptr = mapping.device_ptr().unwrap();
    // SAFETY: writes n floats of the mapped buffer, reads n floats of x.
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 256),
            &stream,
            (&x_dev, ptr, 1.0f32, 0.0f32, n as u32),
        )
        .unwrap()
    };
    assert!(reg.is_mapped());
    drop(mapping); // no explicit unmap
    assert!(
        !reg.is_mapped(),
        "dropping the mapping left the resource mapped"
    );
    take_deferred_errors().unwrap();
    // GL sees the kernel's output (it would not be defined while still mapped)...
    assert_eq!(bytes_f32(&vbo.to_vec().unwrap()), x);
    // ...and CUDA can map it again.
    let mut again = reg.map(&stream).unwrap();
    again.unmap().unwrap();
    take_deferred_errors().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn no_leaks_over_1000_register_map_unmap_cycles() {
    let Some(env) = env() else { return };
    let gl = env.glow();
    let ctx = &env.ctx;
    let stream = Stream::new(ctx, StreamFlags::NON_BLOCKING).unwrap();
    const BUF_BYTES: usize = 4 << 20;
    const CHURN_BYTES: usize = 256 << 10;
    let (w, h) = (512u32, 512u32);
    // SAFETY: the context is current on this thread for the buffer's life.
    let vbo = unsafe { BufferObject::new(gl, BUF_BYTES, BufferUsage::DynamicDraw) }.unwrap();
    let tex = texture_rgba8(gl, w, h, &vec![0; (w * h * 4) as usize]);

    let cycle = |i: usize| {
        let reg = vbo.register(ctx, RegisterFlags::WRITE_DISCARD).unwrap();
        // SAFETY: the context is current while `img` lives.
        let img = unsafe {
            RegisteredImage::new(
                ctx,
                gl,
                tex_name(tex),
                ImageTarget::Texture2D,
                RegisterFlags::SURFACE_LDST,
            )
        }
        .unwrap();
        // A GL buffer created and deleted every cycle too.
        // SAFETY: as above.
        let churn = unsafe { BufferObject::new(gl, CHURN_BYTES, BufferUsage::StreamDraw) }.unwrap();
        let creg = churn.register(ctx, RegisterFlags::NONE).unwrap();
        let mut m = map_resources(&[&reg, &img, &creg], &stream).unwrap();
        let (_, size) = m.device_ptr_and_size_of(0).unwrap();
        assert_eq!(size, BUF_BYTES);
        assert_eq!(m.device_ptr_and_size_of(2).unwrap().1, CHURN_BYTES);
        let _array = m.array_of(1, 0, 0).unwrap().raw();
        if i % 2 == 0 {
            m.unmap().unwrap();
        } // else: unmapped by drop
        drop(m);
        drop((creg, img, reg));
        drop(churn);
    };

    for i in 0..20 {
        cycle(i);
    }
    // SAFETY: the context is current.
    unsafe { gl.finish() };
    ctx.synchronize().unwrap();
    // 100 cycles under compute-sanitizer, where every call is intercepted.
    let cycles = rucuda_testkit::scaled_for_sanitizer(1000, 100);
    let (free_before, total) = ctx.mem_get_info().unwrap();
    let rss_before = rss_bytes();
    let t = std::time::Instant::now();
    for i in 0..cycles {
        cycle(i);
    }
    let per_cycle = t.elapsed() / cycles as u32;
    // SAFETY: the context is current.
    unsafe { gl.finish() };
    ctx.synchronize().unwrap();
    let (free_after, _) = ctx.mem_get_info().unwrap();
    take_deferred_errors().unwrap();
    let lost = free_before.saturating_sub(free_after);
    println!(
        "{cycles} cycles, {per_cycle:?} each; free device memory {free_before} -> {free_after} \
         of {total} bytes (lost {lost}); resident host memory {rss_before:?} -> {:?} bytes \
         (reported, not checked: the drivers keep caches)",
        rss_bytes()
    );
    // A leak per cycle would lose far more: 1000 x 256 KiB if the churned GL buffers or
    // their registrations leaked. The slack covers the GL driver's own allocation pools.
    // Not checked under compute-sanitizer: other test binaries share the GPU there.
    assert!(
        lost <= 16 << 20 || rucuda_testkit::gpu_shared(),
        "{lost} bytes of device memory lost over {cycles} cycles"
    );
    drop(vbo);
    // SAFETY: the context is current; nothing uses the texture any more.
    unsafe { gl.delete_texture(tex) };
}

/// The process's resident memory (Linux), for the leak test's report.
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}
