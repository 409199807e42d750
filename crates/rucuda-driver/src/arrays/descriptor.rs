//! What a CUDA array holds: its descriptors in one, two or three dimensions (PyCUDA's
//! `ArrayDescriptor`, `ArrayDescriptor3D`), checked before the driver sees them.

use rucuda_driver_sys::{CUDA_ARRAY3D_DESCRIPTOR, CUDA_ARRAY_DESCRIPTOR};

use crate::arrays::format::Array3DFlags;
use crate::arrays::format::ArrayFormat;
use crate::error::{Error, Result};

/// Shape and element type of a 1D or 2D array (PyCUDA's `ArrayDescriptor`).
///
/// ```
/// use rucuda_driver::{ArrayDescriptor, ArrayFormat};
/// let d = ArrayDescriptor::new(640, 480, ArrayFormat::U8, 4);
/// assert_eq!(d.to_3d().byte_size()?, 640 * 480 * 4);
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayDescriptor {
    /// Elements per row.
    pub width: usize,
    /// Rows; 0 for a 1D array.
    pub height: usize,
    /// Channel type.
    pub format: ArrayFormat,
    /// Channels per element: 1, 2 or 4.
    pub num_channels: u32,
}

impl ArrayDescriptor {
    /// A descriptor of `width` x `height` elements (height 0: 1D).
    pub fn new(width: usize, height: usize, format: ArrayFormat, num_channels: u32) -> Self {
        ArrayDescriptor {
            width,
            height,
            format,
            num_channels,
        }
    }

    /// The same shape as a 3D descriptor (depth 0, no flags).
    pub fn to_3d(&self) -> ArrayDescriptor3D {
        ArrayDescriptor3D {
            width: self.width,
            height: self.height,
            depth: 0,
            format: self.format,
            num_channels: self.num_channels,
            flags: Array3DFlags::empty(),
        }
    }

    pub(crate) fn to_raw(self) -> CUDA_ARRAY_DESCRIPTOR {
        CUDA_ARRAY_DESCRIPTOR {
            Width: self.width,
            Height: self.height,
            Format: self.format.raw(),
            NumChannels: self.num_channels,
        }
    }

    pub(crate) fn from_raw(raw: &CUDA_ARRAY_DESCRIPTOR) -> Self {
        ArrayDescriptor {
            width: raw.Width,
            height: raw.Height,
            format: ArrayFormat::from_raw(raw.Format),
            num_channels: raw.NumChannels,
        }
    }
}

/// Shape, element type and kind of any array (PyCUDA's `ArrayDescriptor3D`).
///
/// | array          | width | height | depth             | flags               |
/// |----------------|-------|--------|-------------------|---------------------|
/// | 1D             | w     | 0      | 0                 |                     |
/// | 2D             | w     | h      | 0                 |                     |
/// | 3D             | w     | h      | d                 |                     |
/// | 1D layered     | w     | 0      | layers            | LAYERED             |
/// | 2D layered     | w     | h      | layers            | LAYERED             |
/// | cubemap        | w     | w      | 6                 | CUBEMAP             |
/// | layered cubemap| w     | w      | 6 * cubes         | CUBEMAP \| LAYERED  |
///
/// ```
/// use rucuda_driver::{Array3DFlags, ArrayDescriptor3D, ArrayFormat};
/// let d = ArrayDescriptor3D::layered_2d(64, 32, 3, ArrayFormat::F32, 1);
/// assert_eq!(d.flags, Array3DFlags::LAYERED);
/// assert_eq!(d.byte_size()?, 64 * 32 * 3 * 4);
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayDescriptor3D {
    /// Elements per row.
    pub width: usize,
    /// Rows per slice; 0 for 1D and 1D layered arrays.
    pub height: usize,
    /// Slices (3D), layers (layered) or faces (cubemap); 0 for 1D and 2D arrays.
    pub depth: usize,
    /// Channel type.
    pub format: ArrayFormat,
    /// Channels per element: 1, 2 or 4.
    pub num_channels: u32,
    /// Kind and capabilities.
    pub flags: Array3DFlags,
}

impl ArrayDescriptor3D {
    /// Any shape, no flags.
    pub fn new(
        width: usize,
        height: usize,
        depth: usize,
        format: ArrayFormat,
        num_channels: u32,
    ) -> Self {
        ArrayDescriptor3D {
            width,
            height,
            depth,
            format,
            num_channels,
            flags: Array3DFlags::empty(),
        }
    }

    /// A 1D array of `width` elements.
    pub fn d1(width: usize, format: ArrayFormat, num_channels: u32) -> Self {
        Self::new(width, 0, 0, format, num_channels)
    }

