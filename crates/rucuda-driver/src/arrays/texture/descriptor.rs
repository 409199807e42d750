//! How a texture reads: its handle type, address and filter modes, read mode and the
//! descriptor that gathers them (PyCUDA's texture reference flags and modes).

use rucuda_driver_sys::{CUaddress_mode, CUfilter_mode, CUtexObject, CUDA_TEXTURE_DESC};

use crate::arrays::format::ArrayFormat;
use crate::error::{Error, Result};
use crate::repr::DeviceRepr;

/// A texture object's handle as a kernel receives it (`cudaTextureObject_t`, a 64-bit
/// value); pass it by value in a launch's argument tuple.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TextureHandle(pub CUtexObject);

// SAFETY: one unsigned 64-bit integer, the layout of cudaTextureObject_t; every bit
// pattern is a value (the driver validates handles it is given).
unsafe impl DeviceRepr for TextureHandle {
    const C_TYPE: &'static str = "cudaTextureObject_t";
}

/// What a fetch outside the texture reads (PyCUDA's `address_mode`). `Wrap` and `Mirror`
/// need normalized coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AddressMode {
    /// Repeat the texture: coordinate `u` reads `u - floor(u)`.
    Wrap,
    /// Clamp to the edge texel (the default).
    #[default]
    Clamp,
    /// Repeat mirrored: every other period reversed.
    Mirror,
    /// Read the descriptor's border colour.
    Border,
}

impl AddressMode {
    /// The driver's value.
    pub fn raw(self) -> CUaddress_mode {
        match self {
            AddressMode::Wrap => CUaddress_mode::CU_TR_ADDRESS_MODE_WRAP,
            AddressMode::Clamp => CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP,
            AddressMode::Mirror => CUaddress_mode::CU_TR_ADDRESS_MODE_MIRROR,
            AddressMode::Border => CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER,
        }
    }
}

/// How a fetch between texels is computed (PyCUDA's `filter_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FilterMode {
    /// The nearest texel (the default).
    #[default]
    Point,
    /// Linear interpolation of the neighbouring texels (weights in 8-bit fixed point);
    /// only for textures that return floats.
    Linear,
}

impl FilterMode {
    /// The driver's value.
    pub fn raw(self) -> CUfilter_mode {
        match self {
            FilterMode::Point => CUfilter_mode::CU_TR_FILTER_MODE_POINT,
            FilterMode::Linear => CUfilter_mode::CU_TR_FILTER_MODE_LINEAR,
        }
    }
}

/// What a fetch from an integer-format texture returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReadMode {
    /// The stored integer (`CU_TRSF_READ_AS_INTEGER`, the runtime's
    /// `cudaReadModeElementType`; the default). Read with `tex2D<unsigned char>` etc.
    #[default]
    ElementType,
    /// A float: unsigned values over `[0, 1]`, signed over `[-1, 1]` (the runtime's
    /// `cudaReadModeNormalizedFloat`, PyCUDA's flags 0). Read with `tex2D<float>`.
    NormalizedFloat,
}

/// How a texture is sampled: address modes, filtering, read mode, coordinates, border
/// colour, sRGB and mipmap settings (the fields of `CUDA_TEXTURE_DESC`).
///
/// ```
/// use rucuda_driver::{AddressMode, FilterMode, TextureDescriptor};
/// let desc = TextureDescriptor::new()
///     .address_mode(AddressMode::Wrap)
///     .filter_mode(FilterMode::Linear)
///     .normalized_coordinates(true);
/// assert_eq!(desc.address_mode, [AddressMode::Wrap; 3]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextureDescriptor {
    /// Address mode per dimension (x, y, z).
    pub address_mode: [AddressMode; 3],
    /// Filtering between texels.
    pub filter_mode: FilterMode,
    /// Integer or normalized-float reads of integer formats.
    pub read_mode: ReadMode,
    /// Coordinates over `[0, 1)` instead of `[0, extent)`.
    pub normalized_coordinates: bool,
    /// Convert sRGB data to linear on reads (8-bit formats).
    pub srgb: bool,
    /// Filter across cubemap face edges.
    pub seamless_cubemap: bool,
    /// Keep full trilinear filtering between mipmap levels.
    pub disable_trilinear_optimization: bool,
    /// Colour read outside the texture with [`AddressMode::Border`].
    pub border_color: [f32; 4],
    /// Maximum anisotropy (0 or 1: none).
    pub max_anisotropy: u32,
    /// Filtering between mipmap levels.
    pub mipmap_filter_mode: FilterMode,
    /// Bias added to the mipmap level.
    pub mipmap_level_bias: f32,
    /// Lowest mipmap level read.
    pub min_mipmap_level_clamp: f32,
    /// Highest mipmap level read.
    pub max_mipmap_level_clamp: f32,
}

