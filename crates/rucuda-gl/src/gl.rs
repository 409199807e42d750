//! The few OpenGL entry points this crate calls, reached through the caller's loader:
//! [`GlApi`], implemented for [`GlFns`] (function pointers from any loader: EGL, GLX,
//! WGL, SDL, glutin, winit...) and, with the `glow` feature, for `glow::Context`.
//!
//! Nothing here links against a GL library: every function comes from the caller.

use std::ffi::{c_void, CStr};
use std::rc::Rc;
use std::sync::Arc;

use crate::error::{Error, Result};

/// `GL_COPY_WRITE_BUFFER`: the binding point this crate uses to create, fill and read
/// buffers (restored afterwards), so the caller's `GL_ARRAY_BUFFER` binding is untouched.
pub const GL_COPY_WRITE_BUFFER: u32 = 0x8F37;
/// `GL_COPY_WRITE_BUFFER_BINDING` (the same enum value as the target).
pub const GL_COPY_WRITE_BUFFER_BINDING: u32 = 0x8F37;
/// `GL_NO_ERROR`.
pub const GL_NO_ERROR: u32 = 0;

/// The GL operations this crate needs, in terms of GL names (`GLuint`) and enums.
///
/// Implemented for [`GlFns`] and (feature `glow`) `glow::Context`, and through `&T`,
/// `Rc<T>`, `Arc<T>` and `Box<T>` for any implementation, so a [`BufferObject`] can
/// borrow the caller's GL or share ownership of it.
///
/// Every method is `unsafe` for one reason: GL functions act on the GL context that is
/// current on the calling thread, which Rust cannot check.
///
/// # Safety (of calling any method)
/// A GL context is current on the calling thread, and it is the context (or one sharing
/// objects with it) whose functions this value was loaded for.
///
/// ```no_run
/// # fn get_proc_address(_: &std::ffi::CStr) -> *const std::ffi::c_void { std::ptr::null() }
/// use rucuda_gl::{GlApi, GlFns};
/// // SAFETY: a GL context is current on this thread and the loader belongs to it.
/// let gl = unsafe { GlFns::load(get_proc_address)? };
/// // SAFETY: as above.
/// let is_buffer = unsafe { gl.gl_is_buffer(1) };
/// # Ok::<(), rucuda_gl::Error>(())
/// ```
///
/// [`BufferObject`]: crate::BufferObject
#[allow(clippy::missing_safety_doc)]
pub trait GlApi {
    /// `glGenBuffers(1, &name)`: a new buffer name (an object once first bound).
    unsafe fn gl_gen_buffer(&self) -> Result<u32>;
    /// `glDeleteBuffers(1, &name)`.
    unsafe fn gl_delete_buffer(&self, name: u32);
    /// `glBindBuffer(target, name)`; `name` 0 unbinds.
    unsafe fn gl_bind_buffer(&self, target: u32, name: u32);
    /// `glBufferData(target, size, data, usage)`: `data` is `None` (contents undefined) or
    /// exactly `size` bytes.
    unsafe fn gl_buffer_data(
        &self,
        target: u32,
        size: usize,
        data: Option<&[u8]>,
        usage: u32,
    ) -> Result<()>;
    /// `glBufferSubData(target, offset, data.len(), data)`.
    unsafe fn gl_buffer_sub_data(&self, target: u32, offset: usize, data: &[u8]) -> Result<()>;
    /// `glGetBufferSubData(target, offset, out.len(), out)` (desktop OpenGL).
    unsafe fn gl_get_buffer_sub_data(
        &self,
        target: u32,
        offset: usize,
        out: &mut [u8],
    ) -> Result<()>;
    /// `glGetIntegerv(pname, &value)` for a single-valued `pname`.
    unsafe fn gl_get_integer(&self, pname: u32) -> i32;
    /// `glGetError()`.
    unsafe fn gl_get_error(&self) -> u32;
    /// `glIsBuffer(name)`.
    unsafe fn gl_is_buffer(&self, name: u32) -> bool;
    /// `glIsTexture(name)`.
    unsafe fn gl_is_texture(&self, name: u32) -> bool;
    /// `glIsRenderbuffer(name)`.
    unsafe fn gl_is_renderbuffer(&self, name: u32) -> bool;
}

