//! CUDA computes an image into a GL texture; GL draws it; the result becomes a PNG.
//!
//! ```sh
//! cargo run -p rucuda-gl --example gl_interop -- [out.png]
//! ```
//!
//! Headless, on NVIDIA's EGL device platform (no window, no display server):
//! 1. a GL context with no surface, and the CUDA primary context of the GPU running it;
//! 2. a 1024x768 RGBA8 GL texture registered with CUDA (`SURFACE_LDST`), mapped on a
//!    stream, and a kernel writing a smooth-coloured Mandelbrot set (seahorse valley,
//!    2x2 supersampled) into its CUDA array through a surface object; unmapped;
//! 3. spot checks: 256 random pixels of the texture, read through GL, against a CPU
//!    model of the kernel;
//! 4. GL draws the texture into an offscreen framebuffer with a shader (a vignette), reads
//!    the pixels back, and the example writes them as a PNG: the first argument, else
//!    `$OUT/gl_interop.png` when `OUT` is set, else `docs/gl_interop.png`.
//!
//! Exits 1 with the reason when no EGL display or CUDA device can be had.

use std::error::Error;
use std::path::PathBuf;
use std::time::Instant;

use glow::HasContext;
use rucuda_driver::{check, driver, Context, LaunchConfig, Module, Stream, StreamFlags};
use rucuda_gl::headless::HeadlessGl;
use rucuda_gl::sys::{CUresourcetype, CUsurfObject, CUDA_RESOURCE_DESC};
use rucuda_gl::{ImageTarget, MapFlags, RegisterFlags, RegisteredImage};

const W: u32 = 1024;
const H: u32 = 768;
/// The view: centre, width in the complex plane, iteration limit.
const CENTER: (f64, f64) = (-0.7436, 0.1318);
const WIDTH: f64 = 0.012;
const MAX_ITER: i32 = 1500;

