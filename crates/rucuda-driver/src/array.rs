//! CUDA arrays: opaque, texture-laid-out device memory in one, two or three dimensions,
//! layered or cubemap (PyCUDA's `Array`, `ArrayDescriptor`, `ArrayDescriptor3D`,
//! `array_format`, `array3d_flags`, `array_cubemap_face`).
//!
//! Arrays are read by kernels through [`crate::TextureObject`]s and written through
//! [`crate::SurfaceObject`]s; the host fills and reads them with the copies of
//! `array_copy.rs` ([`CudaArray::copy_from_host`], [`crate::Memcpy2D`], [`crate::Memcpy3D`]).

use rucuda_driver_sys::{CUarray, CUarray_format, CUDA_ARRAY3D_DESCRIPTOR, CUDA_ARRAY_DESCRIPTOR};

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::repr::{vector, DeviceRepr};

macro_rules! array_formats {
    ($($(#[$doc:meta])* $variant:ident = $raw:ident, $bytes:expr, $integer:literal;)*) => {
        /// The type of each channel of an array element (PyCUDA's `array_format`).
        ///
        /// ```
        /// use rucuda_driver::ArrayFormat;
        /// assert_eq!(ArrayFormat::F32.channel_bytes(), Some(4));
        /// assert_eq!(ArrayFormat::from_raw(ArrayFormat::U16.raw()), ArrayFormat::U16);
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ArrayFormat {
            $($(#[$doc])* $variant,)*
            /// A format this crate does not name (video formats, or a newer driver's):
            /// the raw `CUarray_format` value. [`ArrayFormat::from_raw`] never returns
            /// `Other` for a value that has a name here.
            Other(u32),
        }

        impl ArrayFormat {
            /// The driver's value.
            pub fn raw(self) -> CUarray_format {
                match self {
                    $(ArrayFormat::$variant => CUarray_format::$raw,)*
                    ArrayFormat::Other(v) => CUarray_format(v),
                }
            }

            /// The format for a driver value (`Other` when this crate has no name for it).
            pub fn from_raw(raw: CUarray_format) -> ArrayFormat {
                $(if raw == CUarray_format::$raw {
                    return ArrayFormat::$variant;
                })*
                ArrayFormat::Other(raw.0)
            }

            /// Bytes per channel; `None` for block-compressed and unknown formats, whose
            /// elements are not a whole number of channels.
            pub fn channel_bytes(self) -> Option<usize> {
                match self {
                    $(ArrayFormat::$variant => $bytes,)*
                    ArrayFormat::Other(_) => None,
                }
            }

            /// True for the plain integer formats (8/16/32-bit, signed or not): the ones a
            /// texture reads either as integers or as normalized floats
            /// ([`crate::ReadMode`]).
            pub fn is_integer(self) -> bool {
                match self {
                    $(ArrayFormat::$variant => $integer,)*
                    ArrayFormat::Other(_) => false,
                }
            }
        }
    };
}

array_formats! {
    /// Unsigned 8-bit integer (`CU_AD_FORMAT_UNSIGNED_INT8`).
    U8 = CU_AD_FORMAT_UNSIGNED_INT8, Some(1), true;
    /// Unsigned 16-bit integer.
    U16 = CU_AD_FORMAT_UNSIGNED_INT16, Some(2), true;
    /// Unsigned 32-bit integer.
    U32 = CU_AD_FORMAT_UNSIGNED_INT32, Some(4), true;
    /// Signed 8-bit integer.
    I8 = CU_AD_FORMAT_SIGNED_INT8, Some(1), true;
    /// Signed 16-bit integer.
    I16 = CU_AD_FORMAT_SIGNED_INT16, Some(2), true;
    /// Signed 32-bit integer.
    I32 = CU_AD_FORMAT_SIGNED_INT32, Some(4), true;
    /// IEEE half precision (`CU_AD_FORMAT_HALF`); host data as `u16` bits.
    F16 = CU_AD_FORMAT_HALF, Some(2), false;
    /// IEEE single precision (`CU_AD_FORMAT_FLOAT`).
    F32 = CU_AD_FORMAT_FLOAT, Some(4), false;
    /// One unsigned 8-bit normalized channel.
    UnormInt8x1 = CU_AD_FORMAT_UNORM_INT8X1, Some(1), false;
    /// Two unsigned 8-bit normalized channels.
    UnormInt8x2 = CU_AD_FORMAT_UNORM_INT8X2, Some(1), false;
    /// Four unsigned 8-bit normalized channels.
    UnormInt8x4 = CU_AD_FORMAT_UNORM_INT8X4, Some(1), false;
    /// One unsigned 16-bit normalized channel.
    UnormInt16x1 = CU_AD_FORMAT_UNORM_INT16X1, Some(2), false;
    /// Two unsigned 16-bit normalized channels.
    UnormInt16x2 = CU_AD_FORMAT_UNORM_INT16X2, Some(2), false;
    /// Four unsigned 16-bit normalized channels.
    UnormInt16x4 = CU_AD_FORMAT_UNORM_INT16X4, Some(2), false;
    /// One signed 8-bit normalized channel.
    SnormInt8x1 = CU_AD_FORMAT_SNORM_INT8X1, Some(1), false;
    /// Two signed 8-bit normalized channels.
    SnormInt8x2 = CU_AD_FORMAT_SNORM_INT8X2, Some(1), false;
    /// Four signed 8-bit normalized channels.
    SnormInt8x4 = CU_AD_FORMAT_SNORM_INT8X4, Some(1), false;
    /// One signed 16-bit normalized channel.
    SnormInt16x1 = CU_AD_FORMAT_SNORM_INT16X1, Some(2), false;
    /// Two signed 16-bit normalized channels.
    SnormInt16x2 = CU_AD_FORMAT_SNORM_INT16X2, Some(2), false;
    /// Four signed 16-bit normalized channels.
    SnormInt16x4 = CU_AD_FORMAT_SNORM_INT16X4, Some(2), false;
    /// BC1 block compression (4x4 blocks of 8 bytes).
    Bc1Unorm = CU_AD_FORMAT_BC1_UNORM, None, false;
    /// BC1, sRGB.
    Bc1UnormSrgb = CU_AD_FORMAT_BC1_UNORM_SRGB, None, false;
    /// BC2 block compression.
    Bc2Unorm = CU_AD_FORMAT_BC2_UNORM, None, false;
    /// BC2, sRGB.
    Bc2UnormSrgb = CU_AD_FORMAT_BC2_UNORM_SRGB, None, false;
    /// BC3 block compression.
    Bc3Unorm = CU_AD_FORMAT_BC3_UNORM, None, false;
    /// BC3, sRGB.
    Bc3UnormSrgb = CU_AD_FORMAT_BC3_UNORM_SRGB, None, false;
    /// BC4 block compression, unsigned.
    Bc4Unorm = CU_AD_FORMAT_BC4_UNORM, None, false;
    /// BC4 block compression, signed.
    Bc4Snorm = CU_AD_FORMAT_BC4_SNORM, None, false;
    /// BC5 block compression, unsigned.
    Bc5Unorm = CU_AD_FORMAT_BC5_UNORM, None, false;
    /// BC5 block compression, signed.
    Bc5Snorm = CU_AD_FORMAT_BC5_SNORM, None, false;
    /// BC6H block compression, unsigned half floats.
    Bc6hUf16 = CU_AD_FORMAT_BC6H_UF16, None, false;
    /// BC6H block compression, signed half floats.
    Bc6hSf16 = CU_AD_FORMAT_BC6H_SF16, None, false;
    /// BC7 block compression.
    Bc7Unorm = CU_AD_FORMAT_BC7_UNORM, None, false;
    /// BC7, sRGB.
    Bc7UnormSrgb = CU_AD_FORMAT_BC7_UNORM_SRGB, None, false;
}

bitflags::bitflags! {
    /// Flags of a 3D array descriptor (PyCUDA's `array3d_flags`; its deprecated `2DARRAY`
    /// is [`Array3DFlags::LAYERED`]).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct Array3DFlags: u32 {
        /// A layered array: `depth` counts layers of 1D (height 0) or 2D arrays.
        const LAYERED = 1;
        /// May be bound to a [`crate::SurfaceObject`] (surface loads and stores).
        const SURFACE_LDST = 2;
        /// A cubemap: `width == height`, `depth` 6 (or a multiple of 6 when layered).
        const CUBEMAP = 4;
        /// May be read with 2D texture gather.
        const TEXTURE_GATHER = 8;
        /// A depth texture.
        const DEPTH_TEXTURE = 16;
        /// May be a render target in graphics interop.
        const COLOR_ATTACHMENT = 32;
        /// A sparse array.
        const SPARSE = 64;
        /// Memory is mapped later (`cuMemMapArrayAsync`).
        const DEFERRED_MAPPING = 128;
        /// Usable by video encode and decode.
        const VIDEO_ENCODE_DECODE = 256;
    }
}

/// A face of a cubemap array, in the driver's layer order (PyCUDA's
/// `array_cubemap_face`): layer `6 * l + face.index()` of a layered cubemap.
///
/// ```
/// use rucuda_driver::CubemapFace;
/// assert_eq!(CubemapFace::NegativeY.index(), 3);
/// assert_eq!(CubemapFace::ALL[5], CubemapFace::NegativeZ);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CubemapFace {
    /// +x (`CU_CUBEMAP_FACE_POSITIVE_X`).
    PositiveX,
    /// -x.
    NegativeX,
    /// +y.
    PositiveY,
    /// -y.
    NegativeY,
    /// +z.
    PositiveZ,
    /// -z.
    NegativeZ,
}

impl CubemapFace {
    /// The six faces in layer order.
    pub const ALL: [CubemapFace; 6] = [
        CubemapFace::PositiveX,
        CubemapFace::NegativeX,
        CubemapFace::PositiveY,
        CubemapFace::NegativeY,
        CubemapFace::PositiveZ,
        CubemapFace::NegativeZ,
    ];

    /// The face's layer within one cube (0..6).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The driver's value.
    pub fn raw(self) -> rucuda_driver_sys::CUarray_cubemap_face {
        rucuda_driver_sys::CUarray_cubemap_face(self as u32)
    }

    /// The layer of this face in cube `cube` of a (layered) cubemap array.
    pub fn layer(self, cube: usize) -> usize {
        cube * 6 + self.index()
    }
}

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

/// Host types that map to an array element: the format and channel count an array
/// holding them has.
///
/// Implemented for the 8/16/32-bit integers and `f32` (one channel), `[T; 1|2|4]` and the
/// CUDA vector types (several channels), and, like PyCUDA's `np_to_array`, for `f64`
/// (two `I32` channels; read with `__hiloint2double`) and [`vector::Double2`] (four).
/// `size_of::<Self>()` is checked against the format at run time.
pub trait ArrayElement: DeviceRepr {
    /// The channel type.
    const FORMAT: ArrayFormat;
    /// Channels per element (1, 2 or 4).
    const CHANNELS: u32;
}

macro_rules! array_element {
    ($($t:ty => $f:ident, $c:literal;)*) => {$(
        impl ArrayElement for $t {
            const FORMAT: ArrayFormat = ArrayFormat::$f;
            const CHANNELS: u32 = $c;
        }
    )*};
}

array_element! {
    u8 => U8, 1; i8 => I8, 1; u16 => U16, 1; i16 => I16, 1;
    u32 => U32, 1; i32 => I32, 1; f32 => F32, 1; f64 => I32, 2;
    vector::Float2 => F32, 2; vector::Float4 => F32, 4;
    vector::Int2 => I32, 2; vector::Int4 => I32, 4;
    vector::Uint2 => U32, 2; vector::Uint4 => U32, 4;
    vector::Double2 => I32, 4;
}

impl<T: ArrayElement> ArrayElement for [T; 1] {
    const FORMAT: ArrayFormat = T::FORMAT;
    const CHANNELS: u32 = T::CHANNELS;
}
impl<T: ArrayElement> ArrayElement for [T; 2] {
    const FORMAT: ArrayFormat = T::FORMAT;
    const CHANNELS: u32 = T::CHANNELS * 2;
}
impl<T: ArrayElement> ArrayElement for [T; 4] {
    const FORMAT: ArrayFormat = T::FORMAT;
    const CHANNELS: u32 = T::CHANNELS * 4;
}

/// Checks that `T`'s size is what its format and channel count say.
pub(crate) fn check_element<T: ArrayElement>() -> Result<()> {
    let d = ArrayDescriptor3D::d1(1, T::FORMAT, T::CHANNELS);
    d.validate()?;
    let want = d.element_bytes()?;
    if std::mem::size_of::<T>() != want {
        return Err(Error::invalid(format!(
            "ArrayElement {}: {} bytes, but {:?} x {} channels is {want} bytes",
            T::C_TYPE,
            std::mem::size_of::<T>(),
            T::FORMAT,
            T::CHANNELS
        )));
    }
    Ok(())
}

/// A CUDA array (PyCUDA's `Array`): 1D, 2D, 3D, layered or cubemap device memory in the
/// texture hardware's layout. Destroyed on drop (errors queued on the context) or with
/// [`CudaArray::free`] (errors returned).
///
/// ```no_run
/// use rucuda_driver::{ArrayDescriptor3D, ArrayFormat, CudaArray, Device};
/// let ctx = Device::get(0)?.primary_context()?;
/// let mut a = CudaArray::new_3d(&ctx, &ArrayDescriptor3D::d2(64, 32, ArrayFormat::F32, 1))?;
/// a.copy_from_host(&vec![1.0f32; 64 * 32])?;
/// assert_eq!(a.descriptor_3d()?.width, 64);
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub struct CudaArray {
    raw: CUarray,
    desc: ArrayDescriptor3D,
    ctx: Context,
}

// SAFETY: a CUarray handle may be used from any thread of the process; the struct is
// immutable apart from the device memory it names.
unsafe impl Send for CudaArray {}
// SAFETY: as above; shared references only read the handle.
unsafe impl Sync for CudaArray {}

impl std::fmt::Debug for CudaArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaArray")
            .field("raw", &self.raw)
            .field("desc", &self.desc)
            .finish()
    }
}