/// Checks `glGetError` after `call`.
///
/// # Safety
/// As for every [`GlApi`] method.
pub(crate) unsafe fn gl_check<G: GlApi + ?Sized>(gl: &G, call: &'static str) -> Result<()> {
    // SAFETY: the caller keeps the context current.
    match unsafe { gl.gl_get_error() } {
        GL_NO_ERROR => Ok(()),
        code => Err(Error::Gl { call, code }),
    }
}

/// `v` as the integer type a GL binding takes (`GLsizeiptr` and `GLintptr` for
/// [`GlFns`], `i32` for glow).
fn gl_int<T: TryFrom<usize>>(v: usize, what: &str) -> Result<T> {
    T::try_from(v).map_err(|_| {
        let ty = std::any::type_name::<T>();
        Error::InvalidArgument(format!(
            "{what} {v} is too large for this GL binding ({ty})"
        ))
    })
}

/// `glBufferData`'s `data`, when given, holds exactly `size` bytes.
fn check_buffer_data(size: usize, data: Option<&[u8]>) -> Result<()> {
    if data.is_some_and(|d| d.len() != size) {
        return Err(Error::InvalidArgument(
            "buffer data length differs from the size".into(),
        ));
    }
    Ok(())
}

macro_rules! forward_gl_api {
    ($($ty:ty),*) => {$(
        impl<T: GlApi + ?Sized> GlApi for $ty {
            unsafe fn gl_gen_buffer(&self) -> Result<u32> {
                // SAFETY: forwarded; the caller upholds the contract.
                unsafe { (**self).gl_gen_buffer() }
            }
            unsafe fn gl_delete_buffer(&self, name: u32) {
                // SAFETY: forwarded.
                unsafe { (**self).gl_delete_buffer(name) }
            }
            unsafe fn gl_bind_buffer(&self, target: u32, name: u32) {
                // SAFETY: forwarded.
                unsafe { (**self).gl_bind_buffer(target, name) }
            }
            unsafe fn gl_buffer_data(
                &self,
                target: u32,
                size: usize,
                data: Option<&[u8]>,
                usage: u32,
            ) -> Result<()> {
                // SAFETY: forwarded.
                unsafe { (**self).gl_buffer_data(target, size, data, usage) }
            }
            unsafe fn gl_buffer_sub_data(&self, target: u32, offset: usize, data: &[u8]) -> Result<()> {
                // SAFETY: forwarded.
                unsafe { (**self).gl_buffer_sub_data(target, offset, data) }
            }
            unsafe fn gl_get_buffer_sub_data(
                &self,
                target: u32,
                offset: usize,
                out: &mut [u8],
            ) -> Result<()> {
                // SAFETY: forwarded.
                unsafe { (**self).gl_get_buffer_sub_data(target, offset, out) }
            }
            unsafe fn gl_get_integer(&self, pname: u32) -> i32 {
                // SAFETY: forwarded.
                unsafe { (**self).gl_get_integer(pname) }
            }
            unsafe fn gl_get_error(&self) -> u32 {
                // SAFETY: forwarded.
                unsafe { (**self).gl_get_error() }
            }
            unsafe fn gl_is_buffer(&self, name: u32) -> bool {
                // SAFETY: forwarded.
                unsafe { (**self).gl_is_buffer(name) }
            }
            unsafe fn gl_is_texture(&self, name: u32) -> bool {
                // SAFETY: forwarded.
                unsafe { (**self).gl_is_texture(name) }
            }
            unsafe fn gl_is_renderbuffer(&self, name: u32) -> bool {
                // SAFETY: forwarded.
                unsafe { (**self).gl_is_renderbuffer(name) }
            }
        }
    )*};
}

