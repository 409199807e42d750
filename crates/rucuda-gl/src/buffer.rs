//! GL buffer objects created through the caller's GL ([`BufferObject`], PyCUDA's
//! `BufferObject`) and buffers registered with CUDA ([`RegisteredBuffer`], PyCUDA's
//! `RegisteredBuffer`).

use std::fmt;
use std::marker::PhantomData;

use rucuda_driver::{driver, Context};

use crate::error::{defer, take_deferred_errors, Error, Result};
use crate::flags::{RegisterFlags, ResourceKind};
use crate::gl::{gl_check, GlApi, GL_COPY_WRITE_BUFFER, GL_COPY_WRITE_BUFFER_BINDING};
use crate::mapping::registered_resource;
use crate::resource::ResourceCore;

/// The `usage` hint of `glBufferData`.
///
/// ```
/// assert_eq!(rucuda_gl::BufferUsage::DynamicDraw.gl_enum(), 0x88E8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BufferUsage {
    /// `GL_STREAM_DRAW`.
    StreamDraw,
    /// `GL_STREAM_READ`.
    StreamRead,
    /// `GL_STREAM_COPY`.
    StreamCopy,
    /// `GL_STATIC_DRAW`.
    StaticDraw,
    /// `GL_STATIC_READ`.
    StaticRead,
    /// `GL_STATIC_COPY`.
    StaticCopy,
    /// `GL_DYNAMIC_DRAW` (the default: CUDA writes, GL draws).
    #[default]
    DynamicDraw,
    /// `GL_DYNAMIC_READ`.
    DynamicRead,
    /// `GL_DYNAMIC_COPY`.
    DynamicCopy,
}

impl BufferUsage {
    /// The GL enum.
    pub fn gl_enum(self) -> u32 {
        match self {
            BufferUsage::StreamDraw => 0x88E0,
            BufferUsage::StreamRead => 0x88E1,
            BufferUsage::StreamCopy => 0x88E2,
            BufferUsage::StaticDraw => 0x88E4,
            BufferUsage::StaticRead => 0x88E5,
            BufferUsage::StaticCopy => 0x88E6,
            BufferUsage::DynamicDraw => 0x88E8,
            BufferUsage::DynamicRead => 0x88E9,
            BufferUsage::DynamicCopy => 0x88EA,
        }
    }
}

/// A GL buffer object created (and deleted on drop) through the caller's GL functions
/// `G`: [`GlFns`](crate::GlFns), a `glow::Context`, or a reference / `Rc` / `Arc` of one.
///
/// Not `Send`: it must be used and dropped on the thread where its GL context is current.
///
/// ```no_run
/// # fn f(gl: &glow::Context, ctx: &rucuda_driver::Context, stream: &rucuda_driver::Stream)
/// #     -> rucuda_gl::Result<()> {
/// use rucuda_gl::{BufferObject, BufferUsage, RegisterFlags};
/// // SAFETY: `gl`'s context is current on this thread whenever `vbo` is used or dropped.
/// let vbo = unsafe { BufferObject::new(gl, 1024 * 16, BufferUsage::DynamicDraw)? };
/// let registered = vbo.register(ctx, RegisterFlags::WRITE_DISCARD)?;
/// let mapping = registered.map(stream)?;
/// let (ptr, size) = mapping.device_ptr_and_size()?;
/// // ... launch a kernel writing `size` bytes at `ptr` on `stream` ...
/// drop(mapping); // unmaps: GL may now draw from the buffer
/// # Ok(()) }
/// ```
pub struct BufferObject<G: GlApi> {
    gl: G,
    name: u32,
    size: usize,
    _not_send: PhantomData<*const ()>,
}

impl<G: GlApi> fmt::Debug for BufferObject<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferObject")
            .field("name", &self.name)
            .field("size", &self.size)
            .finish()
    }
}

impl<G: GlApi> BufferObject<G> {
    /// Creates a buffer of `size` bytes with undefined contents (`glGenBuffers`,
    /// `glBufferData` with no data). The caller's `GL_COPY_WRITE_BUFFER` binding is
    /// restored afterwards; no other GL state changes.
    ///
    /// # Safety
    /// `gl`'s GL context is current on this thread now and whenever the buffer (or a
    /// registration of it) is used or dropped. A GL error pending from the caller's
    /// earlier calls is reported as this call's error.
    pub unsafe fn new(gl: G, size: usize, usage: BufferUsage) -> Result<Self> {
        // SAFETY: the caller's contract is this function's.
        unsafe { Self::create(gl, size, None, usage) }
    }

