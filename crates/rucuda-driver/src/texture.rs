//! Texture objects (`cuTexObjectCreate`): read-only, cached, filtered views of an array,
//! of linear device memory or of pitched 2D device memory, passed to kernels as
//! `cudaTextureObject_t` values. They replace PyCUDA's texture references, which CUDA
//! 12 removed.
//!
//! | PyCUDA (texture references)                         | rucuda                                                                         |
//! |-----------------------------------------------------|--------------------------------------------------------------------------------|
//! | `texture<float, 2> tex;` + `Module.get_texref("tex")` | a `cudaTextureObject_t tex` kernel parameter and a [`TextureObject`]          |
//! | `TextureReference.set_array(ary)`                   | [`TextureObject::from_array`]                                                  |
//! | `set_address(devptr, bytes, allow_offset)`          | [`TextureObject::from_linear`] / [`TextureObject::from_buffer`] (the address must be aligned; there is no offset) |
//! | `set_address_2d(devptr, descr, pitch)`              | [`TextureObject::from_pitch_2d`]                                               |
//! | `set_format(fmt, n)`, `TRSA_OVERRIDE_FORMAT`        | the array's format, or the format of `from_linear` / `from_pitch_2d`          |
//! | `set_address_mode(dim, am)`                         | [`TextureDescriptor::address_mode`] (all dimensions) or its `address_mode[dim]` field |
//! | `set_filter_mode(fm)`                               | [`TextureDescriptor::filter_mode`]                                             |
//! | `set_flags(TRSF_READ_AS_INTEGER)`                   | [`ReadMode::ElementType`] (the default here; PyCUDA's flags 0 is [`ReadMode::NormalizedFloat`]) |
//! | `set_flags(TRSF_NORMALIZED_COORDINATES)`            | [`TextureDescriptor::normalized_coordinates`]                                  |
//! | `get_array()`                                       | [`TextureObject::array`]                                                       |
//! | `get_address_mode(dim)`, `get_filter_mode()`, `get_flags()` | [`TextureObject::descriptor`]                                          |
//! | `get_format()`                                      | [`TextureObject::format`]                                                      |
//! | `Function.param_set_texref(t)`, `texrefs=[...]` of `prepare` / `__call__`, `TR_DEFAULT` | pass [`TextureObject::handle`] as an ordinary kernel argument |
//!
//! In the kernel: `tex1D<T>(t, x)`, `tex2D<T>(t, x, y)`, `tex3D<T>(t, x, y, z)`,
//! `tex2DLayered<T>(t, x, y, layer)`, `texCubemap<T>(t, x, y, z)` for arrays and pitched
//! memory; `tex1Dfetch<T>(t, i)` for linear memory.

use std::marker::PhantomData;

use rucuda_driver_sys::{
    CUDA_RESOURCE_DESC_st__bindgen_ty_1, CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_1,
    CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3,
    CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_4, CUaddress_mode, CUfilter_mode,
    CUresourcetype, CUtexObject, CUDA_RESOURCE_DESC, CUDA_TEXTURE_DESC,
};

use crate::array::{
    check_element, Array3DFlags, ArrayDescriptor, ArrayDescriptor3D, ArrayElement, ArrayFormat,
    CudaArray,
};
use crate::context::Context;
use crate::device_attribute::DeviceAttribute;
use crate::error::{call, Error, Result};
use crate::memory::{DeviceBuffer, DevicePtr};
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

/// Dimensions whose address mode a fetch from this array uses.
fn addressed_dims(desc: &ArrayDescriptor3D) -> usize {
    if desc.flags.contains(Array3DFlags::CUBEMAP) {
        0
    } else if desc.height == 0 {
        1
    } else if desc.depth == 0 || desc.flags.contains(Array3DFlags::LAYERED) {
        2
    } else {
        3
    }
}

/// What a texture object reads.
#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    Array(&'a CudaArray),
    Linear,
    Pitch2D,
}

/// A texture object (`CUtexObject`), borrowing what it reads for `'a`; destroyed on drop
/// (errors queued on the context) or with [`TextureObject::destroy`].
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let image: Vec<f32> = (0..64 * 32).map(|i| i as f32).collect();
/// let array = matrix_to_array(&ctx, &image, [32, 64], Order::C)?;
/// let tex = TextureObject::from_array(
///     &array,
///     &TextureDescriptor::new().filter_mode(FilterMode::Linear).normalized_coordinates(true),
/// )?;
/// # let module = Module::load_data(&ctx, b"")?;
/// let sample = module.function("sample")?; // sample(cudaTextureObject_t, float*, unsigned)
/// let mut out = DeviceBuffer::<f32>::uninit(&ctx, 1024)?;
/// // SAFETY: sample writes out[0..1024).
/// unsafe {
///     sample.launch(LaunchConfig::for_elements(1024, 256), &Stream::null(&ctx),
///                   (tex.handle(), &mut out, 1024u32))?
/// };
/// # Ok::<(), Error>(())
/// ```
pub struct TextureObject<'a> {
    raw: CUtexObject,
    ctx: Context,
    source: Source<'a>,
    format: ArrayFormat,
    num_channels: u32,
    desc: TextureDescriptor,
    _borrow: PhantomData<&'a ()>,
}