impl Default for TextureDescriptor {
    fn default() -> Self {
        TextureDescriptor {
            address_mode: [AddressMode::Clamp; 3],
            filter_mode: FilterMode::Point,
            read_mode: ReadMode::ElementType,
            normalized_coordinates: false,
            srgb: false,
            seamless_cubemap: false,
            disable_trilinear_optimization: false,
            border_color: [0.0; 4],
            max_anisotropy: 0,
            mipmap_filter_mode: FilterMode::Point,
            mipmap_level_bias: 0.0,
            min_mipmap_level_clamp: 0.0,
            max_mipmap_level_clamp: 0.0,
        }
    }
}

impl TextureDescriptor {
    /// Clamp, point filtering, element-type reads, unnormalized coordinates.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same address mode in every dimension.
    pub fn address_mode(mut self, mode: AddressMode) -> Self {
        self.address_mode = [mode; 3];
        self
    }

    /// One address mode per dimension (x, y, z).
    pub fn address_modes(mut self, modes: [AddressMode; 3]) -> Self {
        self.address_mode = modes;
        self
    }

    /// Filtering between texels.
    pub fn filter_mode(mut self, mode: FilterMode) -> Self {
        self.filter_mode = mode;
        self
    }

    /// Integer or normalized-float reads of integer formats.
    pub fn read_mode(mut self, mode: ReadMode) -> Self {
        self.read_mode = mode;
        self
    }

    /// Coordinates over `[0, 1)` (PyCUDA's `TRSF_NORMALIZED_COORDINATES`).
    pub fn normalized_coordinates(mut self, on: bool) -> Self {
        self.normalized_coordinates = on;
        self
    }

    /// sRGB to linear conversion on reads.
    pub fn srgb(mut self, on: bool) -> Self {
        self.srgb = on;
        self
    }

    /// Filtering across cubemap face edges.
    pub fn seamless_cubemap(mut self, on: bool) -> Self {
        self.seamless_cubemap = on;
        self
    }

    /// The colour read outside the texture with [`AddressMode::Border`].
    pub fn border_color(mut self, rgba: [f32; 4]) -> Self {
        self.border_color = rgba;
        self
    }

    /// Maximum anisotropy.
    pub fn max_anisotropy(mut self, n: u32) -> Self {
        self.max_anisotropy = n;
        self
    }

    /// Mipmap filtering, level bias and level clamps.
    pub fn mipmap(mut self, filter: FilterMode, bias: f32, min_level: f32, max_level: f32) -> Self {
        self.mipmap_filter_mode = filter;
        self.mipmap_level_bias = bias;
        self.min_mipmap_level_clamp = min_level;
        self.max_mipmap_level_clamp = max_level;
        self
    }

    /// The `CU_TRSF_*` flags for a texture of `format`.
    pub fn flags(&self, format: ArrayFormat) -> u32 {
        use rucuda_driver_sys as sys;
        let mut flags = 0;
        if self.read_mode == ReadMode::ElementType && format.is_integer() {
            flags |= sys::CU_TRSF_READ_AS_INTEGER;
        }
        if self.normalized_coordinates {
            flags |= sys::CU_TRSF_NORMALIZED_COORDINATES;
        }
        if self.srgb {
            flags |= sys::CU_TRSF_SRGB;
        }
        if self.disable_trilinear_optimization {
            flags |= sys::CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION;
        }
        if self.seamless_cubemap {
            flags |= sys::CU_TRSF_SEAMLESS_CUBEMAP;
        }
        flags
    }

    /// The driver struct for a texture of `format`.
    pub fn to_raw(&self, format: ArrayFormat) -> CUDA_TEXTURE_DESC {
        CUDA_TEXTURE_DESC {
            addressMode: self.address_mode.map(AddressMode::raw),
            filterMode: self.filter_mode.raw(),
            flags: self.flags(format),
            maxAnisotropy: self.max_anisotropy,
            mipmapFilterMode: self.mipmap_filter_mode.raw(),
            mipmapLevelBias: self.mipmap_level_bias,
            minMipmapLevelClamp: self.min_mipmap_level_clamp,
            maxMipmapLevelClamp: self.max_mipmap_level_clamp,
            borderColor: self.border_color,
            reserved: [0; 12],
        }
    }