    /// Creates a buffer holding `data`.
    ///
    /// # Safety
    /// As for [`BufferObject::new`].
    pub unsafe fn from_bytes(gl: G, data: &[u8], usage: BufferUsage) -> Result<Self> {
        // SAFETY: the caller's contract is this function's.
        unsafe { Self::create(gl, data.len(), Some(data), usage) }
    }

    /// Safety: as for `new`.
    unsafe fn create(gl: G, size: usize, data: Option<&[u8]>, usage: BufferUsage) -> Result<Self> {
        take_deferred_errors()?;
        if size == 0 {
            return Err(Error::InvalidArgument(
                "a buffer object needs at least one byte (CUDA cannot register an empty buffer)"
                    .into(),
            ));
        }
        // SAFETY: the caller keeps the context current.
        let name = unsafe { gl.gl_gen_buffer()? };
        let buf = BufferObject {
            gl,
            name,
            size,
            _not_send: PhantomData,
        };
        buf.with_bound("glBufferData", |gl| {
            // SAFETY: the caller keeps the context current; the buffer is bound.
            unsafe { gl.gl_buffer_data(GL_COPY_WRITE_BUFFER, size, data, usage.gl_enum()) }
        })?;
        Ok(buf)
    }

    /// Runs `f` with this buffer bound to `GL_COPY_WRITE_BUFFER`, restores the previous
    /// binding, then checks `glGetError`.
    fn with_bound<T>(&self, call: &'static str, f: impl FnOnce(&G) -> Result<T>) -> Result<T> {
        // SAFETY: the constructor's contract keeps the context current on this thread
        // (the object is not Send).
        unsafe {
            let previous = self.gl.gl_get_integer(GL_COPY_WRITE_BUFFER_BINDING);
            self.gl.gl_bind_buffer(GL_COPY_WRITE_BUFFER, self.name);
            let r = f(&self.gl);
            self.gl
                .gl_bind_buffer(GL_COPY_WRITE_BUFFER, u32::try_from(previous).unwrap_or(0));
            let v = r?;
            gl_check(&self.gl, call)?;
            Ok(v)
        }
    }

    fn check_range(&self, offset: usize, len: usize) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => Ok(()),
            _ => Err(Error::InvalidArgument(format!(
                "bytes {offset}..{offset}+{len} are outside the buffer of {} bytes",
                self.size
            ))),
        }
    }

    /// Writes `data` at byte `offset` (`glBufferSubData`).
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<()> {
        take_deferred_errors()?;
        self.check_range(offset, data.len())?;
        self.with_bound("glBufferSubData", |gl| {
            // SAFETY: the context is current (constructor contract); the range is inside.
            unsafe { gl.gl_buffer_sub_data(GL_COPY_WRITE_BUFFER, offset, data) }
        })
    }

    /// Reads `out.len()` bytes from byte `offset` (`glGetBufferSubData`; desktop GL).
    /// Do not read while CUDA holds the buffer mapped.
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        take_deferred_errors()?;
        self.check_range(offset, out.len())?;
        self.with_bound("glGetBufferSubData", |gl| {
            // SAFETY: the context is current (constructor contract); the range is inside.
            unsafe { gl.gl_get_buffer_sub_data(GL_COPY_WRITE_BUFFER, offset, out) }
        })
    }

    /// Reads the whole buffer.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut v = vec![0u8; self.size];
        self.read(0, &mut v)?;
        Ok(v)
    }

    /// The GL name (PyCUDA's `BufferObject.handle`).
    pub fn name(&self) -> u32 {
        self.name
    }

    /// The size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The GL functions it was created with.
    pub fn gl(&self) -> &G {
        &self.gl
    }

    /// Registers this buffer with CUDA in `ctx` (see [`RegisteredBuffer::new`]).
    pub fn register(&self, ctx: &Context, flags: RegisterFlags) -> Result<RegisteredBuffer<'_>> {
        RegisteredBuffer::new(ctx, self, flags)
    }

    /// Gives up ownership: the GL buffer is not deleted; its name is returned.
    pub fn into_name(self) -> u32 {
        let name = self.name;
        std::mem::forget(self);
        name
    }
}

