//! GPU tests of GL interop, headless: an OpenGL context on NVIDIA's EGL device platform,
//! the CUDA devices of the GL context, GL buffers, textures and renderbuffers registered
//! with CUDA, written or read by CUDA kernels, and read back or written through GL;
//! `mapping` has several resources mapped at once, misuse, dropped mappings and leaks.
//! Random inputs (seed printed), poisoned outputs, CPU references.
//!
//! Each test prints `RUCUDA_SKIPPED: <why>` and returns when no EGL display can be had
//! (no libEGL.so.1, no NVIDIA EGL vendor library, no EGL device): see gpu-setup.sh.

#[path = "../common/mod.rs"]
mod common;

mod mapping;

use common::*;
use glow::HasContext;
use rucuda_driver::{DeviceBuffer, DevicePointerArg, LaunchConfig, Stream, StreamFlags};
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
