//! The element formats of CUDA arrays (PyCUDA's `array_format`), the 3D flags
//! (`array3d_flags`) and cubemap faces (`array_cubemap_face`).

use rucuda_driver_sys::CUarray_format;

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
}