// SAFETY: a texture object is a driver handle usable from any thread; the borrowed
// array is Sync.
unsafe impl Send for TextureObject<'_> {}
// SAFETY: as above; shared references only read the handle.
unsafe impl Sync for TextureObject<'_> {}

impl std::fmt::Debug for TextureObject<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextureObject")
            .field("raw", &self.raw)
            .field("source", &self.source)
            .field("format", &self.format)
            .field("num_channels", &self.num_channels)
            .field("desc", &self.desc)
            .finish()
    }
}

fn check_channels(num_channels: u32) -> Result<()> {
    if matches!(num_channels, 1 | 2 | 4) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "texture: num_channels must be 1, 2 or 4, not {num_channels}"
        )))
    }
}

fn check_aligned(ctx: &Context, what: &str, addr: u64) -> Result<()> {
    let align = ctx
        .device()
        .attribute(DeviceAttribute::TextureAlignment)?
        .max(1) as u64;
    if addr % align != 0 {
        return Err(Error::invalid(format!(
            "texture over {what}: address {addr:#x} is not a multiple of the device's texture \
             alignment ({align} bytes); start at an aligned element (a view)"
        )));
    }
    Ok(())
}

impl<'a> TextureObject<'a> {
    /// A texture reading `array` (PyCUDA's `set_array`): 1D, 2D, 3D, layered or cubemap.
    pub fn from_array(array: &'a CudaArray, desc: &TextureDescriptor) -> Result<Self> {
        let ad = array.desc();
        desc.validate(ad.format, addressed_dims(ad))?;
        let res = CUDA_RESOURCE_DESC {
            resType: CUresourcetype::CU_RESOURCE_TYPE_ARRAY,
            res: CUDA_RESOURCE_DESC_st__bindgen_ty_1 {
                array: CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_1 {
                    hArray: array.raw(),
                },
            },
            flags: 0,
        };
        Self::create(
            array.context(),
            &res,
            desc,
            Source::Array(array),
            ad.format,
            ad.num_channels,
        )
    }

