//! Mapping registered resources for CUDA: [`map_resources`] (one or several in one
//! call) and [`RegisteredMapping`] (PyCUDA's `RegisteredMapping`): device pointers of
//! buffers, CUDA arrays of images, unmapping explicitly or on drop.

use std::fmt;

use rucuda_driver::{
    check, driver, Access, Context, DevicePointerArg, DeviceRange, Stream, UseLog,
};
use rucuda_driver_sys::{
    CUarray, CUarray_format, CUdeviceptr, CUgraphicsResource, CUresult, CUDA_ARRAY3D_DESCRIPTOR,
};

use crate::error::{defer, take_deferred_errors, Error, Result};
use crate::flags::ResourceKind;
use crate::resource::{Registered, ResourceCore};

/// Maps several registered resources for CUDA in one `cuGraphicsMapResources` call on
/// `stream` (cheaper than one call each: GL synchronises once).
///
/// All resources and the stream must belong to one CUDA context
/// ([`Error::ContextMismatch`]); none may be mapped already ([`Error::AlreadyMapped`]) or
/// appear twice ([`Error::DuplicateResource`]). The resources stay borrowed while the
/// mapping lives, so none is unregistered while mapped.
///
/// ```no_run
/// # fn f(vertices: &rucuda_gl::RegisteredBuffer, colors: &rucuda_gl::RegisteredBuffer,
/// #      image: &rucuda_gl::RegisteredImage, stream: &rucuda_driver::Stream)
/// #     -> rucuda_gl::Result<()> {
/// let mut mapping = rucuda_gl::map_resources(&[vertices, colors, image], stream)?;
/// let (v, v_bytes) = mapping.device_ptr_and_size_of(0)?;
/// let (c, c_bytes) = mapping.device_ptr_and_size_of(1)?;
/// let pixels = mapping.array_of(2, 0, 0)?;
/// // ... kernels on `stream` ...
/// mapping.unmap()?; // or drop it
/// # Ok(()) }
/// ```
pub fn map_resources<'r>(
    resources: &[&'r dyn Registered],
    stream: &Stream,
) -> Result<RegisteredMapping<'r>> {
    take_deferred_errors()?;
    let cores: Vec<&'r ResourceCore> = resources.iter().map(|r| r.core()).collect();
    let first = cores.first().ok_or(Error::NoResources)?;
    let ctx = &first.ctx;
    if stream.context() != ctx {
        return Err(Error::ContextMismatch);
    }
    for (i, c) in cores.iter().enumerate() {
        if c.ctx != *ctx {
            return Err(Error::ContextMismatch);
        }
        if cores[..i].iter().any(|earlier| earlier.raw == c.raw) {
            return Err(Error::DuplicateResource { gl_name: c.gl_name });
        }
        if c.mapped.get() {
            return Err(Error::AlreadyMapped { gl_name: c.gl_name });
        }
    }
    let count = u32::try_from(cores.len())
        .map_err(|_| Error::InvalidArgument("too many resources for one map call".into()))?;
    let mut raws: Vec<CUgraphicsResource> = cores.iter().map(|c| c.raw).collect();
    ctx.bind()?;
    let f = driver()?.cuGraphicsMapResources()?;
    // SAFETY: `raws` holds `count` registered, unmapped resources of the current CUDA
    // context; the stream belongs to it and is alive. The GL context is current
    // (registration contract).
    let code = unsafe { f(count, raws.as_mut_ptr(), stream.raw()) };
    if code == CUresult::CUDA_ERROR_ALREADY_MAPPED {
        // Mapped behind our back (a raw driver call on the handle).
        return Err(Error::AlreadyMapped {
            gl_name: first.gl_name,
        });
    }
    check(code, "cuGraphicsMapResources")?;
    for c in &cores {
        c.mapped.set(true);
    }
    Ok(RegisteredMapping {
        resources: cores,
        raws,
        stream: stream.clone(),
        mapped: true,
        uses: UseLog::new(),
    })
}

