//! Surface objects (`cuSurfObjectCreate`): unfiltered, writable views of an array
//! created with [`Array3DFlags::SURFACE_LDST`], passed to kernels as
//! `cudaSurfaceObject_t` values. They replace PyCUDA's surface references, which CUDA 12
//! removed.
//!
//! | PyCUDA (surface references)                            | rucuda                                                        |
//! |--------------------------------------------------------|---------------------------------------------------------------|
//! | `surface<void, 2> surf;` + `Module.get_surfref("surf")` | a `cudaSurfaceObject_t surf` kernel parameter and a [`SurfaceObject`] |
//! | `SurfaceReference.set_array(ary, flags=0)`             | [`SurfaceObject::new`]                                        |
//! | `SurfaceReference.get_array()`                         | [`SurfaceObject::array`]                                      |
//! | `np_to_array(..., allowSurfaceBind=True)`              | [`crate::CudaArray::from_host`] with [`Array3DFlags::SURFACE_LDST`] |
//!
//! In the kernel, x coordinates are in bytes: `surf2Dwrite(v, s, x * sizeof(v), y)`,
//! `surf2Dread<float>(s, x * sizeof(float), y)`, and likewise `surf1D*`, `surf3D*`,
//! `surf2DLayered*`.

use std::marker::PhantomData;

use rucuda_driver_sys::{
    CUDA_RESOURCE_DESC_st__bindgen_ty_1, CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_1,
    CUresourcetype, CUsurfObject, CUDA_RESOURCE_DESC,
};

use crate::arrays::cuda_array::CudaArray;
use crate::arrays::format::Array3DFlags;
use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::repr::DeviceRepr;

/// A surface object's handle as a kernel receives it (`cudaSurfaceObject_t`, a 64-bit
/// value); pass it by value in a launch's argument tuple.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SurfaceHandle(pub CUsurfObject);

// SAFETY: one unsigned 64-bit integer, the layout of cudaSurfaceObject_t; every bit
// pattern is a value (the driver validates handles it is given).
unsafe impl DeviceRepr for SurfaceHandle {
    const C_TYPE: &'static str = "cudaSurfaceObject_t";
}

/// A surface object over an array, borrowing it mutably for `'a` (kernels write the
/// array through it); destroyed on drop (errors queued on the context) or with
/// [`SurfaceObject::destroy`].
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let desc = ArrayDescriptor3D::d2(64, 64, ArrayFormat::F32, 1).with_flags(Array3DFlags::SURFACE_LDST);
/// let mut array = CudaArray::new_3d(&ctx, &desc)?;
/// {
///     let surf = SurfaceObject::new(&mut array)?;
///     # let module = Module::load_data(&ctx, b"")?;
///     let fill = module.function("fill")?; // fill(cudaSurfaceObject_t, unsigned w, unsigned h)
///     let cfg = LaunchConfig { grid: (4, 4, 1), block: (16, 16, 1), shared_mem_bytes: 0 };
///     // SAFETY: fill writes elements (x, y) < (w, h) of the surface.
///     unsafe { fill.launch(cfg, &Stream::null(&ctx), (surf.handle(), 64u32, 64u32))? };
/// }
/// let values: Vec<f32> = array.to_host_vec()?;
/// # Ok::<(), Error>(())
/// ```
pub struct SurfaceObject<'a> {
    raw: CUsurfObject,
    ctx: Context,
    array: &'a CudaArray,
    _borrow: PhantomData<&'a mut CudaArray>,
}

// SAFETY: a surface object is a driver handle usable from any thread; CudaArray is Sync.
unsafe impl Send for SurfaceObject<'_> {}
// SAFETY: as above; shared references only read the handle.
unsafe impl Sync for SurfaceObject<'_> {}

impl std::fmt::Debug for SurfaceObject<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SurfaceObject")
            .field("raw", &self.raw)
            .field("array", &self.array)
            .finish()
    }
}

impl<'a> SurfaceObject<'a> {
    /// A surface over `array`, which must have been created with
    /// [`Array3DFlags::SURFACE_LDST`] (PyCUDA's `SurfaceReference.set_array`).
    pub fn new(array: &'a mut CudaArray) -> Result<Self> {
        let array: &'a CudaArray = array;
        if !array.desc().flags.contains(Array3DFlags::SURFACE_LDST) {
            return Err(Error::invalid(
                "surface: the array was not created with Array3DFlags::SURFACE_LDST \
                 (CudaArray::new_3d with the flag, or from_host(..., SURFACE_LDST))",
            ));
        }
        let res = CUDA_RESOURCE_DESC {
            resType: CUresourcetype::CU_RESOURCE_TYPE_ARRAY,
            res: CUDA_RESOURCE_DESC_st__bindgen_ty_1 {
                array: CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_1 {
                    hArray: array.raw(),
                },
            },
            flags: 0,
        };
        let ctx = array.context().clone();
        ctx.bind()?;
        let mut raw: CUsurfObject = 0;
        // SAFETY: reads one resource descriptor naming an array borrowed for 'a, longer
        // than the object lives; destroyed on drop.
        unsafe { call!(cuSurfObjectCreate(&mut raw, &res))? };
        Ok(SurfaceObject {
            raw,
            ctx,
            array,
            _borrow: PhantomData,
        })
    }

    /// The value a kernel's `cudaSurfaceObject_t` parameter receives.
    #[inline]
    pub fn handle(&self) -> SurfaceHandle {
        SurfaceHandle(self.raw)
    }

    /// The raw handle.
    pub fn raw(&self) -> CUsurfObject {
        self.raw
    }

    /// The array it writes (PyCUDA's `get_array`).
    pub fn array(&self) -> &CudaArray {
        self.array
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
        unsafe { call!(cuSurfObjectDestroy(self.raw)) }
    }
}

impl Drop for SurfaceObject<'_> {
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
    fn handle_is_a_64_bit_value() {
        assert_eq!(std::mem::size_of::<SurfaceHandle>(), 8);
        assert_eq!(SurfaceHandle::C_TYPE, "cudaSurfaceObject_t");
    }
}