impl CudaArray {
    /// Creates a 1D or 2D array with `cuArrayCreate` (PyCUDA's `Array(ArrayDescriptor)`).
    pub fn new(ctx: &Context, desc: &ArrayDescriptor) -> Result<CudaArray> {
        desc.to_3d().validate()?;
        ctx.bind()?;
        let raw_desc = desc.to_raw();
        let mut raw: CUarray = std::ptr::null_mut();
        // SAFETY: reads one descriptor, writes one handle; destroyed on drop.
        unsafe { call!(cuArrayCreate_v2(&mut raw, &raw_desc))? };
        Ok(CudaArray {
            raw,
            desc: desc.to_3d(),
            ctx: ctx.clone(),
        })
    }

    /// Creates any array with `cuArray3DCreate` (PyCUDA's `Array(ArrayDescriptor3D)`):
    /// the only way to set [`Array3DFlags`].
    pub fn new_3d(ctx: &Context, desc: &ArrayDescriptor3D) -> Result<CudaArray> {
        desc.validate()?;
        ctx.bind()?;
        let raw_desc = desc.to_raw();
        let mut raw: CUarray = std::ptr::null_mut();
        // SAFETY: reads one descriptor, writes one handle; destroyed on drop.
        unsafe { call!(cuArray3DCreate_v2(&mut raw, &raw_desc))? };
        Ok(CudaArray {
            raw,
            desc: *desc,
            ctx: ctx.clone(),
        })
    }