forward_gl_api!(&T, Rc<T>, Arc<T>, Box<T>);

type GenBuffers = unsafe extern "system" fn(n: i32, buffers: *mut u32);
type DeleteBuffers = unsafe extern "system" fn(n: i32, buffers: *const u32);
type BindBuffer = unsafe extern "system" fn(target: u32, buffer: u32);
type BufferData =
    unsafe extern "system" fn(target: u32, size: isize, data: *const c_void, usage: u32);
type BufferSubData =
    unsafe extern "system" fn(target: u32, offset: isize, size: isize, data: *const c_void);
type GetBufferSubData =
    unsafe extern "system" fn(target: u32, offset: isize, size: isize, data: *mut c_void);
type GetIntegerv = unsafe extern "system" fn(pname: u32, data: *mut i32);
type GetError = unsafe extern "system" fn() -> u32;
type IsObject = unsafe extern "system" fn(name: u32) -> u8;

/// The GL functions this crate calls, as raw function pointers from the caller's loader
/// (`eglGetProcAddress`, `glXGetProcAddress`, `SDL_GL_GetProcAddress`, glutin's
/// `get_proc_address`...). Cheap to copy.
///
/// ```no_run
/// # fn get_proc_address(_: &std::ffi::CStr) -> *const std::ffi::c_void { std::ptr::null() }
/// use rucuda_gl::{BufferObject, BufferUsage, GlFns};
/// // SAFETY: the GL context these functions belong to is current on this thread, and
/// // stays current wherever the buffer is used or dropped.
/// let gl = unsafe { GlFns::load(get_proc_address)? };
/// // SAFETY: as above.
/// let vbo = unsafe { BufferObject::new(gl, 4096, BufferUsage::DynamicDraw)? };
/// # Ok::<(), rucuda_gl::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct GlFns {
    gen_buffers: GenBuffers,
    delete_buffers: DeleteBuffers,
    bind_buffer: BindBuffer,
    buffer_data: BufferData,
    buffer_sub_data: BufferSubData,
    get_buffer_sub_data: Option<GetBufferSubData>,
    get_integerv: GetIntegerv,
    get_error: GetError,
    is_buffer: IsObject,
    is_texture: IsObject,
    is_renderbuffer: IsObject,
}

impl std::fmt::Debug for GlFns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GlFns")
            .field(
                "has_get_buffer_sub_data",
                &self.get_buffer_sub_data.is_some(),
            )
            .finish_non_exhaustive()
    }
}

impl GlFns {
    /// Loads the functions through `loader`, which returns each named GL function's
    /// address or null. `glGetBufferSubData` may be missing (OpenGL ES): reading a
    /// buffer back then fails with [`Error::GlFunctionMissing`]; every other missing
    /// function fails here.
    ///
    /// # Safety
    /// Every non-null address `loader` returns must be the named GL function, with the
    /// signature the OpenGL specification gives it. Some loaders (`glXGetProcAddress`)
    /// need a current context for that; calling the functions later needs one anyway
    /// (see [`GlApi`]).
    pub unsafe fn load(mut loader: impl FnMut(&CStr) -> *const c_void) -> Result<GlFns> {
        let mut get = |name: &'static CStr| -> Result<*const c_void> {
            let p = loader(name);
            if p.is_null() {
                Err(Error::GlFunctionMissing(name.to_str().unwrap_or("?")))
            } else {
                Ok(p)
            }
        };
        macro_rules! load {
            ($name:literal as $ty:ty) => {{
                let p = get($name)?;
                // SAFETY: the caller promises `p` is this GL function, whose C signature
                // is `$ty`; a data pointer and a function pointer have the same size here.
                unsafe { std::mem::transmute::<*const c_void, $ty>(p) }
            }};
        }
        let get_buffer_sub_data = match get(c"glGetBufferSubData") {
            // SAFETY: as in `load!`.
            Ok(p) => Some(unsafe { std::mem::transmute::<*const c_void, GetBufferSubData>(p) }),
            Err(_) => None,
        };
        Ok(GlFns {
            gen_buffers: load!(c"glGenBuffers" as GenBuffers),
            delete_buffers: load!(c"glDeleteBuffers" as DeleteBuffers),
            bind_buffer: load!(c"glBindBuffer" as BindBuffer),
            buffer_data: load!(c"glBufferData" as BufferData),
            buffer_sub_data: load!(c"glBufferSubData" as BufferSubData),
            get_buffer_sub_data,
            get_integerv: load!(c"glGetIntegerv" as GetIntegerv),
            get_error: load!(c"glGetError" as GetError),
            is_buffer: load!(c"glIsBuffer" as IsObject),
            is_texture: load!(c"glIsTexture" as IsObject),
            is_renderbuffer: load!(c"glIsRenderbuffer" as IsObject),
        })
    }
}

