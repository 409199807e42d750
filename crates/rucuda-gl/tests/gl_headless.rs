//! Real-GL tests that need no CUDA: a headless EGL context (any vendor: NVIDIA's, or
//! Mesa's software device on a machine with no GPU), `BufferObject` through glow and
//! through `GlFns`, and the texture / renderbuffer / framebuffer helpers the GPU tests
//! rely on. Each prints `RUCUDA_SKIPPED: <why>` and returns where no EGL display exists.

mod common;

use common::*;
use glow::HasContext;
use rucuda_gl::headless::HeadlessGl;
use rucuda_gl::*;

fn headless() -> Option<HeadlessGl> {
    match HeadlessGl::new(None) {
        Ok(gl) => {
            println!("{}", gl.describe());
            Some(gl)
        }
        Err(e) => {
            skip(format!("no headless OpenGL context through EGL: {e}"));
            None
        }
    }
}

fn buffer_round_trip<G: GlApi>(gl: G, check: &dyn Fn(u32) -> bool) {
    let mut rng = Rng::fresh();
    let data = rng.vec_u8(4099);
    // SAFETY: the headless context is current on this thread for the buffer's life.
    let buf = unsafe { BufferObject::from_bytes(gl, &data, BufferUsage::StaticDraw) }.unwrap();
    assert_eq!(buf.to_vec().unwrap(), data);
    buf.write(100, &[1, 2, 3]).unwrap();
    let mut got = [0u8; 5];
    buf.read(99, &mut got).unwrap();
    assert_eq!(got, [data[99], 1, 2, 3, data[103]]);
    assert!(check(buf.name()), "glIsBuffer is false for a live buffer");
    let name = buf.name();
    drop(buf);
    assert!(!check(name), "glIsBuffer is true after drop");
    take_deferred_errors().unwrap();
}

#[test]
fn buffer_objects_through_glow_and_through_gl_fns() {
    let Some(egl) = headless() else { return };
    let gl = egl.gl();
    let is_buffer = |n: u32| {
        // SAFETY: the context is current on this thread.
        unsafe { gl.gl_is_buffer(n) }
    };
    buffer_round_trip(gl, &is_buffer);
    // SAFETY: the loader is eglGetProcAddress of the current context.
    let fns = unsafe { GlFns::load(|name| egl.proc_address(name)) }.unwrap();
    buffer_round_trip(fns, &is_buffer);
    buffer_round_trip(std::rc::Rc::new(fns), &is_buffer);
    assert_gl_ok(gl, "buffer round trips");
}

#[test]
fn buffer_objects_leave_the_callers_binding_alone() {
    let Some(egl) = headless() else { return };
    let gl = egl.gl();
    // SAFETY: the context is current on this thread.
    unsafe {
        let mine = gl.create_buffer().unwrap();
        gl.bind_buffer(glow::COPY_WRITE_BUFFER, Some(mine));
        gl.bind_buffer(glow::ARRAY_BUFFER, Some(mine));
        let buf = BufferObject::new(gl, 64, BufferUsage::DynamicDraw).unwrap();
        buf.write(0, &[9; 64]).unwrap();
        assert_eq!(buf.to_vec().unwrap(), vec![9; 64]);
        assert_eq!(
            gl.get_parameter_i32(glow::COPY_WRITE_BUFFER_BINDING),
            mine.0.get() as i32
        );
        assert_eq!(
            gl.get_parameter_i32(glow::ARRAY_BUFFER_BINDING),
            mine.0.get() as i32
        );
        drop(buf);
        gl.delete_buffer(mine);
    }
    assert_gl_ok(gl, "binding checks");
}

#[test]
fn gl_names_are_told_apart() {
    let Some(egl) = headless() else { return };
    let gl = egl.gl();
    let tex = texture_rgba8(gl, 4, 4, &[1; 64]);
    let rb = renderbuffer_rgba8(gl, 4, 4);
    // SAFETY: the context is current on this thread.
    unsafe {
        assert!(gl.gl_is_texture(tex_name(tex)));
        assert!(!gl.gl_is_buffer(tex_name(tex)) || tex_name(tex) == 0);
        assert!(gl.gl_is_renderbuffer(rb_name(rb)));
        assert!(!gl.gl_is_texture(0xC0FFEE) && !gl.gl_is_buffer(0) && !gl.gl_is_renderbuffer(0));
        gl.delete_texture(tex);
        gl.delete_renderbuffer(rb);
        assert!(!gl.gl_is_texture(tex_name(tex)));
    }
}

#[test]
fn texture_and_renderbuffer_helpers_read_back_what_gl_holds() {
    let Some(egl) = headless() else { return };
    let gl = egl.gl();
    let mut rng = Rng::fresh();
    let (w, h) = (37u32, 23u32);
    let pixels = rng.vec_u8((w * h * 4) as usize);
    let tex = texture_rgba8(gl, w, h, &pixels);
    assert_same_pixels(
        &read_rgba8(gl, Attachment::Texture(tex), w, h),
        &pixels,
        w as usize,
    );
    // A renderbuffer filled by blitting the texture into it.
    let rb = renderbuffer_rgba8(gl, w, h);
    // SAFETY: the context is current on this thread.
    unsafe {
        let (src, dst) = (
            gl.create_framebuffer().unwrap(),
            gl.create_framebuffer().unwrap(),
        );
        gl.bind_framebuffer(glow::READ_FRAMEBUFFER, Some(src));
        gl.framebuffer_texture_2d(
            glow::READ_FRAMEBUFFER,
            glow::COLOR_ATTACHMENT0,
            glow::TEXTURE_2D,
            Some(tex),
            0,
        );
        gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, Some(dst));
        gl.framebuffer_renderbuffer(
            glow::DRAW_FRAMEBUFFER,
            glow::COLOR_ATTACHMENT0,
            glow::RENDERBUFFER,
            Some(rb),
        );
        gl.blit_framebuffer(
            0,
            0,
            w as i32,
            h as i32,
            0,
            0,
            w as i32,
            h as i32,
            glow::COLOR_BUFFER_BIT,
            glow::NEAREST,
        );
        gl.bind_framebuffer(glow::FRAMEBUFFER, None);
        gl.delete_framebuffer(src);
        gl.delete_framebuffer(dst);
    }
    assert_gl_ok(gl, "blit");
    assert_same_pixels(
        &read_rgba8(gl, Attachment::Renderbuffer(rb), w, h),
        &pixels,
        w as usize,
    );
    // The CPU model of the surface kernel is a bijection on bytes per channel position.
    let t = surface_transform(&pixels, w as usize, h as usize);
    assert_eq!(t.len(), pixels.len());
    assert_eq!(t[0], 255 - pixels[0]);
    // SAFETY: the context is current; nothing uses them any more.
    unsafe {
        gl.delete_texture(tex);
        gl.delete_renderbuffer(rb);
    }
}