    /// A 2D array.
    pub fn d2(width: usize, height: usize, format: ArrayFormat, num_channels: u32) -> Self {
        Self::new(width, height, 0, format, num_channels)
    }

    /// A 3D array.
    pub fn d3(
        width: usize,
        height: usize,
        depth: usize,
        format: ArrayFormat,
        num_channels: u32,
    ) -> Self {
        Self::new(width, height, depth, format, num_channels)
    }

    /// `layers` 1D arrays of `width` elements.
    pub fn layered_1d(width: usize, layers: usize, format: ArrayFormat, num_channels: u32) -> Self {
        Self::new(width, 0, layers, format, num_channels).with_flags(Array3DFlags::LAYERED)
    }

    /// `layers` 2D arrays.
    pub fn layered_2d(
        width: usize,
        height: usize,
        layers: usize,
        format: ArrayFormat,
        num_channels: u32,
    ) -> Self {
        Self::new(width, height, layers, format, num_channels).with_flags(Array3DFlags::LAYERED)
    }

    /// A cubemap of six `size` x `size` faces.
    pub fn cubemap(size: usize, format: ArrayFormat, num_channels: u32) -> Self {
        Self::new(size, size, 6, format, num_channels).with_flags(Array3DFlags::CUBEMAP)
    }

    /// `cubes` cubemaps (6 * `cubes` layers).
    pub fn cubemap_layered(
        size: usize,
        cubes: usize,
        format: ArrayFormat,
        num_channels: u32,
    ) -> Self {
        Self::new(size, size, cubes.saturating_mul(6), format, num_channels)
            .with_flags(Array3DFlags::CUBEMAP | Array3DFlags::LAYERED)
    }

    /// The same descriptor with `flags` added (for example
    /// [`Array3DFlags::SURFACE_LDST`]).
    pub fn with_flags(mut self, flags: Array3DFlags) -> Self {
        self.flags |= flags;
        self
    }

    /// Rows per slice as copies count them: `max(height, 1)`.
    pub fn rows(&self) -> usize {
        self.height.max(1)
    }

    /// Slices, layers or faces as copies count them: `max(depth, 1)`.
    pub fn slices(&self) -> usize {
        self.depth.max(1)
    }

    /// Bytes per element (channel size times channels).
    pub fn element_bytes(&self) -> Result<usize> {
        let channel = self.format.channel_bytes().ok_or_else(|| {
            Error::invalid(format!(
                "array format {:?} has no per-element byte size (block-compressed or unknown)",
                self.format
            ))
        })?;
        Ok(channel * self.num_channels as usize)
    }

    /// Bytes per row.
    pub fn row_bytes(&self) -> Result<usize> {
        mul(self.width, self.element_bytes()?, "row")
    }

    /// Bytes of the whole array (all rows, slices, layers and faces).
    pub fn byte_size(&self) -> Result<usize> {
        mul(
            mul(self.row_bytes()?, self.rows(), "array")?,
            self.slices(),
            "array",
        )
    }

    /// Checks the combinations the driver accepts, naming what is wrong.
    ///
    /// ```
    /// use rucuda_driver::{ArrayDescriptor3D, ArrayFormat};
    /// assert!(ArrayDescriptor3D::d2(4, 4, ArrayFormat::F32, 3).validate().is_err());
    /// assert!(ArrayDescriptor3D::cubemap(8, ArrayFormat::F32, 1).validate().is_ok());
    /// ```
    pub fn validate(&self) -> Result<()> {
        if !matches!(self.num_channels, 1 | 2 | 4) {
            return Err(Error::invalid(format!(
                "array num_channels must be 1, 2 or 4, not {}",
                self.num_channels
            )));
        }
        if self.width == 0 {
            return Err(Error::invalid("array width must be at least 1"));
        }
        let layered = self.flags.contains(Array3DFlags::LAYERED);
        if self.height == 0 && self.depth > 0 && !layered {
            return Err(Error::invalid(format!(
                "array with height 0 and depth {}: a 3D array needs a height; only a 1D \
                 layered array (Array3DFlags::LAYERED) has height 0 and a depth",
                self.depth
            )));
        }
        if layered && self.depth == 0 {
            return Err(Error::invalid(
                "layered array with depth 0: depth is the number of layers (at least 1)",
            ));
        }
        if self.flags.contains(Array3DFlags::CUBEMAP) {
            if self.width != self.height {
                return Err(Error::invalid(format!(
                    "cubemap faces must be square: width {} != height {}",
                    self.width, self.height
                )));
            }
            if layered {
                if self.depth % 6 != 0 {
                    return Err(Error::invalid(format!(
                        "layered cubemap depth must be a multiple of 6 (6 faces per cube), not {}",
                        self.depth
                    )));
                }
            } else if self.depth != 6 {
                return Err(Error::invalid(format!(
                    "cubemap depth must be 6 (one layer per face), not {}",
                    self.depth
                )));
            }
        }
        Ok(())
    }

