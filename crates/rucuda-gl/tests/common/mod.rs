//! Helpers of rucuda-gl's GPU tests: the headless GL context and the CUDA context that
//! runs it (or a skip saying why there is none), GL textures and framebuffers through
//! glow, surface objects, random data.
#![allow(dead_code, unused_imports)]

use std::num::NonZeroU32;
use std::sync::{Mutex, MutexGuard};

use glow::HasContext;
use rucuda_driver::{Context, LaunchConfig, Module};
use rucuda_gl::headless::HeadlessGl;
use rucuda_gl::sys::{CUarray, CUresourcetype, CUsurfObject, CUDA_RESOURCE_DESC};

/// Tests of one process run one at a time: the leak test reads device-wide free memory,
/// and every test makes its own GL context.
static GPU_LOCK: Mutex<()> = Mutex::new(());

/// Prints the marker the bundle counts as a skip.
pub use rucuda_testkit::skip;

/// A headless GL context current on this thread and the primary CUDA context of the
/// device that runs it. Fields drop in order: the lock last.
pub struct Env {
    pub ctx: Context,
    pub gl: HeadlessGl,
    _lock: MutexGuard<'static, ()>,
}

impl Env {
    pub fn glow(&self) -> &glow::Context {
        self.gl.gl()
    }
}

/// The test environment, or `None` after printing `RUCUDA_SKIPPED: <why>` when no EGL
/// display or no CUDA device for it can be had.
pub fn env() -> Option<Env> {
    let lock = GPU_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let gl = match HeadlessGl::new(Some(0)) {
        Ok(gl) => gl,
        Err(e) => {
            skip(format!("no headless OpenGL context through EGL: {e}"));
            return None;
        }
    };
    println!("{}", gl.describe());
    let ctx = match rucuda_gl::primary_context_for_current_gl() {
        Ok(ctx) => ctx,
        Err(rucuda_gl::Error::NoCudaDeviceForGl) => {
            skip(format!(
                "the EGL device ({}) runs on no CUDA device",
                gl.describe()
            ));
            return None;
        }
        Err(e) => panic!("cuGLGetDevices failed with a GL context current: {e}"),
    };
    Some(Env {
        ctx,
        gl,
        _lock: lock,
    })
}

/// The test kernels (`tests/kernels/gl.cu`).
pub fn kernels(ctx: &Context) -> Module {
    Module::load_data(ctx, include_str!("../kernels/gl.ptx").as_bytes()).expect("PTX loads")
}

/// A 2D launch of 16x16 blocks covering `w` x `h`.
pub fn grid_2d(w: u32, h: u32) -> LaunchConfig {
    LaunchConfig {
        grid: (w.div_ceil(16), h.div_ceil(16), 1),
        block: (16, 16, 1),
        shared_mem_bytes: 0,
    }
}

/// Fails the test on a pending GL error.
pub fn assert_gl_ok(gl: &glow::Context, what: &str) {
    // SAFETY: the test's context is current on this thread.
    let e = unsafe { gl.get_error() };
    assert_eq!(e, glow::NO_ERROR, "GL error {e:#x} after {what}");
}

/// A `w` x `h` RGBA8 2D texture holding `pixels` (rows bottom-up, as GL stores them).
pub fn texture_rgba8(gl: &glow::Context, w: u32, h: u32, pixels: &[u8]) -> glow::Texture {
    assert_eq!(pixels.len(), (w * h * 4) as usize);
    // SAFETY: the test's context is current on this thread.
    let tex = unsafe {
        let tex = gl.create_texture().expect("glGenTextures");
        gl.bind_texture(glow::TEXTURE_2D, Some(tex));
        gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
        gl.tex_image_2d(
            glow::TEXTURE_2D,
            0,
            glow::RGBA8 as i32,
            w as i32,
            h as i32,
            0,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelUnpackData::Slice(Some(pixels)),
        );
        gl.tex_parameter_i32(
            glow::TEXTURE_2D,
            glow::TEXTURE_MIN_FILTER,
            glow::NEAREST as i32,
        );
        gl.tex_parameter_i32(
            glow::TEXTURE_2D,
            glow::TEXTURE_MAG_FILTER,
            glow::NEAREST as i32,
        );
        gl.bind_texture(glow::TEXTURE_2D, None);
        tex
    };
    assert_gl_ok(gl, "creating a texture");
    tex
}

/// A `w` x `h` RGBA8 renderbuffer (contents undefined).
pub fn renderbuffer_rgba8(gl: &glow::Context, w: u32, h: u32) -> glow::Renderbuffer {
    // SAFETY: the test's context is current on this thread.
    let rb = unsafe {
        let rb = gl.create_renderbuffer().expect("glGenRenderbuffers");
        gl.bind_renderbuffer(glow::RENDERBUFFER, Some(rb));
        gl.renderbuffer_storage(glow::RENDERBUFFER, glow::RGBA8, w as i32, h as i32);
        gl.bind_renderbuffer(glow::RENDERBUFFER, None);
        rb
    };
    assert_gl_ok(gl, "creating a renderbuffer");
    rb
}

/// What GL reads back from a color attachment (`glReadPixels` through a framebuffer).
pub enum Attachment {
    Texture(glow::Texture),
    Renderbuffer(glow::Renderbuffer),
}