    /// The descriptor as the driver reports it for a 1D or 2D array
    /// (`cuArrayGetDescriptor`, PyCUDA's `get_descriptor`).
    pub fn descriptor(&self) -> Result<ArrayDescriptor> {
        self.ctx.bind()?;
        let mut raw = CUDA_ARRAY_DESCRIPTOR::default();
        // SAFETY: writes one descriptor; the handle is alive.
        unsafe { call!(cuArrayGetDescriptor_v2(&mut raw, self.raw))? };
        Ok(ArrayDescriptor::from_raw(&raw))
    }

    /// The descriptor as the driver reports it, for any array (`cuArray3DGetDescriptor`,
    /// PyCUDA's `get_descriptor_3d`).
    pub fn descriptor_3d(&self) -> Result<ArrayDescriptor3D> {
        self.ctx.bind()?;
        let mut raw = CUDA_ARRAY3D_DESCRIPTOR::default();
        // SAFETY: writes one descriptor; the handle is alive.
        unsafe { call!(cuArray3DGetDescriptor_v2(&mut raw, self.raw))? };
        Ok(ArrayDescriptor3D::from_raw(&raw))
    }

    /// The descriptor it was created with (no driver call).
    pub fn desc(&self) -> &ArrayDescriptor3D {
        &self.desc
    }