/// What every registered type has, written once for a type with a `core:
/// ResourceCore` field: [`Registered`] (through the sealed trait) and the methods
/// `map`, `set_map_flags` and `unregister`.
macro_rules! registered_resource {
    ($ty:ty) => {
        impl $crate::resource::sealed::Sealed for $ty {
            fn core(&self) -> &$crate::resource::ResourceCore {
                &self.core
            }
        }

        impl $crate::resource::Registered for $ty {}

        impl $ty {
            /// Maps it for CUDA on `stream` (`cuGraphicsMapResources`): GL work issued
            /// before finishes before CUDA work on `stream` that follows.
            /// [`Error::AlreadyMapped`](crate::Error::AlreadyMapped) when a live mapping
            /// already holds it.
            pub fn map(
                &self,
                stream: &rucuda_driver::Stream,
            ) -> $crate::error::Result<$crate::mapping::RegisteredMapping<'_>> {
                $crate::mapping::map_resources(&[self], stream)
            }

            /// Sets how CUDA will use it while mapped (`cuGraphicsResourceSetMapFlags`);
            /// only while unmapped ([`Error::FlagsWhileMapped`](crate::Error::FlagsWhileMapped)
            /// otherwise).
            pub fn set_map_flags(
                &self,
                flags: $crate::flags::MapFlags,
            ) -> $crate::error::Result<()> {
                self.core.set_map_flags(flags)
            }

            /// Unregisters now, reporting a failure (drop does the same and queues it).
            pub fn unregister(self) -> $crate::error::Result<()> {
                drop(self);
                $crate::error::take_deferred_errors()
            }
        }
    };
}
pub(crate) use registered_resource;

/// One or more registered resources mapped for CUDA. While it is mapped, CUDA owns the
/// resources and GL must not touch them; [`RegisteredMapping::unmap`] (or dropping the
/// mapping) hands them back to GL, ordered after the CUDA work queued on its stream.
///
/// After `unmap`, every accessor fails with [`Error::NotMapped`]. Device pointers and
/// arrays obtained before are invalid from then on.
///
/// Not `Send` (GL interop calls need the GL context current on the thread).
///
/// ```no_run
/// # fn f(reg: &rucuda_gl::RegisteredBuffer, stream: &rucuda_driver::Stream,
/// #      kernel: &rucuda_driver::Function) -> Result<(), Box<dyn std::error::Error>> {
/// let mapping = reg.map(stream)?;
/// let (ptr, bytes) = mapping.device_ptr_and_size()?;
/// let n = (bytes / 4) as u32;
/// // SAFETY: the kernel writes n floats at ptr, all inside the mapped buffer.
/// unsafe {
///     kernel.launch(
///         rucuda_driver::LaunchConfig::for_elements(n as usize, 256),
///         stream,
///         (mapping.device_ptr()?, n),
///     )?
/// };
/// drop(mapping); // unmaps on `stream`
/// # Ok(()) }
/// ```
pub struct RegisteredMapping<'r> {
    resources: Vec<&'r ResourceCore>,
    raws: Vec<CUgraphicsResource>,
    stream: Stream,
    mapped: bool,
    /// Uses of the mapped buffers through [`RegisteredMapping::device_range_of`] (copies,
    /// memsets, launches); unmapping waits for them.
    uses: UseLog,
}

impl fmt::Debug for RegisteredMapping<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredMapping")
            .field("resources", &self.resources)
            .field("mapped", &self.mapped)
            .finish()
    }
}

impl<'r> RegisteredMapping<'r> {
    /// How many resources this mapping holds.
    pub fn len(&self) -> usize {
        self.resources.len()
    }

    /// Always false: a mapping holds at least one resource.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }

    /// Whether it is still mapped (false after [`RegisteredMapping::unmap`]).
    pub fn is_mapped(&self) -> bool {
        self.mapped
    }

    /// The stream it was mapped on (and unmaps on).
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The kind of resource `index`.
    pub fn kind_of(&self, index: usize) -> Result<ResourceKind> {
        self.resources
            .get(index)
            .map(|c| c.kind)
            .ok_or(Error::IndexOutOfRange {
                index,
                len: self.resources.len(),
            })
    }