const VERTEX_SHADER: &str = r#"#version 330 core
out vec2 uv;
void main() {
    // One triangle covering the viewport: vertices (0,0), (2,0), (0,2) in uv.
    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
    uv = p;
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
"#;

const FRAGMENT_SHADER: &str = r#"#version 330 core
in vec2 uv;
out vec4 color;
uniform sampler2D image;
void main() {
    vec3 c = texture(image, uv).rgb;
    float vignette = smoothstep(0.9, 0.3, distance(uv, vec2(0.5)));
    color = vec4(c * mix(0.45, 1.0, vignette), 1.0);
}
"#;

fn main() {
    if let Err(e) = run() {
        eprintln!("gl_interop: {e}");
        std::process::exit(1);
    }
}

fn output_path() -> PathBuf {
    if let Some(p) = std::env::args_os().nth(1) {
        return PathBuf::from(p);
    }
    match std::env::var_os("OUT") {
        Some(dir) => PathBuf::from(dir).join("gl_interop.png"),
        None => PathBuf::from("docs/gl_interop.png"),
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let path = output_path();
    let egl = HeadlessGl::new(Some(0)).map_err(|e| format!("no headless OpenGL context: {e}"))?;
    println!("GL:   {}", egl.describe());
    let ctx = rucuda_gl::primary_context_for_current_gl()?;
    println!(
        "CUDA: device {} ({}), primary context",
        ctx.device().ordinal(),
        ctx.device().name()?
    );
    let gl = egl.gl();

    // 1. The texture CUDA writes.
    // SAFETY: the headless context is current on this thread for all GL calls below.
    let texture = unsafe {
        let t = gl.create_texture()?;
        gl.bind_texture(glow::TEXTURE_2D, Some(t));
        gl.tex_storage_2d(glow::TEXTURE_2D, 1, glow::RGBA8, W as i32, H as i32);
        gl.tex_parameter_i32(
            glow::TEXTURE_2D,
            glow::TEXTURE_MIN_FILTER,
            glow::LINEAR as i32,
        );
        gl.tex_parameter_i32(
            glow::TEXTURE_2D,
            glow::TEXTURE_MAG_FILTER,
            glow::LINEAR as i32,
        );
        gl.bind_texture(glow::TEXTURE_2D, None);
        t
    };
    gl_ok(gl, "creating the texture")?;

    // 2. CUDA computes the image into it.
    // SAFETY: the context stays current on this thread while `image` lives, and the
    // texture is deleted after it.
    let image = unsafe {
        RegisteredImage::new(
            &ctx,
            gl,
            texture.0.get(),
            ImageTarget::Texture2D,
            RegisterFlags::SURFACE_LDST,
        )?
    };
    image.set_map_flags(MapFlags::WriteDiscard)?;
    let module = Module::load_data(&ctx, include_str!("kernels/mandelbrot.ptx").as_bytes())?;
    let kernel = module.function("mandelbrot")?;
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let scale = WIDTH / f64::from(W);
    let started = Instant::now();
    {
        let mut mapping = image.map(&stream)?;
        let array = mapping.array(0, 0)?;
        let desc = array.descriptor()?;
        println!(
            "CUDA: texture {} mapped as a {}x{} CUDA array, {} channels",
            texture.0.get(),
            desc.width,
            desc.height,
            desc.num_channels
        );
        let surface = SurfaceObject::new(&ctx, array.raw())?;
        let cfg = LaunchConfig {
            grid: (W.div_ceil(16), H.div_ceil(16), 1),
            block: (16, 16, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: mandelbrot(surf, w, h, cx, cy, scale, max_iter) writes the w x h pixels
        // of the surface, which covers the mapped W x H array.
        unsafe {
            kernel.launch(
                cfg,
                &stream,
                (surface.0, W, H, CENTER.0, CENTER.1, scale, MAX_ITER),
            )?
        };
        stream.synchronize()?;
        drop(surface);
        mapping.unmap()?;
    }
    println!(
        "CUDA: Mandelbrot set at {:?}, width {WIDTH}, {MAX_ITER} iterations, 2x2 samples: {:.1} ms",
        CENTER,
        started.elapsed().as_secs_f64() * 1e3
    );

    // 3. Spot checks of what CUDA wrote, read through GL.
    let raw = read_texture(gl, texture)?;
    let checked = spot_check(&raw, scale);
    println!("check: {checked} of 256 random pixels match the CPU model (within 3/255)");
    // Boundary pixels take long, chaotic orbits, where CPU and GPU rounding (fused
    // multiply-adds) part ways; most pixels agree, a random image would match none.
    if checked < 128 {
        return Err(format!("only {checked} of 256 sampled pixels match the CPU model").into());
    }

    // 4. GL draws the texture into an offscreen framebuffer.
    let pixels = draw(gl, texture)?;
    drop(image);
    // SAFETY: the context is current; nothing uses the texture any more.
    unsafe { gl.delete_texture(texture) };
    rucuda_gl::take_deferred_errors()?;
    let distinct = {
        let mut v: Vec<[u8; 4]> = pixels
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    println!("GL:   drew it into a {W}x{H} framebuffer with a vignette shader; {distinct} distinct colours");
    if distinct < 1000 {
        return Err(format!("the image has only {distinct} colours: something went wrong").into());
    }

    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    write_png(&path, &pixels)?;
    println!("wrote {}", path.display());
    Ok(())
}

/// Fails on a pending GL error.
fn gl_ok(gl: &glow::Context, what: &str) -> Result<(), Box<dyn Error>> {
    // SAFETY: the context is current on this thread.
    match unsafe { gl.get_error() } {
        glow::NO_ERROR => Ok(()),
        e => Err(format!("GL error {e:#x} while {what}").into()),
    }
}

/// A surface object over a mapped CUDA array (raw `cuSurfObjectCreate`; rucuda-driver's
/// own surface objects are on their way), destroyed on drop.
struct SurfaceObject(CUsurfObject);

impl SurfaceObject {
    fn new(ctx: &Context, array: rucuda_gl::sys::CUarray) -> Result<Self, Box<dyn Error>> {
        ctx.bind()?;
        let mut desc = CUDA_RESOURCE_DESC {
            resType: CUresourcetype::CU_RESOURCE_TYPE_ARRAY,
            ..Default::default()
        };
        desc.res.array.hArray = array;
        let create = driver()?.cuSurfObjectCreate()?;
        let mut surf: CUsurfObject = 0;
        // SAFETY: writes one surface object; `desc` names a live CUDA array registered
        // for surface load/store.
        let code = unsafe { create(&mut surf, &desc) };
        check(code, "cuSurfObjectCreate")?;
        Ok(SurfaceObject(surf))
    }
}

impl Drop for SurfaceObject {
    fn drop(&mut self) {
        if let Ok(destroy) = driver().and_then(|d| Ok(d.cuSurfObjectDestroy()?)) {
            // SAFETY: destroys the surface object made in `new`, once.
            let code = unsafe { destroy(self.0) };
            if let Err(e) = check(code, "cuSurfObjectDestroy") {
                eprintln!("gl_interop: {e}");
            }
        }
    }
}

/// The texture's pixels through a framebuffer and `glReadPixels` (row 0 first).
fn read_texture(gl: &glow::Context, texture: glow::Texture) -> Result<Vec<u8>, Box<dyn Error>> {
    let mut out = vec![0u8; (W * H * 4) as usize];
    // SAFETY: the context is current; `out` holds W x H RGBA8 pixels (pack alignment 4
    // divides a row of W * 4 bytes).
    unsafe {
        let fb = gl.create_framebuffer()?;
        gl.bind_framebuffer(glow::FRAMEBUFFER, Some(fb));
        gl.framebuffer_texture_2d(
            glow::FRAMEBUFFER,
            glow::COLOR_ATTACHMENT0,
            glow::TEXTURE_2D,
            Some(texture),
            0,
        );
        gl.read_buffer(glow::COLOR_ATTACHMENT0);
        gl.read_pixels(
            0,
            0,
            W as i32,
            H as i32,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelPackData::Slice(Some(&mut out)),
        );
        gl.bind_framebuffer(glow::FRAMEBUFFER, None);
        gl.delete_framebuffer(fb);
    }
    gl_ok(gl, "reading the texture")?;
    Ok(out)
}

/// Draws the texture over a whole `W` x `H` offscreen framebuffer with the vignette
/// shader and reads the result back.
fn draw(gl: &glow::Context, texture: glow::Texture) -> Result<Vec<u8>, Box<dyn Error>> {
    let mut out = vec![0u8; (W * H * 4) as usize];
    // SAFETY: the context is current on this thread; every object is created and deleted
    // here; `out` holds W x H RGBA8 pixels.
    unsafe {
        let program = gl.create_program()?;
        let mut shaders = Vec::new();
        for (kind, src) in [
            (glow::VERTEX_SHADER, VERTEX_SHADER),
            (glow::FRAGMENT_SHADER, FRAGMENT_SHADER),
        ] {
            let s = gl.create_shader(kind)?;
            gl.shader_source(s, src);
            gl.compile_shader(s);
            if !gl.get_shader_compile_status(s) {
                return Err(format!("shader: {}", gl.get_shader_info_log(s)).into());
            }
            gl.attach_shader(program, s);
            shaders.push(s);
        }
        gl.link_program(program);
        if !gl.get_program_link_status(program) {
            return Err(format!("program: {}", gl.get_program_info_log(program)).into());
        }
        let target = gl.create_renderbuffer()?;
        gl.bind_renderbuffer(glow::RENDERBUFFER, Some(target));
        gl.renderbuffer_storage(glow::RENDERBUFFER, glow::RGBA8, W as i32, H as i32);
        let fb = gl.create_framebuffer()?;
        gl.bind_framebuffer(glow::FRAMEBUFFER, Some(fb));
        gl.framebuffer_renderbuffer(
            glow::FRAMEBUFFER,
            glow::COLOR_ATTACHMENT0,
            glow::RENDERBUFFER,
            Some(target),
        );
        let status = gl.check_framebuffer_status(glow::FRAMEBUFFER);
        if status != glow::FRAMEBUFFER_COMPLETE {
            return Err(format!("framebuffer incomplete: {status:#x}").into());
        }
        let vao = gl.create_vertex_array()?;
        gl.bind_vertex_array(Some(vao));
        gl.viewport(0, 0, W as i32, H as i32);
        gl.clear_color(0.0, 0.0, 0.0, 1.0);
        gl.clear(glow::COLOR_BUFFER_BIT);
        gl.use_program(Some(program));
        gl.active_texture(glow::TEXTURE0);
        gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        let loc = gl.get_uniform_location(program, "image");
        gl.uniform_1_i32(loc.as_ref(), 0);
        gl.draw_arrays(glow::TRIANGLES, 0, 3);
        gl.read_buffer(glow::COLOR_ATTACHMENT0);
        gl.read_pixels(
            0,
            0,
            W as i32,
            H as i32,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelPackData::Slice(Some(&mut out)),
        );
        gl.bind_texture(glow::TEXTURE_2D, None);
        gl.use_program(None);
        gl.bind_vertex_array(None);
        gl.bind_framebuffer(glow::FRAMEBUFFER, None);
        gl.delete_vertex_array(vao);
        gl.delete_framebuffer(fb);
        gl.delete_renderbuffer(target);
        for s in shaders {
            gl.delete_shader(s);
        }
        gl.delete_program(program);
    }
    gl_ok(gl, "drawing")?;
    Ok(out)
}

/// The CPU model of the kernel: one pixel.
fn cpu_pixel(px: u32, py: u32, scale: f64) -> [u8; 4] {
    let (mut r, mut g, mut b) = (0f32, 0f32, 0f32);
    for s in 0..4 {
        let ox = if s & 1 != 0 { 0.75 } else { 0.25 };
        let oy = if s & 2 != 0 { 0.75 } else { 0.25 };
        let x0 = CENTER.0 + (f64::from(px) + ox - 0.5 * f64::from(W)) * scale;
        let y0 = CENTER.1 - (f64::from(py) + oy - 0.5 * f64::from(H)) * scale;
        let (mut x, mut y, mut x2, mut y2) = (0f64, 0f64, 0f64, 0f64);
        let mut i = 0;
        while x2 + y2 <= 256.0 && i < MAX_ITER {
            y = 2.0 * x * y + y0;
            x = x2 - y2 + x0;
            x2 = x * x;
            y2 = y * y;
            i += 1;
        }
        if i < MAX_ITER {
            let nu = i as f32 + 1.0 - (((x2 + y2) as f32).log2() * 0.5).log2();
            let t = 0.35 * (nu + 1.0).ln();
            let tau = std::f32::consts::TAU;
            r += 0.5 + 0.5 * (tau * t).cos();
            g += 0.5 + 0.5 * (tau * (t + 0.15)).cos();
            b += 0.5 + 0.5 * (tau * (t + 0.30)).cos();
        }
    }
    let c = |v: f32| (255.0 * v * 0.25 + 0.5) as u8;
    [c(r), c(g), c(b), 255]
}

/// How many of 256 pseudo-random pixels of `raw` (row 0 = kernel row 0) match the CPU
/// model within 3/255 per channel.
fn spot_check(raw: &[u8], scale: f64) -> usize {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..256)
        .filter(|_| {
            let (px, py) = (
                (next() % u64::from(W)) as u32,
                (next() % u64::from(H)) as u32,
            );
            let i = ((py * W + px) * 4) as usize;
            let want = cpu_pixel(px, py, scale);
            raw[i..i + 4]
                .iter()
                .zip(want)
                .all(|(&g, w)| g.abs_diff(w) <= 3)
        })
        .count()
}

/// Writes RGBA8 pixels as a PNG. Row 0 of `pixels` is the framebuffer's bottom row,
/// which shows the kernel's row 0 (the picture's top), so rows go out in order.
fn write_png(path: &std::path::Path, pixels: &[u8]) -> Result<(), Box<dyn Error>> {
    let file = std::fs::File::create(path)?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), W, H);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(pixels)?;
    writer.finish()?;
    Ok(())
}