    /// A texture over linear device memory, read with `tex1Dfetch` (PyCUDA's
    /// `set_address` plus `set_format`). `mem` must start at a multiple of the device's
    /// texture alignment and hold whole elements of `num_channels` x `format`.
    pub fn from_linear<P: DevicePtr + ?Sized>(
        ctx: &Context,
        mem: &'a P,
        format: ArrayFormat,
        num_channels: u32,
        desc: &TextureDescriptor,
    ) -> Result<Self> {
        check_channels(num_channels)?;
        desc.validate(format, 0)?;
        let elem = ArrayDescriptor3D::d1(1, format, num_channels).element_bytes()?;
        let len = mem.byte_len();
        if len == 0 || len % elem != 0 {
            return Err(Error::invalid(format!(
                "texture over linear memory: {len} bytes is not a positive whole number of \
                 {elem}-byte elements"
            )));
        }
        check_aligned(ctx, "linear memory", mem.device_range().address())?;
        let res = CUDA_RESOURCE_DESC {
            resType: CUresourcetype::CU_RESOURCE_TYPE_LINEAR,
            res: CUDA_RESOURCE_DESC_st__bindgen_ty_1 {
                linear: CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
                    // The texture object borrows `mem`; kernels read it under the unsafe launch's contract.
                    devPtr: mem.device_range().address(),
                    format: format.raw(),
                    numChannels: num_channels,
                    sizeInBytes: len,
                },
            },
            flags: 0,
        };
        Self::create(ctx, &res, desc, Source::Linear, format, num_channels)
    }

    /// A texture over a whole buffer, format and channels from `T`.
    pub fn from_buffer<T: ArrayElement>(
        buf: &'a DeviceBuffer<T>,
        desc: &TextureDescriptor,
    ) -> Result<Self> {
        check_element::<T>()?;
        Self::from_linear(buf.context(), buf, T::FORMAT, T::CHANNELS, desc)
    }

    /// A 2D texture over pitched device memory (PyCUDA's `set_address_2d(devptr, descr,
    /// pitch)`): `shape.height` rows of `shape.width` elements, `pitch` bytes apart. The
    /// address must be a multiple of the texture alignment and `pitch` of the texture
    /// pitch alignment (device attributes).
    pub fn from_pitch_2d<P: DevicePtr + ?Sized>(
        ctx: &Context,
        mem: &'a P,
        shape: &ArrayDescriptor,
        pitch: usize,
        desc: &TextureDescriptor,
    ) -> Result<Self> {
        check_channels(shape.num_channels)?;
        desc.validate(shape.format, 2)?;
        if shape.width == 0 || shape.height == 0 {
            return Err(Error::invalid(format!(
                "texture over pitched memory: empty shape {} x {}",
                shape.width, shape.height
            )));
        }
        let row = shape.to_3d().row_bytes()?;
        if pitch < row {
            return Err(Error::invalid(format!(
                "texture over pitched memory: pitch {pitch} is less than a row of {row} bytes"
            )));
        }
        let need = (shape.height - 1)
            .checked_mul(pitch)
            .and_then(|b| b.checked_add(row))
            .ok_or_else(|| Error::invalid("texture over pitched memory: size overflows usize"))?;
        if mem.byte_len() < need {
            return Err(Error::invalid(format!(
                "texture over pitched memory: {} rows of pitch {pitch} need {need} bytes, the \
                 memory has {}",
                shape.height,
                mem.byte_len()
            )));
        }
        let pitch_align = ctx
            .device()
            .attribute(DeviceAttribute::TexturePitchAlignment)?
            .max(1) as usize;
        if pitch % pitch_align != 0 {
            return Err(Error::invalid(format!(
                "texture over pitched memory: pitch {pitch} is not a multiple of the device's \
                 texture pitch alignment ({pitch_align} bytes)"
            )));
        }
        check_aligned(ctx, "pitched memory", mem.device_range().address())?;
        let res = CUDA_RESOURCE_DESC {
            resType: CUresourcetype::CU_RESOURCE_TYPE_PITCH2D,
            res: CUDA_RESOURCE_DESC_st__bindgen_ty_1 {
                pitch2D: CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_4 {
                    // The texture object borrows `mem`; kernels read it under the unsafe launch's contract.
                    devPtr: mem.device_range().address(),
                    format: shape.format.raw(),
                    numChannels: shape.num_channels,
                    width: shape.width,
                    height: shape.height,
                    pitchInBytes: pitch,
                },
            },
            flags: 0,
        };
        Self::create(
            ctx,
            &res,
            desc,
            Source::Pitch2D,
            shape.format,
            shape.num_channels,
        )
    }

    fn create(
        ctx: &Context,
        res: &CUDA_RESOURCE_DESC,
        desc: &TextureDescriptor,
        source: Source<'a>,
        format: ArrayFormat,
        num_channels: u32,
    ) -> Result<Self> {
        let tex_desc = desc.to_raw(format);
        ctx.bind()?;
        let mut raw: CUtexObject = 0;
        // SAFETY: reads the two descriptors (no resource view); the memory they name is
        // borrowed for 'a, longer than the object lives; destroyed on drop.
        unsafe {
            call!(cuTexObjectCreate(
                &mut raw,
                res,
                &tex_desc,
                std::ptr::null()
            ))?
        };
        Ok(TextureObject {
            raw,
            ctx: ctx.clone(),
            source,
            format,
            num_channels,
            desc: *desc,
            _borrow: PhantomData,
        })
    }

    /// The value a kernel's `cudaTextureObject_t` parameter receives.
    #[inline]
    pub fn handle(&self) -> TextureHandle {
        TextureHandle(self.raw)
    }

    /// The raw handle.
    pub fn raw(&self) -> CUtexObject {
        self.raw
    }

    /// How it samples (PyCUDA's `get_address_mode`, `get_filter_mode`, `get_flags`).
    pub fn descriptor(&self) -> &TextureDescriptor {
        &self.desc
    }

    /// Channel format and count (PyCUDA's `get_format`).
    pub fn format(&self) -> (ArrayFormat, u32) {
        (self.format, self.num_channels)
    }

    /// The array it reads, if it reads one (PyCUDA's `get_array`).
    pub fn array(&self) -> Option<&'a CudaArray> {
        match self.source {
            Source::Array(a) => Some(a),
            Source::Linear | Source::Pitch2D => None,
        }
    }

    /// The context it was made in.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Destroys the object now and returns any error.
    pub fn destroy(self) -> Result<()> {
        let me = std::mem::ManuallyDrop::new(self);
        let r = me.release();
        // SAFETY: `me` is never dropped, so the context is read (and dropped) exactly once.
        drop(unsafe { std::ptr::read(&me.ctx) });
        r
    }

    fn release(&self) -> Result<()> {
        self.ctx.make_current()?;
        // SAFETY: created by this object and destroyed once (drop and destroy consume it).
        unsafe { call!(cuTexObjectDestroy(self.raw)) }
    }
}

impl Drop for TextureObject<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            self.ctx.defer_error(e);
        }
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

    #[test]
    fn addressed_dimensions_of_arrays() {
        let f = ArrayFormat::F32;
        assert_eq!(addressed_dims(&ArrayDescriptor3D::d1(8, f, 1)), 1);
        assert_eq!(
            addressed_dims(&ArrayDescriptor3D::layered_1d(8, 2, f, 1)),
            1
        );
        assert_eq!(addressed_dims(&ArrayDescriptor3D::d2(8, 8, f, 1)), 2);
        assert_eq!(
            addressed_dims(&ArrayDescriptor3D::layered_2d(8, 8, 3, f, 1)),
            2
        );
        assert_eq!(addressed_dims(&ArrayDescriptor3D::d3(8, 8, 8, f, 1)), 3);
        assert_eq!(addressed_dims(&ArrayDescriptor3D::cubemap(8, f, 1)), 0);
    }
}