    fn resource(
        &self,
        index: usize,
        operation: &'static str,
        wanted: ResourceKind,
    ) -> Result<&'r ResourceCore> {
        take_deferred_errors()?;
        if !self.mapped {
            return Err(Error::NotMapped);
        }
        let c = *self.resources.get(index).ok_or(Error::IndexOutOfRange {
            index,
            len: self.resources.len(),
        })?;
        if c.kind != wanted {
            return Err(Error::WrongResourceKind {
                operation,
                wanted,
                got: c.kind,
                index,
            });
        }
        c.ctx.bind()?;
        Ok(c)
    }

    /// The device pointer and size in bytes of the mapped buffer (the first resource of
    /// the mapping; PyCUDA's `device_ptr_and_size`).
    pub fn device_ptr_and_size(&self) -> Result<(CUdeviceptr, usize)> {
        self.device_ptr_and_size_of(0)
    }

    /// The device pointer and size of buffer `index` of the mapping
    /// (`cuGraphicsResourceGetMappedPointer`).
    pub fn device_ptr_and_size_of(&self, index: usize) -> Result<(CUdeviceptr, usize)> {
        let c = self.resource(index, "device_ptr_and_size", ResourceKind::Buffer)?;
        let f = driver()?.cuGraphicsResourceGetMappedPointer()?;
        let (mut ptr, mut size): (CUdeviceptr, usize) = (0, 0);
        // SAFETY: writes one pointer and one size; the resource is a mapped buffer of the
        // current context.
        let code = unsafe { f(&mut ptr, &mut size, c.raw) };
        check(code, "cuGraphicsResourceGetMappedPointer")?;
        Ok((ptr, size))
    }

    /// The first buffer's device pointer as a kernel argument (for `unsafe` launches,
    /// whose contract keeps the mapping alive while the kernel runs; safe copies take
    /// [`RegisteredMapping::device_range`]).
    pub fn device_ptr(&self) -> Result<DevicePointerArg> {
        Ok(DevicePointerArg(self.device_ptr_and_size()?.0))
    }

    /// The first mapped buffer as device memory for rucuda's copies, memsets and launches:
    /// its uses are recorded in the mapping's log, and unmapping waits for them.
    pub fn device_range(&self) -> Result<DeviceRange<'_>> {
        self.device_range_of(0)
    }

    /// Mapped buffer `index` as device memory (see [`RegisteredMapping::device_range`]).
    pub fn device_range_of(&self, index: usize) -> Result<DeviceRange<'_>> {
        let (ptr, size) = self.device_ptr_and_size_of(index)?;
        // SAFETY: the buffer stays mapped while `self` is borrowed (unmapping needs
        // `&mut self` or the drop), and unmapping first waits for every use the log
        // recorded.
        Ok(unsafe { DeviceRange::new(ptr, size, &self.uses) })
    }

    /// The CUDA array of sub-resource (`array_index`, `mip_level`) of the mapped image
    /// (the first resource of the mapping). `array_index` is the layer of an array
    /// texture or the face of a cube map, else 0.
    pub fn array(&self, array_index: u32, mip_level: u32) -> Result<MappedArray<'_>> {
        self.array_of(0, array_index, mip_level)
    }

    /// The CUDA array of a sub-resource of image `index` of the mapping
    /// (`cuGraphicsSubResourceGetMappedArray`).
    pub fn array_of(
        &self,
        index: usize,
        array_index: u32,
        mip_level: u32,
    ) -> Result<MappedArray<'_>> {
        let c = self.resource(index, "array", ResourceKind::Image)?;
        let f = driver()?.cuGraphicsSubResourceGetMappedArray()?;
        let mut raw: CUarray = std::ptr::null_mut();
        // SAFETY: writes one CUarray; the resource is a mapped image of the current
        // context.
        let code = unsafe { f(&mut raw, c.raw, array_index, mip_level) };
        check(code, "cuGraphicsSubResourceGetMappedArray")?;
        Ok(MappedArray { raw, ctx: &c.ctx })
    }

    /// Unmaps every resource of the mapping on its stream (`cuGraphicsUnmapResources`):
    /// GL work issued afterwards waits for the CUDA work queued on the stream before.
    /// [`Error::NotMapped`] when it was unmapped already.
    pub fn unmap(&mut self) -> Result<()> {
        take_deferred_errors()?;
        if !self.mapped {
            return Err(Error::NotMapped);
        }
        self.unmap_now()
    }

    fn unmap_now(&mut self) -> Result<()> {
        // Work queued through `device_range` on any stream finishes before GL gets the
        // resources back; where the wait fails they stay mapped.
        self.uses.wait_on_host(Access::Write)?;
        let ctx = self.stream.context();
        ctx.bind()?;
        let f = driver()?.cuGraphicsUnmapResources()?;
        let count = u32::try_from(self.raws.len())
            .map_err(|_| Error::InvalidArgument("too many resources".into()))?;
        // SAFETY: the resources were mapped together on this stream by this mapping and
        // are still registered (borrowed); the GL context is current (registration
        // contract).
        let code = unsafe { f(count, self.raws.as_mut_ptr(), self.stream.raw()) };
        // Whatever the driver said, these resources are no longer ours to use as mapped.
        self.mapped = false;
        for c in &self.resources {
            c.mapped.set(false);
        }
        check(code, "cuGraphicsUnmapResources")?;
        Ok(())
    }
}