impl<G: GlApi> Drop for BufferObject<G> {
    fn drop(&mut self) {
        // SAFETY: the constructor's contract keeps the context current on this thread.
        unsafe { self.gl.gl_delete_buffer(self.name) };
        // SAFETY: as above.
        if let Err(e) = unsafe { gl_check(&self.gl, "glDeleteBuffers") } {
            defer(e);
        }
    }
}

/// A GL buffer registered with CUDA (`cuGraphicsGLRegisterBuffer`, PyCUDA's
/// `RegisteredBuffer`); unregistered on drop. Map it to get a device pointer.
///
/// It borrows the [`BufferObject`] it registers (`'a`), so the buffer outlives the
/// registration; [`RegisteredBuffer::from_gl_name`] registers a buffer the caller owns.
/// Not `Send` (GL interop calls need the GL context current on the thread).
///
/// ```no_run
/// # fn f(vbo: &rucuda_gl::BufferObject<glow::Context>, ctx: &rucuda_driver::Context)
/// #     -> rucuda_gl::Result<()> {
/// use rucuda_gl::{MapFlags, RegisterFlags, RegisteredBuffer};
/// let reg = RegisteredBuffer::new(ctx, vbo, RegisterFlags::NONE)?;
/// reg.set_map_flags(MapFlags::WriteDiscard)?;
/// let stream = rucuda_driver::Stream::null(ctx);
/// let mut mapping = reg.map(&stream)?;
/// let (ptr, size) = mapping.device_ptr_and_size()?;
/// mapping.unmap()?;
/// assert!(mapping.device_ptr_and_size().is_err()); // Error::NotMapped
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct RegisteredBuffer<'a> {
    core: ResourceCore,
    _buffer: PhantomData<&'a ()>,
}

registered_resource!(RegisteredBuffer<'_>);

impl<'a> RegisteredBuffer<'a> {
    /// Registers `buffer` with CUDA in `ctx` with `flags`. The CUDA context must be on a
    /// device that runs the GL context (see [`gl_devices`](crate::gl_devices)).
    pub fn new<G: GlApi>(
        ctx: &Context,
        buffer: &'a BufferObject<G>,
        flags: RegisterFlags,
    ) -> Result<RegisteredBuffer<'a>> {
        // SAFETY: `buffer` is a live buffer of the GL context that its constructor's
        // contract keeps current on this thread, and it outlives the registration ('a).
        unsafe { Self::register_unchecked(ctx, buffer.name(), flags) }
    }

    /// Registers the GL buffer named `name`, first checking with `glIsBuffer` that it is
    /// one ([`Error::NoSuchGlObject`] otherwise).
    ///
    /// # Safety
    /// `gl`'s GL context is current on this thread now and whenever the registration (or
    /// a mapping of it) is used or dropped, and the buffer is not deleted before the
    /// registration is dropped.
    pub unsafe fn from_gl_name(
        ctx: &Context,
        gl: &impl GlApi,
        name: u32,
        flags: RegisterFlags,
    ) -> Result<RegisteredBuffer<'static>> {
        take_deferred_errors()?;
        // SAFETY: the caller keeps the context current.
        if !unsafe { gl.gl_is_buffer(name) } {
            return Err(Error::NoSuchGlObject {
                name,
                expected: "buffer",
            });
        }
        // SAFETY: the caller's contract, and `name` is a buffer.
        unsafe { RegisteredBuffer::register_unchecked(ctx, name, flags) }
    }

    /// Safety: `name` is a buffer of the current GL context, which stays current, and
    /// outlives the registration.
    unsafe fn register_unchecked(
        ctx: &Context,
        name: u32,
        flags: RegisterFlags,
    ) -> Result<RegisteredBuffer<'a>> {
        let core = ResourceCore::register(
            ctx,
            ResourceKind::Buffer,
            name,
            "cuGraphicsGLRegisterBuffer",
            |out| {
                let f = driver()?.cuGraphicsGLRegisterBuffer()?;
                // SAFETY: writes one CUgraphicsResource; `name` is a live buffer of the
                // current GL context (caller's contract).
                Ok(unsafe { f(out, name, flags.bits()) })
            },
        )?;
        Ok(RegisteredBuffer {
            core,
            _buffer: PhantomData,
        })
    }
}