    /// Checks this descriptor for a texture of `format` addressed in `dims` dimensions,
    /// naming what the driver would refuse or silently change.
    ///
    /// ```
    /// use rucuda_driver::{AddressMode, ArrayFormat, FilterMode, TextureDescriptor};
    /// let d = TextureDescriptor::new().filter_mode(FilterMode::Linear);
    /// assert!(d.validate(ArrayFormat::U8, 2).is_err()); // integers cannot be interpolated
    /// assert!(d.validate(ArrayFormat::F32, 2).is_ok());
    /// let d = TextureDescriptor::new().address_mode(AddressMode::Wrap);
    /// assert!(d.validate(ArrayFormat::F32, 2).is_err()); // wrap needs normalized coordinates
    /// ```
    pub fn validate(&self, format: ArrayFormat, dims: usize) -> Result<()> {
        if self.filter_mode == FilterMode::Linear
            && format.is_integer()
            && self.read_mode == ReadMode::ElementType
        {
            return Err(Error::invalid(format!(
                "texture: linear filtering of {format:?} data needs ReadMode::NormalizedFloat \
                 (integers read as integers cannot be interpolated)"
            )));
        }
        if !self.normalized_coordinates {
            for (dim, mode) in self.address_mode.iter().enumerate().take(dims) {
                if matches!(mode, AddressMode::Wrap | AddressMode::Mirror) {
                    return Err(Error::invalid(format!(
                        "texture: address_mode[{dim}] is {mode:?}, which needs normalized \
                         coordinates (normalized_coordinates(true))"
                    )));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rucuda_driver_sys as sys;

    #[test]
    fn enum_values_match_the_header() {
        assert_eq!(AddressMode::Wrap.raw().0, 0);
        assert_eq!(AddressMode::Clamp.raw().0, 1);
        assert_eq!(AddressMode::Mirror.raw().0, 2);
        assert_eq!(AddressMode::Border.raw().0, 3);
        assert_eq!(FilterMode::Point.raw().0, 0);
        assert_eq!(FilterMode::Linear.raw().0, 1);
        assert_eq!(std::mem::size_of::<TextureHandle>(), 8);
        assert_eq!(TextureHandle::C_TYPE, "cudaTextureObject_t");
    }

    #[test]
    fn flags_follow_read_mode_format_and_switches() {
        let d = TextureDescriptor::new();
        assert_eq!(d.flags(ArrayFormat::U8), sys::CU_TRSF_READ_AS_INTEGER);
        assert_eq!(d.flags(ArrayFormat::F32), 0);
        let d = d
            .read_mode(ReadMode::NormalizedFloat)
            .normalized_coordinates(true);
        assert_eq!(
            d.flags(ArrayFormat::U8),
            sys::CU_TRSF_NORMALIZED_COORDINATES
        );
        let d = d.srgb(true).seamless_cubemap(true);
        assert_eq!(
            d.flags(ArrayFormat::U8),
            sys::CU_TRSF_NORMALIZED_COORDINATES | sys::CU_TRSF_SRGB | sys::CU_TRSF_SEAMLESS_CUBEMAP
        );
    }

    #[test]
    fn raw_descriptor_carries_every_field() {
        let d = TextureDescriptor::new()
            .address_modes([AddressMode::Wrap, AddressMode::Mirror, AddressMode::Border])
            .filter_mode(FilterMode::Linear)
            .border_color([0.25, 0.5, 0.75, 1.0])
            .max_anisotropy(4)
            .mipmap(FilterMode::Linear, 0.5, 1.0, 3.0);
        let r = d.to_raw(ArrayFormat::F32);
        assert_eq!(
            r.addressMode,
            [
                CUaddress_mode::CU_TR_ADDRESS_MODE_WRAP,
                CUaddress_mode::CU_TR_ADDRESS_MODE_MIRROR,
                CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER
            ]
        );
        assert_eq!(r.filterMode, CUfilter_mode::CU_TR_FILTER_MODE_LINEAR);
        assert_eq!(r.borderColor, [0.25, 0.5, 0.75, 1.0]);
        assert_eq!(r.maxAnisotropy, 4);
        assert_eq!(r.mipmapFilterMode, CUfilter_mode::CU_TR_FILTER_MODE_LINEAR);
        assert_eq!(
            (
                r.mipmapLevelBias,
                r.minMipmapLevelClamp,
                r.maxMipmapLevelClamp
            ),
            (0.5, 1.0, 3.0)
        );
        assert_eq!(r.reserved, [0; 12]);
    }

    #[test]
    fn validation_names_the_problem() {
        let lin = TextureDescriptor::new().filter_mode(FilterMode::Linear);
        let e = lin.validate(ArrayFormat::I16, 2).unwrap_err().to_string();
        assert!(e.contains("NormalizedFloat"), "{e}");
        assert!(lin
            .read_mode(ReadMode::NormalizedFloat)
            .validate(ArrayFormat::I16, 2)
            .is_ok());
        let wrap_y = TextureDescriptor::new().address_modes([
            AddressMode::Clamp,
            AddressMode::Mirror,
            AddressMode::Wrap,
        ]);
        let e = wrap_y
            .validate(ArrayFormat::F32, 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("address_mode[1] is Mirror"), "{e}");
        // Only the addressed dimensions count.
        assert!(wrap_y.validate(ArrayFormat::F32, 1).is_ok());
        assert!(wrap_y
            .normalized_coordinates(true)
            .validate(ArrayFormat::F32, 3)
            .is_ok());
    }
}