impl Drop for RegisteredMapping<'_> {
    fn drop(&mut self) {
        if self.mapped {
            if let Err(e) = self.unmap_now() {
                defer(e);
            }
        }
    }
}

/// The CUDA array of one sub-resource of a mapped image, valid while the mapping that
/// gave it is mapped (it borrows the mapping, so `unmap` cannot run while it lives).
///
/// Use [`MappedArray::raw`] with a surface or texture object, or with `cuMemcpy2D` /
/// `cuMemcpy3D`.
#[derive(Debug, Clone, Copy)]
pub struct MappedArray<'m> {
    raw: CUarray,
    ctx: &'m Context,
}

impl MappedArray<'_> {
    /// The raw `CUarray` (owned by the mapping: never destroy it).
    pub fn raw(&self) -> CUarray {
        self.raw
    }

    /// Its shape and element format (`cuArray3DGetDescriptor`).
    pub fn descriptor(&self) -> Result<ArrayDescriptor> {
        self.ctx.bind()?;
        let f = driver()?.cuArray3DGetDescriptor()?;
        let mut d = CUDA_ARRAY3D_DESCRIPTOR::default();
        // SAFETY: writes one descriptor; the array is alive while the mapping is mapped.
        check(unsafe { f(&mut d, self.raw) }, "cuArray3DGetDescriptor")?;
        Ok(ArrayDescriptor {
            width: d.Width,
            height: d.Height,
            depth: d.Depth,
            format: d.Format,
            num_channels: d.NumChannels,
            flags: d.Flags,
        })
    }
}

/// The shape and format of a mapped CUDA array.
///
/// ```
/// use rucuda_gl::ArrayDescriptor;
/// use rucuda_gl::sys::CUarray_format;
/// let d = ArrayDescriptor { width: 64, height: 32, depth: 0,
///     format: CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8, num_channels: 4, flags: 0 };
/// assert_eq!(d.element_size(), Some(4));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayDescriptor {
    /// Width in elements.
    pub width: usize,
    /// Height in elements (0 for 1D).
    pub height: usize,
    /// Depth or layers (0 for 1D and 2D).
    pub depth: usize,
    /// Element format of one channel.
    pub format: CUarray_format,
    /// Channels per element (1, 2 or 4).
    pub num_channels: u32,
    /// `CUDA_ARRAY3D_*` flags (layered, cube map, surface load/store...).
    pub flags: u32,
}

impl ArrayDescriptor {
    /// Bytes per element (all channels), for the plain integer and float formats.
    pub fn element_size(&self) -> Option<usize> {
        let channel = match self.format.0 {
            1 | 8 => 1,
            2 | 9 | 16 => 2,
            3 | 10 | 32 => 4,
            _ => return None,
        };
        Some(channel * self.num_channels as usize)
    }
}
