//! Which CUDA devices run the current GL context (`cuGLGetDevices`), and a CUDA context
//! for GL interop: what replaces PyCUDA's `gl.init`, `gl.make_context` and
//! `pycuda.gl.autoinit`.

use std::ffi::c_uint;

use rucuda_driver::{check, driver, Context, Device};
use rucuda_driver_sys::{CUGLDeviceList, CUdevice, CUresult};

use crate::error::{take_deferred_errors, Error, Result};

/// Which devices [`gl_devices`] lists (`CUGLDeviceList`).
///
/// ```
/// assert_eq!(rucuda_gl::GlDeviceList::default(), rucuda_gl::GlDeviceList::All);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GlDeviceList {
    /// Every CUDA device the current GL context runs on.
    #[default]
    All,
    /// The devices rendering the current frame (SLI).
    CurrentFrame,
    /// The devices that will render the next frame (SLI).
    NextFrame,
}

impl GlDeviceList {
    fn raw(self) -> CUGLDeviceList {
        match self {
            GlDeviceList::All => CUGLDeviceList::CU_GL_DEVICE_LIST_ALL,
            GlDeviceList::CurrentFrame => CUGLDeviceList::CU_GL_DEVICE_LIST_CURRENT_FRAME,
            GlDeviceList::NextFrame => CUGLDeviceList::CU_GL_DEVICE_LIST_NEXT_FRAME,
        }
    }
}

/// The CUDA devices that run the GL context current on this thread (`cuGLGetDevices`);
/// empty when it runs on none (another vendor's GPU, a software renderer).
///
/// A GL context must be current on this thread; the driver reports an error otherwise.
///
/// ```no_run
/// // With a GL context current on this thread:
/// for dev in rucuda_gl::gl_devices(rucuda_gl::GlDeviceList::All)? {
///     println!("GL runs on CUDA device {} ({})", dev.ordinal(), dev.name()?);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn gl_devices(list: GlDeviceList) -> Result<Vec<Device>> {
    take_deferred_errors()?;
    rucuda_driver::init()?;
    let capacity = Device::count()?.max(1);
    let mut raw: Vec<CUdevice> = vec![0; capacity];
    let mut count: c_uint = 0;
    let f = driver()?.cuGLGetDevices_v2()?;
    let cap = c_uint::try_from(capacity)
        .map_err(|_| Error::InvalidArgument("too many devices".into()))?;
    // SAFETY: writes at most `cap` CUdevice values into `raw` and one count.
    let code = unsafe { f(&mut count, raw.as_mut_ptr(), cap, list.raw()) };
    if code == CUresult::CUDA_ERROR_NO_DEVICE {
        return Ok(Vec::new());
    }
    check(code, "cuGLGetDevices")?;
    raw.truncate((count as usize).min(capacity));
    raw.into_iter()
        .map(|d| {
            let ordinal = usize::try_from(d)
                .map_err(|_| Error::InvalidArgument(format!("device handle {d}")))?;
            Ok(Device::get(ordinal)?)
        })
        .collect()
}

/// The primary context of the first CUDA device running the current GL context: what
/// `import pycuda.gl.autoinit` gave (a context fit for GL interop).
///
/// Since CUDA 5, any CUDA context interoperates with GL: there is no special "GL
/// context" to create any more. PyCUDA's calls map as follows:
///
/// | PyCUDA | rucuda |
/// |---|---|
/// | `pycuda.gl.init()` | nothing: make a GL context current, that is all |
/// | `pycuda.gl.make_context(dev, flags)` | [`Device::primary_context`] (or [`Device::make_context`] with flags) of a device from [`gl_devices`] |
/// | `import pycuda.gl.autoinit` | `primary_context_for_current_gl()` |
///
/// Fails with [`Error::NoCudaDeviceForGl`] when the GL context runs on no CUDA device.
///
/// ```no_run
/// // With a GL context current on this thread:
/// let ctx = rucuda_gl::primary_context_for_current_gl()?;
/// println!("CUDA on {}", ctx.device().name()?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn primary_context_for_current_gl() -> Result<Context> {
    let dev = gl_devices(GlDeviceList::All)?
        .into_iter()
        .next()
        .ok_or(Error::NoCudaDeviceForGl)?;
    let ctx = dev.primary_context()?;
    ctx.bind()?;
    Ok(ctx)
}
