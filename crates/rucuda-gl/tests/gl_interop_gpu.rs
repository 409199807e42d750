//! GPU tests of GL interop, headless: an OpenGL context on NVIDIA's EGL device platform,
//! GL buffers, textures and renderbuffers registered with CUDA, written or read by CUDA
//! kernels, and read back or written through GL. Random inputs (seed printed), poisoned
//! outputs, CPU references.
//!
//! Each test prints `RUCUDA_SKIPPED: <why>` and returns when no EGL display can be had
//! (no libEGL.so.1, no NVIDIA EGL vendor library, no EGL device): see gpu-setup.sh.

mod common;

use common::*;
use glow::HasContext;
use rucuda_driver::{
    ContextFlags, Device, DeviceBuffer, DevicePointerArg, LaunchConfig, Stream, StreamFlags,
};
use rucuda_gl::sys::CUarray_format;
use rucuda_gl::*;

#[test]
#[ignore = "needs a CUDA device"]
fn gl_devices_list_the_cuda_device_of_the_gl_context() {
    let Some(env) = env() else { return };
    let all = gl_devices(GlDeviceList::All).unwrap();
    assert!(!all.is_empty(), "cuGLGetDevices found no CUDA device");
    assert!(
        all.contains(&env.ctx.device()),
        "{all:?} lacks the device of primary_context_for_current_gl"
    );
    // The frame lists are meant for SLI; a headless context may not answer them.
    match gl_devices(GlDeviceList::CurrentFrame) {
        Ok(current) => assert!(
            current.iter().all(|d| all.contains(d)),
            "{current:?} not within {all:?}"
        ),
        Err(e) => println!("CU_GL_DEVICE_LIST_CURRENT_FRAME not answered: {e}"),
    }
    let again = primary_context_for_current_gl().unwrap();
    assert_eq!(again, env.ctx);
    assert!(again.is_primary());
    println!(
        "GL runs on CUDA devices {:?} ({}); EGL reports CUDA device {:?}",
        all.iter().map(|d| d.ordinal()).collect::<Vec<_>>(),
        env.ctx.device().name().unwrap(),
        env.gl.cuda_device()
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn buffer_written_by_kernel_reads_back_through_gl() {
    let Some(env) = env() else { return };
    let gl = env.glow();
    let mut rng = Rng::fresh();
    let n = (1usize << 16) + 3;
    let x = rng.vec_f32(n);
    let (a, b) = (rng.f32() * 4.0, rng.f32());
    let x_dev = DeviceBuffer::from_slice(&env.ctx, &x).unwrap();
    // Poison: every byte 0xFF is a NaN, which no output can equal.
    let poison = vec![0xFFu8; n * 4];
    // SAFETY: the test's GL context is current on this thread for the buffer's life.
    let vbo = unsafe { BufferObject::from_bytes(gl, &poison, BufferUsage::DynamicDraw) }.unwrap();
    assert_eq!(vbo.size(), n * 4);
    let reg = vbo
        .register(&env.ctx, RegisterFlags::WRITE_DISCARD)
        .unwrap();
    assert_eq!(reg.kind(), ResourceKind::Buffer);
    assert_eq!(reg.gl_name(), vbo.name());
    let stream = Stream::new(&env.ctx, StreamFlags::NON_BLOCKING).unwrap();
    let f = kernels(&env.ctx).function("affine_f32").unwrap();

    let mut mapping = reg.map(&stream).unwrap();
    assert!(reg.is_mapped() && mapping.is_mapped());
    assert_eq!(mapping.len(), 1);
    let (ptr, size) = mapping.device_ptr_and_size().unwrap();
    assert_ne!(ptr, 0);
    assert_eq!(size, n * 4, "mapped size");
    // SAFETY: affine_f32(x, y, a, b, n) reads x[0..n) and writes y[0..n); y is the mapped
    // buffer of n floats.
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 256),
            &stream,
            (&x_dev, DevicePointerArg(ptr), a, b, n as u32),
        )
        .unwrap()
    };
    mapping.unmap().unwrap();
    assert!(!reg.is_mapped() && !mapping.is_mapped());

    let got = bytes_f32(&vbo.to_vec().unwrap());
    let want: Vec<f32> = x.iter().map(|&v| a.mul_add(v, b)).collect();
    assert!(
        got.iter().all(|v| v.is_finite()),
        "poison left in the buffer"
    );
    assert_close(&got, &want, 1e-6);
    // The same through glow directly (glGetBufferSubData on GL_ARRAY_BUFFER).
    let mut raw = vec![0u8; 64];
    // SAFETY: the context is current; the buffer holds at least 64 bytes.
    unsafe {
        HasContext::bind_buffer(gl, glow::ARRAY_BUFFER, Some(glow_buffer(vbo.name())));
        HasContext::get_buffer_sub_data(gl, glow::ARRAY_BUFFER, 0, &mut raw);
        HasContext::bind_buffer(gl, glow::ARRAY_BUFFER, None);
    }
    assert_eq!(bytes_f32(&raw), got[..16]);
    take_deferred_errors().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn buffer_written_by_gl_is_read_by_kernel() {
    if rucuda_testkit::skip_under_sanitizer_tools(
        &["initcheck"],
        "the kernel reads what OpenGL wrote, which initcheck cannot see",
    ) {
        return;
    }
    let Some(env) = env() else { return };
    // This test reaches GL through raw function pointers (GlFns), the others through glow.
    // SAFETY: the loader is the current context's eglGetProcAddress.
    let fns = unsafe { GlFns::load(|name| env.gl.proc_address(name)) }.unwrap();
    let mut rng = Rng::fresh();
    let n = 100_003usize;
    let x = rng.vec_f32(n);
    let (a, b) = (rng.f32() * 3.0, rng.f32());
    // SAFETY: the test's GL context is current on this thread for the buffer's life.
    let vbo = unsafe { BufferObject::new(fns, n * 4, BufferUsage::StaticDraw) }.unwrap();
    vbo.write(0, &f32_bytes(&x)).unwrap();
    let reg = RegisteredBuffer::new(&env.ctx, &vbo, RegisterFlags::READ_ONLY).unwrap();
    reg.set_map_flags(MapFlags::ReadOnly).unwrap();
    assert_eq!(reg.map_flags(), MapFlags::ReadOnly);
    let stream = Stream::new(&env.ctx, StreamFlags::DEFAULT).unwrap();
    let mut y = DeviceBuffer::from_slice(&env.ctx, &vec![f32::NAN; n]).unwrap();
    let f = kernels(&env.ctx).function("affine_f32").unwrap();
    {
        let mapping = reg.map(&stream).unwrap();
        let (ptr, size) = mapping.device_ptr_and_size().unwrap();
        assert_eq!(size, n * 4);
        // SAFETY: reads n floats of the mapped buffer, writes n floats of y.
        unsafe {
            f.launch(
                LaunchConfig::for_elements(n, 128),
                &stream,
                (DevicePointerArg(ptr), &mut y, a, b, n as u32),
            )
            .unwrap()
        };
        stream.synchronize().unwrap();
    }
    assert!(!reg.is_mapped());
    let got = y.to_vec().unwrap();
    let want: Vec<f32> = x.iter().map(|&v| a.mul_add(v, b)).collect();
    assert_close(&got, &want, 1e-6);
    // The buffer itself is unchanged (registered read-only).
    assert_eq!(bytes_f32(&vbo.to_vec().unwrap()), x);
    take_deferred_errors().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn texture_written_through_surface_reads_back_through_framebuffer() {
    let Some(env) = env() else { return };
    let gl = env.glow();
    let mut rng = Rng::fresh();
    let (w, h) = (333u32, 197u32);
    let src = rng.vec_u8((w * h * 4) as usize);
    let src_dev = DeviceBuffer::from_slice(&env.ctx, &src).unwrap();
    let tex = texture_rgba8(gl, w, h, &vec![0xCD; (w * h * 4) as usize]);
    // SAFETY: the context is current on this thread while `image` lives; the texture is
    // deleted only after it.
    let image = unsafe {
        RegisteredImage::new(
            &env.ctx,
            gl,
            tex_name(tex),
            ImageTarget::Texture2D,
            RegisterFlags::SURFACE_LDST,
        )
    }
    .unwrap();
    image.set_map_flags(MapFlags::WriteDiscard).unwrap();
    assert_eq!(image.kind(), ResourceKind::Image);
    assert_eq!(image.target(), ImageTarget::Texture2D);
    let stream = Stream::new(&env.ctx, StreamFlags::NON_BLOCKING).unwrap();
    let f = kernels(&env.ctx).function("write_rgba8_surface").unwrap();
    {
        let mut mapping = image.map(&stream).unwrap();
        let array = mapping.array(0, 0).unwrap();
        let d = array.descriptor().unwrap();
        assert_eq!((d.width, d.height), (w as usize, h as usize));
        assert_eq!(d.num_channels, 4);
        assert_eq!(d.format, CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8);
        assert_eq!(d.element_size(), Some(4));
        let surf = Surface::new(&env.ctx, array.raw());
        // SAFETY: writes w x h pixels through a surface over the w x h mapped array;
        // reads w*h*4 bytes of src.
        unsafe {
            f.launch(grid_2d(w, h), &stream, (surf.0, &src_dev, w, h))
                .unwrap()
        };
        stream.synchronize().unwrap();
        drop(surf);
        mapping.unmap().unwrap();
    }
    let got = read_rgba8(gl, Attachment::Texture(tex), w, h);
    assert_same_pixels(
        &got,
        &surface_transform(&src, w as usize, h as usize),
        w as usize,
    );
    drop(image);
    // SAFETY: the context is current; nothing uses the texture any more.
    unsafe { gl.delete_texture(tex) };
    take_deferred_errors().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn texture_written_by_gl_is_read_by_kernel_through_surface() {
    let Some(env) = env() else { return };
    let gl = env.glow();
    let mut rng = Rng::fresh();
    let (w, h) = (130u32, 67u32);
    let pixels = rng.vec_u8((w * h * 4) as usize);
    let tex = texture_rgba8(gl, w, h, &pixels);
    // SAFETY: the context is current on this thread while `image` lives.
    let image = unsafe {
        RegisteredImage::new(
            &env.ctx,
            gl,
            tex_name(tex),
            ImageTarget::Texture2D,
            RegisterFlags::SURFACE_LDST,
        )
    }
    .unwrap();
    image.set_map_flags(MapFlags::ReadOnly).unwrap();
    let stream = Stream::null(&env.ctx);
    let mut dst = DeviceBuffer::from_slice(&env.ctx, &vec![0xEEu8; pixels.len()]).unwrap();
    let f = kernels(&env.ctx).function("read_rgba8_surface").unwrap();
    {
        let mapping = image.map(&stream).unwrap();
        let surf = Surface::new(&env.ctx, mapping.array(0, 0).unwrap().raw());
        // SAFETY: reads w x h pixels through the surface, writes w*h*4 bytes of dst.
        unsafe {
            f.launch(grid_2d(w, h), &stream, (surf.0, &mut dst, w, h))
                .unwrap()
        };
        stream.synchronize().unwrap();
    }
    assert_same_pixels(&dst.to_vec().unwrap(), &pixels, w as usize);
    drop(image);
    // SAFETY: the context is current; nothing uses the texture any more.
    unsafe { gl.delete_texture(tex) };
    take_deferred_errors().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn renderbuffer_written_by_memcpy_reads_back_through_framebuffer() {
    let Some(env) = env() else { return };
    let gl = env.glow();
    let mut rng = Rng::fresh();
    let (w, h) = (257u32, 129u32);
    let pixels = rng.vec_u8((w * h * 4) as usize);
    let src = DeviceBuffer::from_slice(&env.ctx, &pixels).unwrap();
    let rb = renderbuffer_rgba8(gl, w, h);
    // SAFETY: the context is current on this thread while `image` lives.
    let image = unsafe {
        RegisteredImage::new(
            &env.ctx,
            gl,
            rb_name(rb),
            ImageTarget::Renderbuffer,
            RegisterFlags::NONE,
        )
    }
    .unwrap();
    let stream = Stream::null(&env.ctx);
    {
        let mapping = image.map(&stream).unwrap();
        let array = mapping.array(0, 0).unwrap();
        let d = array.descriptor().unwrap();
        assert_eq!(
            (d.width, d.height, d.num_channels),
            (w as usize, h as usize, 4)
        );
        copy_device_to_array(
            &env.ctx,
            rucuda_driver::DevicePtr::device_range(&src)
                .use_on(&stream, rucuda_driver::Access::Read)
                .unwrap()
                .ptr(),
            array.raw(),
            w as usize,
            h as usize,
        );
    } // unmapped by drop
    let got = read_rgba8(gl, Attachment::Renderbuffer(rb), w, h);
    assert_same_pixels(&got, &pixels, w as usize);
    drop(image);
    // SAFETY: the context is current; nothing uses the renderbuffer any more.
    unsafe { gl.delete_renderbuffer(rb) };
    take_deferred_errors().unwrap();
}

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
        lost <= 16 << 20 || rucuda_testkit::under_sanitizer(),
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