/// Reads `w` x `h` RGBA8 pixels of a texture or renderbuffer through a framebuffer
/// object and `glReadPixels`.
pub fn read_rgba8(gl: &glow::Context, what: Attachment, w: u32, h: u32) -> Vec<u8> {
    let mut out = vec![0u8; (w * h * 4) as usize];
    // SAFETY: the test's context is current on this thread; `out` holds w*h RGBA8 pixels
    // with pack alignment 1.
    unsafe {
        let fb = gl.create_framebuffer().expect("glGenFramebuffers");
        gl.bind_framebuffer(glow::FRAMEBUFFER, Some(fb));
        match what {
            Attachment::Texture(t) => gl.framebuffer_texture_2d(
                glow::FRAMEBUFFER,
                glow::COLOR_ATTACHMENT0,
                glow::TEXTURE_2D,
                Some(t),
                0,
            ),
            Attachment::Renderbuffer(r) => gl.framebuffer_renderbuffer(
                glow::FRAMEBUFFER,
                glow::COLOR_ATTACHMENT0,
                glow::RENDERBUFFER,
                Some(r),
            ),
        }
        let status = gl.check_framebuffer_status(glow::FRAMEBUFFER);
        assert_eq!(status, glow::FRAMEBUFFER_COMPLETE, "framebuffer incomplete");
        gl.read_buffer(glow::COLOR_ATTACHMENT0);
        gl.pixel_store_i32(glow::PACK_ALIGNMENT, 1);
        gl.read_pixels(
            0,
            0,
            w as i32,
            h as i32,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelPackData::Slice(Some(&mut out)),
        );
        gl.bind_framebuffer(glow::FRAMEBUFFER, None);
        gl.delete_framebuffer(fb);
    }
    assert_gl_ok(gl, "glReadPixels");
    out
}

/// The GL name of a glow texture.
pub fn tex_name(t: glow::Texture) -> u32 {
    t.0.get()
}

/// The GL name of a glow renderbuffer.
pub fn rb_name(r: glow::Renderbuffer) -> u32 {
    r.0.get()
}

/// A glow buffer handle for a GL name.
pub fn glow_buffer(name: u32) -> glow::Buffer {
    glow::NativeBuffer(NonZeroU32::new(name).expect("a nonzero buffer name"))
}

/// A surface object over a mapped CUDA array (raw `cuSurfObjectCreate`), destroyed on
/// drop. The array must have been registered with `SURFACE_LDST`.
pub struct Surface(pub CUsurfObject);

impl Surface {
    pub fn new(ctx: &Context, array: CUarray) -> Surface {
        ctx.bind().unwrap();
        let mut desc = CUDA_RESOURCE_DESC {
            resType: CUresourcetype::CU_RESOURCE_TYPE_ARRAY,
            ..Default::default()
        };
        desc.res.array.hArray = array;
        let f = rucuda_driver::driver()
            .unwrap()
            .cuSurfObjectCreate()
            .unwrap();
        let mut surf: CUsurfObject = 0;
        // SAFETY: writes one surface object; `desc` describes a live CUDA array.
        let code = unsafe { f(&mut surf, &desc) };
        rucuda_driver::check(code, "cuSurfObjectCreate").unwrap();
        Surface(surf)
    }
}

impl Drop for Surface {
    fn drop(&mut self) {
        let f = rucuda_driver::driver()
            .unwrap()
            .cuSurfObjectDestroy()
            .unwrap();
        // SAFETY: destroys the surface object created in `new`, once.
        let code = unsafe { f(self.0) };
        rucuda_driver::check(code, "cuSurfObjectDestroy").unwrap();
    }
}

/// Copies `w` x `h` RGBA8 pixels from device memory into a CUDA array (raw
/// `cuMemcpy2D`; synchronous).
pub fn copy_device_to_array(ctx: &Context, src: u64, array: CUarray, w: usize, h: usize) {
    use rucuda_gl::sys::{CUmemorytype, CUDA_MEMCPY2D};
    ctx.bind().unwrap();
    let copy = CUDA_MEMCPY2D {
        srcMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcDevice: src,
        srcPitch: w * 4,
        dstMemoryType: CUmemorytype::CU_MEMORYTYPE_ARRAY,
        dstArray: array,
        WidthInBytes: w * 4,
        Height: h,
        ..Default::default()
    };
    let f = rucuda_driver::driver().unwrap().cuMemcpy2D().unwrap();
    // SAFETY: the source holds h rows of w*4 bytes; the array is w x h RGBA8 and mapped.
    let code = unsafe { f(&copy) };
    rucuda_driver::check(code, "cuMemcpy2D").unwrap();
}

/// Fresh random inputs per test (seed printed; `RUCUDA_TEST_SEED` replays a run).
pub use rucuda_testkit::TestRng as Rng;

/// Floats as bytes (native endianness, as GL and CUDA store them).
pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// Bytes as floats.
pub fn bytes_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Asserts |got - want| <= tol * max(1, |want|) elementwise, naming the first bad index.
pub use rucuda_testkit::assert_close;

/// The CPU model of `write_rgba8_surface`: pixel (x, y) of the output from `src`.
pub fn surface_transform(src: &[u8], w: usize, h: usize) -> Vec<u8> {
    let mut out = vec![0u8; w * h * 4];
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) * 4;
            out[i] = 255 - src[i];
            out[i + 1] = src[i + 1] ^ 0x5a;
            out[i + 2] = src[i + 2].wrapping_add((x + y) as u8);
            out[i + 3] = src[i + 3];
        }
    }
    out
}

/// Asserts two RGBA8 images are equal, naming the first differing pixel.
pub fn assert_same_pixels(got: &[u8], want: &[u8], w: usize) {
    assert_eq!(got.len(), want.len());
    if let Some(i) = got
        .chunks_exact(4)
        .zip(want.chunks_exact(4))
        .position(|(g, w)| g != w)
    {
        panic!(
            "pixel ({}, {}) differs: got {:?}, want {:?}",
            i % w,
            i / w,
            &got[i * 4..i * 4 + 4],
            &want[i * 4..i * 4 + 4]
        );
    }
}