impl GlApi for GlFns {
    unsafe fn gl_gen_buffer(&self) -> Result<u32> {
        let mut name = 0u32;
        // SAFETY: writes one GLuint; the caller keeps the context current.
        unsafe { (self.gen_buffers)(1, &mut name) };
        if name == 0 {
            return Err(Error::Gl {
                call: "glGenBuffers",
                // SAFETY: as above.
                code: unsafe { (self.get_error)() },
            });
        }
        Ok(name)
    }
    unsafe fn gl_delete_buffer(&self, name: u32) {
        // SAFETY: reads one GLuint.
        unsafe { (self.delete_buffers)(1, &name) }
    }
    unsafe fn gl_bind_buffer(&self, target: u32, name: u32) {
        // SAFETY: plain values.
        unsafe { (self.bind_buffer)(target, name) }
    }
    unsafe fn gl_buffer_data(
        &self,
        target: u32,
        size: usize,
        data: Option<&[u8]>,
        usage: u32,
    ) -> Result<()> {
        check_buffer_data(size, data)?;
        let ptr = data.map_or(std::ptr::null(), |d| d.as_ptr().cast());
        // SAFETY: `ptr` is null or `size` readable bytes.
        unsafe { (self.buffer_data)(target, gl_int(size, "buffer size")?, ptr, usage) };
        Ok(())
    }
    unsafe fn gl_buffer_sub_data(&self, target: u32, offset: usize, data: &[u8]) -> Result<()> {
        let (o, n) = (gl_int(offset, "offset")?, gl_int(data.len(), "length")?);
        // SAFETY: reads `data.len()` bytes from `data`.
        unsafe { (self.buffer_sub_data)(target, o, n, data.as_ptr().cast()) };
        Ok(())
    }
    unsafe fn gl_get_buffer_sub_data(
        &self,
        target: u32,
        offset: usize,
        out: &mut [u8],
    ) -> Result<()> {
        let f = self
            .get_buffer_sub_data
            .ok_or(Error::GlFunctionMissing("glGetBufferSubData"))?;
        let (o, n) = (gl_int(offset, "offset")?, gl_int(out.len(), "length")?);
        // SAFETY: writes at most `out.len()` bytes into `out`.
        unsafe { f(target, o, n, out.as_mut_ptr().cast()) };
        Ok(())
    }
    unsafe fn gl_get_integer(&self, pname: u32) -> i32 {
        let mut v = 0i32;
        // SAFETY: the caller passes a single-valued pname: one GLint is written.
        unsafe { (self.get_integerv)(pname, &mut v) };
        v
    }
    unsafe fn gl_get_error(&self) -> u32 {
        // SAFETY: no arguments.
        unsafe { (self.get_error)() }
    }
    unsafe fn gl_is_buffer(&self, name: u32) -> bool {
        // SAFETY: plain value.
        unsafe { (self.is_buffer)(name) != 0 }
    }
    unsafe fn gl_is_texture(&self, name: u32) -> bool {
        // SAFETY: plain value.
        unsafe { (self.is_texture)(name) != 0 }
    }
    unsafe fn gl_is_renderbuffer(&self, name: u32) -> bool {
        // SAFETY: plain value.
        unsafe { (self.is_renderbuffer)(name) != 0 }
    }
}