    /// Bytes of the whole array.
    pub fn byte_size(&self) -> Result<usize> {
        self.desc.byte_size()
    }

    /// The raw handle (PyCUDA's `handle`).
    pub fn raw(&self) -> CUarray {
        self.raw
    }

    /// The context it belongs to.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Destroys the array now and returns any error (PyCUDA's `free`).
    pub fn free(self) -> Result<()> {
        let me = std::mem::ManuallyDrop::new(self);
        let r = me.release();
        // SAFETY: `me` is never dropped, so the context is read (and dropped) exactly once.
        drop(unsafe { std::ptr::read(&me.ctx) });
        r
    }

    fn release(&self) -> Result<()> {
        self.ctx.make_current()?;
        // SAFETY: created by this object and destroyed once (drop and free consume it).
        unsafe { call!(cuArrayDestroy(self.raw)) }
    }
}

impl Drop for CudaArray {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            self.ctx.defer_error(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_round_trip_and_sizes() {
        for f in [
            ArrayFormat::U8,
            ArrayFormat::U16,
            ArrayFormat::U32,
            ArrayFormat::I8,
            ArrayFormat::I16,
            ArrayFormat::I32,
            ArrayFormat::F16,
            ArrayFormat::F32,
            ArrayFormat::SnormInt16x4,
            ArrayFormat::Bc7UnormSrgb,
        ] {
            assert_eq!(ArrayFormat::from_raw(f.raw()), f);
        }
        assert_eq!(ArrayFormat::U8.raw().0, 1);
        assert_eq!(ArrayFormat::I8.raw().0, 8);
        assert_eq!(ArrayFormat::F16.raw().0, 16);
        assert_eq!(ArrayFormat::F32.raw().0, 32);
        assert_eq!(
            ArrayFormat::from_raw(CUarray_format(176)),
            ArrayFormat::Other(176)
        );
        assert_eq!(ArrayFormat::I16.channel_bytes(), Some(2));
        assert_eq!(ArrayFormat::Bc1Unorm.channel_bytes(), None);
        assert!(ArrayFormat::U32.is_integer() && !ArrayFormat::F32.is_integer());
    }

    #[test]
    fn flags_and_faces_match_the_header() {
        use rucuda_driver_sys as sys;
        assert_eq!(Array3DFlags::LAYERED.bits(), sys::CUDA_ARRAY3D_LAYERED);
        assert_eq!(
            Array3DFlags::SURFACE_LDST.bits(),
            sys::CUDA_ARRAY3D_SURFACE_LDST
        );
        assert_eq!(Array3DFlags::CUBEMAP.bits(), sys::CUDA_ARRAY3D_CUBEMAP);
        assert_eq!(
            Array3DFlags::TEXTURE_GATHER.bits(),
            sys::CUDA_ARRAY3D_TEXTURE_GATHER
        );
        assert_eq!(
            Array3DFlags::DEPTH_TEXTURE.bits(),
            sys::CUDA_ARRAY3D_DEPTH_TEXTURE
        );
        assert_eq!(Array3DFlags::SPARSE.bits(), sys::CUDA_ARRAY3D_SPARSE);
        assert_eq!(
            CubemapFace::NegativeZ.raw(),
            sys::CUarray_cubemap_face::CU_CUBEMAP_FACE_NEGATIVE_Z
        );
        assert_eq!(
            CubemapFace::PositiveY.raw(),
            sys::CUarray_cubemap_face::CU_CUBEMAP_FACE_POSITIVE_Y
        );
        assert_eq!(CubemapFace::NegativeX.layer(2), 13);
    }

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

    #[test]
    fn array_elements_have_their_format_size() {
        fn ok<T: ArrayElement>() {
            assert!(check_element::<T>().is_ok(), "{}", T::C_TYPE);
        }
        ok::<u8>();
        ok::<i8>();
        ok::<u16>();
        ok::<i16>();
        ok::<u32>();
        ok::<i32>();
        ok::<f32>();
        ok::<f64>();
        ok::<[u8; 4]>();
        ok::<[f32; 2]>();
        ok::<[i16; 1]>();
        ok::<vector::Float2>();
        ok::<vector::Float4>();
        ok::<vector::Int2>();
        ok::<vector::Int4>();
        ok::<vector::Uint2>();
        ok::<vector::Uint4>();
        ok::<vector::Double2>();
        // Eight channels is not an array element.
        assert!(check_element::<[f64; 4]>().is_err());
    }
}