    pub(crate) fn to_raw(self) -> CUDA_ARRAY3D_DESCRIPTOR {
        CUDA_ARRAY3D_DESCRIPTOR {
            Width: self.width,
            Height: self.height,
            Depth: self.depth,
            Format: self.format.raw(),
            NumChannels: self.num_channels,
            Flags: self.flags.bits(),
        }
    }

    pub(crate) fn from_raw(raw: &CUDA_ARRAY3D_DESCRIPTOR) -> Self {
        ArrayDescriptor3D {
            width: raw.Width,
            height: raw.Height,
            depth: raw.Depth,
            format: ArrayFormat::from_raw(raw.Format),
            num_channels: raw.NumChannels,
            flags: Array3DFlags::from_bits_retain(raw.Flags),
        }
    }
}

impl From<ArrayDescriptor> for ArrayDescriptor3D {
    fn from(d: ArrayDescriptor) -> Self {
        d.to_3d()
    }
}

fn mul(a: usize, b: usize, what: &str) -> Result<usize> {
    a.checked_mul(b)
        .ok_or_else(|| Error::invalid(format!("{what} size {a} x {b} overflows usize")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_sizes() {
        let d = ArrayDescriptor3D::d1(100, ArrayFormat::F32, 2);
        assert_eq!((d.rows(), d.slices()), (1, 1));
        assert_eq!(d.element_bytes().ok(), Some(8));
        assert_eq!(d.byte_size().ok(), Some(800));
        let d = ArrayDescriptor3D::layered_1d(10, 5, ArrayFormat::U16, 4);
        assert_eq!(d.byte_size().ok(), Some(10 * 8 * 5));
        let d = ArrayDescriptor3D::cubemap_layered(16, 2, ArrayFormat::U8, 1);
        assert_eq!(d.depth, 12);
        assert_eq!(d.byte_size().ok(), Some(16 * 16 * 12));
        assert!(ArrayDescriptor3D::d2(1 << 40, 1 << 40, ArrayFormat::F32, 4)
            .byte_size()
            .is_err());
        let raw = d.to_raw();
        assert_eq!(ArrayDescriptor3D::from_raw(&raw), d);
        let d2 = ArrayDescriptor::new(7, 3, ArrayFormat::I8, 2);
        assert_eq!(ArrayDescriptor::from_raw(&d2.to_raw()), d2);
        assert_eq!(ArrayDescriptor3D::from(d2).depth, 0);
    }

    #[test]
    fn descriptor_validation_names_the_problem() {
        let err = |d: ArrayDescriptor3D| d.validate().unwrap_err().to_string();
        assert!(err(ArrayDescriptor3D::d2(4, 4, ArrayFormat::F32, 3)).contains("num_channels"));
        assert!(err(ArrayDescriptor3D::d2(0, 4, ArrayFormat::F32, 1)).contains("width"));
        assert!(err(ArrayDescriptor3D::new(4, 0, 3, ArrayFormat::F32, 1)).contains("height"));
        assert!(
            err(ArrayDescriptor3D::layered_2d(4, 4, 0, ArrayFormat::F32, 1)).contains("layers")
        );
        assert!(err(
            ArrayDescriptor3D::new(4, 5, 6, ArrayFormat::F32, 1).with_flags(Array3DFlags::CUBEMAP)
        )
        .contains("square"));
        assert!(err(
            ArrayDescriptor3D::new(4, 4, 5, ArrayFormat::F32, 1).with_flags(Array3DFlags::CUBEMAP)
        )
        .contains("6"));
        assert!(err(ArrayDescriptor3D::new(4, 4, 8, ArrayFormat::F32, 1)
            .with_flags(Array3DFlags::CUBEMAP | Array3DFlags::LAYERED))
        .contains("multiple of 6"));
        for ok in [
            ArrayDescriptor3D::d1(4, ArrayFormat::U8, 1),
            ArrayDescriptor3D::d3(4, 4, 4, ArrayFormat::U8, 4),
            ArrayDescriptor3D::layered_1d(4, 3, ArrayFormat::U8, 2),
            ArrayDescriptor3D::cubemap_layered(4, 2, ArrayFormat::F32, 1),
        ] {
            assert!(ok.validate().is_ok(), "{ok:?}");
        }
    }
}
