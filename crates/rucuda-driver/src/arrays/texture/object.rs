//! Texture objects over an array, linear device memory or pitched 2D device memory.

use std::marker::PhantomData;

use rucuda_driver_sys::{
    CUDA_RESOURCE_DESC_st__bindgen_ty_1, CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_1,
    CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3,
    CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_4, CUresourcetype, CUtexObject,
    CUDA_RESOURCE_DESC,
};

use crate::arrays::cuda_array::CudaArray;
use crate::arrays::descriptor::ArrayDescriptor;
use crate::arrays::descriptor::ArrayDescriptor3D;
use crate::arrays::element::check_element;
use crate::arrays::element::ArrayElement;
use crate::arrays::format::Array3DFlags;
use crate::arrays::format::ArrayFormat;
use crate::arrays::texture::descriptor::TextureDescriptor;
use crate::arrays::texture::descriptor::TextureHandle;
use crate::context::Context;
use crate::device::attribute::DeviceAttribute;
use crate::error::{call, Error, Result};
use crate::memory::device_buffer::DeviceBuffer;
use crate::memory::tracking::DevicePtr;

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
