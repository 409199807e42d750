//! OpenGL interop: everything PyCUDA's `pycuda.gl` gives, in current CUDA terms.
//!
//! - [`gl_devices`]: the CUDA devices running the current GL context (`cuGLGetDevices`);
//!   [`primary_context_for_current_gl`] replaces `pycuda.gl.autoinit` (since CUDA 5 any
//!   context interoperates with GL, so `gl.init` and `gl.make_context` have no
//!   counterpart to call: see [`primary_context_for_current_gl`]'s table);
//! - [`BufferObject`]: a GL buffer created through the caller's GL functions;
//! - [`RegisteredBuffer`], [`RegisteredImage`] (textures and renderbuffers): GL objects
//!   registered with CUDA ([`RegisterFlags`], [`MapFlags`]);
//! - [`RegisteredMapping`]: resources mapped on a stream, giving device pointers (buffers)
//!   and CUDA arrays (image sub-resources), unmapped explicitly or on drop;
//!   [`map_resources`] maps several in one call.
//!
//! The crate links against no GL library and depends on no windowing library: it calls GL
//! through [`GlApi`], which the caller provides as function pointers from their own
//! loader ([`GlFns::load`]) or as a `glow::Context` (feature `glow`, on by default).
//! Feature `headless-egl` adds `headless::HeadlessGl`, a windowless context on NVIDIA's
//! EGL device platform, with `libEGL.so.1` opened at run time.
//!
//! Misuse is a typed [`Error`], never a panic: registering a name that is no GL object
//! ([`Error::NoSuchGlObject`]), mapping a mapped resource ([`Error::AlreadyMapped`]),
//! using a mapping after unmapping it ([`Error::NotMapped`]).
//!
//! ## Threads and the GL context
//! GL calls act on the GL context current on the calling thread, which Rust cannot see.
//! So the functions that take a GL object are `unsafe` with one promise: that context is
//! current on this thread whenever the object (or anything registered or mapped from it)
//! is used or dropped. The types are not `Send`, which keeps them on that thread.
//!
//! ```no_run
//! use glow::HasContext;
//! use rucuda_driver::{Stream, StreamFlags};
//! use rucuda_gl::{BufferObject, BufferUsage, RegisterFlags};
//! # fn run(gl: &glow::Context) -> Result<(), Box<dyn std::error::Error>> {
//! // A GL context is current on this thread (from winit/glutin, SDL, EGL...).
//! let ctx = rucuda_gl::primary_context_for_current_gl()?;
//! let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
//! // SAFETY: `gl`'s context stays current on this thread while `vbo` lives.
//! let vbo = unsafe { BufferObject::new(gl, 3 * 4 * 1000, BufferUsage::DynamicDraw)? };
//! let registered = vbo.register(&ctx, RegisterFlags::WRITE_DISCARD)?;
//! {
//!     let mapping = registered.map(&stream)?;
//!     let (ptr, bytes) = mapping.device_ptr_and_size()?;
//!     // ... launch kernels writing `bytes` bytes at `ptr` on `stream` ...
//! } // unmapped here: GL draws from `vbo` next
//! // SAFETY: the context is current.
//! unsafe { gl.bind_buffer(glow::ARRAY_BUFFER, Some(glow::NativeBuffer(
//!     std::num::NonZeroU32::new(vbo.name()).unwrap()))) };
//! # Ok(()) }
//! ```

mod buffer;
mod devices;
mod error;
mod flags;
mod gl;
#[cfg(feature = "headless-egl")]
pub mod headless;
mod image;
mod mapping;
mod resource;

pub use buffer::{BufferObject, BufferUsage, RegisteredBuffer};
pub use devices::{gl_devices, primary_context_for_current_gl, GlDeviceList};
pub use error::{take_deferred_errors, Error, Result};
pub use flags::{MapFlags, RegisterFlags, ResourceKind};
pub use gl::{GlApi, GlFns, GL_COPY_WRITE_BUFFER, GL_COPY_WRITE_BUFFER_BINDING, GL_NO_ERROR};
pub use image::{ImageTarget, RegisteredImage};
pub use mapping::{map_resources, ArrayDescriptor, MappedArray, RegisteredMapping};
pub use resource::Registered;

/// The raw bindings (for `CUarray`, `CUgraphicsResource` and the like).
pub use rucuda_driver_sys as sys;
