//! The plain values that describe a registration: how CUDA will use it
//! ([`RegisterFlags`], [`MapFlags`]) and what it is ([`ResourceKind`]).

use std::fmt;

bitflags::bitflags! {
    /// How CUDA will use a registered resource (`CU_GRAPHICS_REGISTER_FLAGS_*`, PyCUDA's
    /// `graphics_register_flags`).
    ///
    /// ```
    /// use rucuda_gl::RegisterFlags;
    /// let f = RegisterFlags::SURFACE_LDST | RegisterFlags::WRITE_DISCARD;
    /// assert_eq!(f.bits(), 6);
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct RegisterFlags: u32 {
        /// No hints: CUDA may read and write.
        const NONE = 0;
        /// CUDA will only read the resource.
        const READ_ONLY = 1;
        /// CUDA will overwrite all of it: its contents need not be kept when mapped.
        const WRITE_DISCARD = 2;
        /// Kernels will bind the image to a surface (surface loads and stores).
        const SURFACE_LDST = 4;
        /// Kernels will use texture gather on the image.
        const TEXTURE_GATHER = 8;
    }
}

/// How CUDA will use a resource while it is mapped (`CU_GRAPHICS_MAP_RESOURCE_FLAGS_*`,
/// PyCUDA's `graphics_map_flags`); set with `set_map_flags` before mapping.
///
/// ```
/// assert_eq!(rucuda_gl::MapFlags::WriteDiscard.bits(), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MapFlags {
    /// CUDA may read and write (the default).
    #[default]
    None,
    /// CUDA will only read.
    ReadOnly,
    /// CUDA will overwrite everything; the contents need not be kept.
    WriteDiscard,
}

impl MapFlags {
    /// The driver's value.
    pub fn bits(self) -> u32 {
        match self {
            MapFlags::None => 0,
            MapFlags::ReadOnly => 1,
            MapFlags::WriteDiscard => 2,
        }
    }
}

/// Whether a resource is a buffer (mapped as a device pointer) or an image (mapped as
/// CUDA arrays).
///
/// ```
/// assert_eq!(rucuda_gl::ResourceKind::Image.to_string(), "image");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// A GL buffer object.
    Buffer,
    /// A GL texture or renderbuffer.
    Image,
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ResourceKind::Buffer => "buffer",
            ResourceKind::Image => "image",
        })
    }
}
