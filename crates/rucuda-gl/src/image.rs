//! GL textures and renderbuffers registered with CUDA (`cuGraphicsGLRegisterImage`,
//! PyCUDA's `RegisteredImage`).

use rucuda_driver::{driver, Context};

use crate::error::{take_deferred_errors, Error, Result};
use crate::flags::{RegisterFlags, ResourceKind};
use crate::gl::GlApi;
use crate::mapping::registered_resource;
use crate::resource::ResourceCore;

/// What kind of GL image a name is: the `target` of `cuGraphicsGLRegisterImage`.
///
/// The texture's internal format must be one CUDA supports: 1, 2 or 4 components of
/// 8/16/32-bit integers (normalized or not), 16/32-bit floats (`GL_RGBA8`, `GL_R32F`,
/// `GL_RGBA32F`, `GL_RG16UI`...); not 3-component or depth formats.
///
/// ```
/// use rucuda_gl::ImageTarget;
/// assert_eq!(ImageTarget::Texture2D.gl_enum(), 0x0DE1);
/// assert_eq!(ImageTarget::Renderbuffer.gl_enum(), 0x8D41);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ImageTarget {
    /// `GL_TEXTURE_2D`.
    Texture2D,
    /// `GL_TEXTURE_RECTANGLE`.
    TextureRectangle,
    /// `GL_TEXTURE_CUBE_MAP` (faces are array indices 0..6).
    TextureCubeMap,
    /// `GL_TEXTURE_3D`.
    Texture3D,
    /// `GL_TEXTURE_2D_ARRAY` (layers are array indices).
    Texture2DArray,
    /// `GL_RENDERBUFFER`.
    Renderbuffer,
}

impl ImageTarget {
    /// The GL enum.
    pub fn gl_enum(self) -> u32 {
        match self {
            ImageTarget::Texture2D => 0x0DE1,
            ImageTarget::TextureRectangle => 0x84F5,
            ImageTarget::TextureCubeMap => 0x8513,
            ImageTarget::Texture3D => 0x806F,
            ImageTarget::Texture2DArray => 0x8C1A,
            ImageTarget::Renderbuffer => 0x8D41,
        }
    }

    /// Whether the target names a renderbuffer rather than a texture.
    pub fn is_renderbuffer(self) -> bool {
        self == ImageTarget::Renderbuffer
    }
}

/// A GL texture or renderbuffer registered with CUDA; unregistered on drop. Map it to
/// get the CUDA array of each sub-resource (layer/face and mip level).
///
/// Not `Send` (GL interop calls need the GL context current on the thread).
///
/// ```no_run
/// # fn f(gl: &glow::Context, texture: u32, ctx: &rucuda_driver::Context)
/// #     -> rucuda_gl::Result<()> {
/// use rucuda_gl::{ImageTarget, RegisterFlags, RegisteredImage};
/// // SAFETY: `gl`'s context is current on this thread while `image` lives, and the
/// // texture outlives it.
/// let image = unsafe {
///     RegisteredImage::new(ctx, gl, texture, ImageTarget::Texture2D, RegisterFlags::SURFACE_LDST)?
/// };
/// let stream = rucuda_driver::Stream::null(ctx);
/// let mapping = image.map(&stream)?;
/// let array = mapping.array(0, 0)?; // layer 0, mip level 0
/// let desc = array.descriptor()?;
/// println!("{}x{}, {} channels", desc.width, desc.height, desc.num_channels);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct RegisteredImage {
    core: ResourceCore,
    target: ImageTarget,
}

registered_resource!(RegisteredImage);

impl RegisteredImage {
    /// Registers the texture or renderbuffer `name` (of kind `target`) with CUDA in
    /// `ctx`, first checking with `glIsTexture` / `glIsRenderbuffer` that it is one
    /// ([`Error::NoSuchGlObject`] otherwise).
    ///
    /// # Safety
    /// `gl`'s GL context is current on this thread now and whenever the registration (or
    /// a mapping of it) is used or dropped, and the image is not deleted (nor its
    /// storage redefined) before the registration is dropped.
    pub unsafe fn new(
        ctx: &Context,
        gl: &impl GlApi,
        name: u32,
        target: ImageTarget,
        flags: RegisterFlags,
    ) -> Result<RegisteredImage> {
        take_deferred_errors()?;
        let (exists, expected) = if target.is_renderbuffer() {
            // SAFETY: the caller keeps the context current.
            (unsafe { gl.gl_is_renderbuffer(name) }, "renderbuffer")
        } else {
            // SAFETY: the caller keeps the context current.
            (unsafe { gl.gl_is_texture(name) }, "texture")
        };
        if !exists {
            return Err(Error::NoSuchGlObject { name, expected });
        }
        let core = ResourceCore::register(
            ctx,
            ResourceKind::Image,
            name,
            "cuGraphicsGLRegisterImage",
            |out| {
                let f = driver()?.cuGraphicsGLRegisterImage()?;
                // SAFETY: writes one CUgraphicsResource; `name` is a live image of kind
                // `target` in the current GL context (checked above; caller's contract).
                Ok(unsafe { f(out, name, target.gl_enum(), flags.bits()) })
            },
        )?;
        Ok(RegisteredImage { core, target })
    }

    /// The GL target it was registered as.
    pub fn target(&self) -> ImageTarget {
        self.target
    }
}
