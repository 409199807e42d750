//! What registered buffers and images share: the CUDA graphics resource, its map flags,
//! its mapped state, and unregistering it on drop.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

use rucuda_driver::{check, driver, Context};
use rucuda_driver_sys::{CUgraphicsResource, CUresult};

use crate::error::{defer, take_deferred_errors, Error, Result};
use crate::flags::{MapFlags, ResourceKind};

/// The shared state of a registered resource. Not `Send`: GL interop calls need the GL
/// context current, which is per thread.
pub struct ResourceCore {
    pub(crate) raw: CUgraphicsResource,
    pub(crate) ctx: Context,
    pub(crate) kind: ResourceKind,
    pub(crate) gl_name: u32,
    pub(crate) mapped: Cell<bool>,
    pub(crate) map_flags: Cell<MapFlags>,
    _not_send: PhantomData<*const ()>,
}

impl ResourceCore {
    /// Registers through `register`, which calls `cuGraphicsGLRegister*` with the out
    /// pointer it is given; the CUDA context is bound first.
    pub(crate) fn register(
        ctx: &Context,
        kind: ResourceKind,
        gl_name: u32,
        call: &'static str,
        register: impl FnOnce(*mut CUgraphicsResource) -> Result<CUresult>,
    ) -> Result<ResourceCore> {
        take_deferred_errors()?;
        ctx.bind()?;
        let mut raw: CUgraphicsResource = std::ptr::null_mut();
        check(register(&mut raw)?, call)?;
        Ok(ResourceCore {
            raw,
            ctx: ctx.clone(),
            kind,
            gl_name,
            mapped: Cell::new(false),
            map_flags: Cell::new(MapFlags::None),
            _not_send: PhantomData,
        })
    }

    pub(crate) fn set_map_flags(&self, flags: MapFlags) -> Result<()> {
        take_deferred_errors()?;
        if self.mapped.get() {
            return Err(Error::FlagsWhileMapped {
                gl_name: self.gl_name,
            });
        }
        self.ctx.bind()?;
        let f = driver()?.cuGraphicsResourceSetMapFlags()?;
        // SAFETY: the resource is registered and not mapped; flags is a plain value.
        let code = unsafe { f(self.raw, flags.bits()) };
        check(code, "cuGraphicsResourceSetMapFlags")?;
        self.map_flags.set(flags);
        Ok(())
    }

    fn unregister(&self) -> Result<()> {
        self.ctx.bind()?;
        let f = driver()?.cuGraphicsUnregisterResource()?;
        // SAFETY: the resource is registered and, since no mapping borrows it any more,
        // not mapped; it is unregistered exactly once (here, from drop).
        check(unsafe { f(self.raw) }, "cuGraphicsUnregisterResource")?;
        Ok(())
    }
}

impl Drop for ResourceCore {
    fn drop(&mut self) {
        if let Err(e) = self.unregister() {
            defer(e);
        }
    }
}

impl fmt::Debug for ResourceCore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("kind", &self.kind)
            .field("gl_name", &self.gl_name)
            .field("mapped", &self.mapped.get())
            .field("map_flags", &self.map_flags.get())
            .finish()
    }
}

pub(crate) mod sealed {
    /// Only this crate's registered types are resources.
    pub trait Sealed {
        /// The shared state.
        fn core(&self) -> &super::ResourceCore;
    }
}

/// A GL object registered with CUDA: [`RegisteredBuffer`] or [`RegisteredImage`]. The
/// common view that [`map_resources`] takes, to map several in one call.
///
/// ```no_run
/// # fn f(buf: &rucuda_gl::RegisteredBuffer, img: &rucuda_gl::RegisteredImage,
/// #      stream: &rucuda_driver::Stream) -> rucuda_gl::Result<()> {
/// use rucuda_gl::{map_resources, Registered};
/// assert!(!buf.is_mapped());
/// let mapping = map_resources(&[buf, img], stream)?;
/// assert!(buf.is_mapped() && img.is_mapped());
/// # Ok(()) }
/// ```
///
/// [`RegisteredBuffer`]: crate::RegisteredBuffer
/// [`RegisteredImage`]: crate::RegisteredImage
/// [`map_resources`]: crate::map_resources
pub trait Registered: sealed::Sealed {
    /// The raw `CUgraphicsResource`.
    fn raw(&self) -> CUgraphicsResource {
        self.core().raw
    }
    /// The GL name that was registered.
    fn gl_name(&self) -> u32 {
        self.core().gl_name
    }
    /// Buffer or image.
    fn kind(&self) -> ResourceKind {
        self.core().kind
    }
    /// Whether a live mapping holds it mapped.
    fn is_mapped(&self) -> bool {
        self.core().mapped.get()
    }
    /// The map flags last set (the default is [`MapFlags::None`]).
    fn map_flags(&self) -> MapFlags {
        self.core().map_flags.get()
    }
    /// The CUDA context it was registered in.
    fn context(&self) -> &Context {
        &self.core().ctx
    }
}