#[cfg(feature = "glow")]
mod glow_impl {
    use std::num::NonZeroU32;

    use glow::HasContext;

    use super::{check_buffer_data, gl_int, GlApi, Result};
    use crate::error::Error;

    fn buffer(name: u32) -> Option<glow::NativeBuffer> {
        NonZeroU32::new(name).map(glow::NativeBuffer)
    }

    impl GlApi for glow::Context {
        unsafe fn gl_gen_buffer(&self) -> Result<u32> {
            // SAFETY: the caller keeps the context current.
            match unsafe { self.create_buffer() } {
                Ok(b) => Ok(b.0.get()),
                Err(_) => Err(Error::Gl {
                    call: "glGenBuffers",
                    // SAFETY: as above.
                    code: unsafe { HasContext::get_error(self) },
                }),
            }
        }
        unsafe fn gl_delete_buffer(&self, name: u32) {
            if let Some(b) = buffer(name) {
                // SAFETY: the caller keeps the context current.
                unsafe { HasContext::delete_buffer(self, b) }
            }
        }
        unsafe fn gl_bind_buffer(&self, target: u32, name: u32) {
            // SAFETY: the caller keeps the context current.
            unsafe { HasContext::bind_buffer(self, target, buffer(name)) }
        }
        unsafe fn gl_buffer_data(
            &self,
            target: u32,
            size: usize,
            data: Option<&[u8]>,
            usage: u32,
        ) -> Result<()> {
            check_buffer_data(size, data)?;
            let size: i32 = gl_int(size, "buffer size")?;
            match data {
                // SAFETY: the caller keeps the context current.
                Some(d) => unsafe { self.buffer_data_u8_slice(target, d, usage) },
                // SAFETY: the caller keeps the context current.
                None => unsafe { self.buffer_data_size(target, size, usage) },
            }
            Ok(())
        }
        unsafe fn gl_buffer_sub_data(&self, target: u32, offset: usize, data: &[u8]) -> Result<()> {
            let offset = gl_int(offset, "offset")?;
            // SAFETY: the caller keeps the context current.
            unsafe { self.buffer_sub_data_u8_slice(target, offset, data) };
            Ok(())
        }
        unsafe fn gl_get_buffer_sub_data(
            &self,
            target: u32,
            offset: usize,
            out: &mut [u8],
        ) -> Result<()> {
            let offset = gl_int(offset, "offset")?;
            // SAFETY: the caller keeps the context current.
            unsafe { HasContext::get_buffer_sub_data(self, target, offset, out) };
            Ok(())
        }
        unsafe fn gl_get_integer(&self, pname: u32) -> i32 {
            // SAFETY: the caller keeps the context current.
            unsafe { self.get_parameter_i32(pname) }
        }
        unsafe fn gl_get_error(&self) -> u32 {
            // SAFETY: the caller keeps the context current.
            unsafe { HasContext::get_error(self) }
        }
        unsafe fn gl_is_buffer(&self, name: u32) -> bool {
            // SAFETY: the caller keeps the context current.
            buffer(name).is_some_and(|b| unsafe { HasContext::is_buffer(self, b) })
        }
        unsafe fn gl_is_texture(&self, name: u32) -> bool {
            NonZeroU32::new(name).is_some_and(|n| {
                // SAFETY: the caller keeps the context current.
                unsafe { HasContext::is_texture(self, glow::NativeTexture(n)) }
            })
        }
        unsafe fn gl_is_renderbuffer(&self, name: u32) -> bool {
            NonZeroU32::new(name).is_some_and(|n| {
                // SAFETY: the caller keeps the context current.
                unsafe { HasContext::is_renderbuffer(self, glow::NativeRenderbuffer(n)) }
            })
        }
    }
}
