//! A headless OpenGL context (no window, no display server) on NVIDIA's EGL device
//! platform: `eglQueryDevicesEXT` → `eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT)`
//! → a context with no surface. For tests, examples, and batch jobs that render offscreen.
//!
//! `libEGL.so.1` (libglvnd's loader) is opened at run time: nothing links against EGL or
//! GL, and every failure (no library, no NVIDIA EGL driver, no device) is a
//! [`HeadlessError`] saying why, so callers can skip instead of crashing.
//!
//! Needs the `headless-egl` feature.

use std::ffi::{c_char, c_void, CStr};
use std::marker::PhantomData;

use khronos_egl as egl;

/// `EGL_PLATFORM_DEVICE_EXT`.
const EGL_PLATFORM_DEVICE_EXT: egl::Enum = 0x313F;
/// `EGL_CUDA_DEVICE_NV` (from `EGL_NV_device_cuda`).
const EGL_CUDA_DEVICE_NV: egl::Int = 0x323A;

type EglDevice = *mut c_void;
type QueryDevices =
    unsafe extern "system" fn(max: egl::Int, devices: *mut EglDevice, num: *mut egl::Int) -> u32;
type QueryDeviceAttrib =
    unsafe extern "system" fn(device: EglDevice, attribute: egl::Int, value: *mut isize) -> u32;
type QueryDeviceString =
    unsafe extern "system" fn(device: EglDevice, name: egl::Int) -> *const c_char;
type GetPlatformDisplay = unsafe extern "system" fn(
    platform: egl::Enum,
    native_display: *mut c_void,
    attribs: *const egl::Int,
) -> *mut c_void;

/// Why no headless GL context could be made (the message says what to do).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct HeadlessError(pub String);

fn fail<T>(msg: impl Into<String>) -> Result<T, HeadlessError> {
    Err(HeadlessError(msg.into()))
}

/// An OpenGL context with no surface, current on the thread that made it, and its GL
/// functions as a `glow::Context`.
///
/// Not `Send`: the context is current on the creating thread only. Dropping it releases
/// and destroys the context (the EGL display is left initialised, since other contexts
/// of the process may share it).
///
/// ```no_run
/// use rucuda_gl::headless::HeadlessGl;
/// let gl = HeadlessGl::new(Some(0))?; // the EGL device of CUDA device 0
/// println!("{}", gl.describe());
/// let ctx = rucuda_gl::primary_context_for_current_gl()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct HeadlessGl {
    egl: egl::DynamicInstance<egl::EGL1_4>,
    display: egl::Display,
    context: egl::Context,
    surface: Option<egl::Surface>,
    gl: glow::Context,
    egl_device_index: usize,
    cuda_device: Option<i64>,
    _not_send: PhantomData<*const ()>,
}

impl std::fmt::Debug for HeadlessGl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeadlessGl")
            .field("egl_device_index", &self.egl_device_index)
            .field("cuda_device", &self.cuda_device)
            .finish_non_exhaustive()
    }
}

struct Ext {
    query_devices: QueryDevices,
    query_attrib: Option<QueryDeviceAttrib>,
    query_string: Option<QueryDeviceString>,
    get_platform_display: GetPlatformDisplay,
}

fn proc_address<F: Copy>(egl: &egl::DynamicInstance<egl::EGL1_4>, name: &str) -> Option<F> {
    let p = egl.get_proc_address(name)?;
    debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<fn()>());
    // SAFETY: `F` is the function-pointer type of the EGL extension function `name`
    // (the callers below pair each name with its prototype from the extension's
    // specification); function pointers all have the same size.
    Some(unsafe { std::mem::transmute_copy::<extern "system" fn(), F>(&p) })
}

impl HeadlessGl {
    /// Makes a context on an EGL device and makes it current on this thread. With
    /// `cuda_device` set, the EGL device that reports that CUDA device ordinal
    /// (`EGL_NV_device_cuda`) is tried first; then every other device in order.
    pub fn new(cuda_device: Option<u32>) -> Result<HeadlessGl, HeadlessError> {
        // SAFETY: libEGL.so.1 is the EGL loader; its symbols have EGL's prototypes.
        let egl = match unsafe {
            egl::DynamicInstance::<egl::EGL1_4>::load_required_from_filename("libEGL.so.1")
        } {
            Ok(e) => e,
            Err(e) => {
                return fail(format!(
                    "libEGL.so.1 could not be loaded ({e}); install libglvnd's EGL loader \
                     (Debian/Ubuntu: libegl1), or on the GPU machine run \
                     `source crates/rucuda-gl/gpu-setup.sh` first"
                ))
            }
        };
        let client_ext = egl
            .query_string(None, egl::EXTENSIONS)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for needed in ["EGL_EXT_device_enumeration", "EGL_EXT_platform_device"] {
            // EGL_EXT_device_base implies device_enumeration (and device_query).
            let has = client_ext.split_whitespace().any(|e| {
                e == needed
                    || (needed == "EGL_EXT_device_enumeration" && e == "EGL_EXT_device_base")
            });
            if !has {
                return fail(format!(
                    "EGL has no {needed} (client extensions: `{client_ext}`): no EGL vendor \
                     library offers the device platform. NVIDIA's driver ships one: point \
                     __EGL_VENDOR_LIBRARY_FILENAMES at its 10_nvidia.json (gpu-setup.sh does)"
                ));
            }
        }
        let ext = Ext {
            query_devices: proc_address(&egl, "eglQueryDevicesEXT")
                .ok_or_else(|| HeadlessError("no eglQueryDevicesEXT".into()))?,
            query_attrib: proc_address(&egl, "eglQueryDeviceAttribEXT"),
            query_string: proc_address(&egl, "eglQueryDeviceStringEXT"),
            get_platform_display: proc_address(&egl, "eglGetPlatformDisplayEXT")
                .ok_or_else(|| HeadlessError("no eglGetPlatformDisplayEXT".into()))?,
        };

        let mut n: egl::Int = 0;
        // SAFETY: with a null array, writes the device count only.
        if unsafe { (ext.query_devices)(0, std::ptr::null_mut(), &mut n) } == 0 || n <= 0 {
            return fail("eglQueryDevicesEXT found no EGL device");
        }
        let mut devices: Vec<EglDevice> = vec![std::ptr::null_mut(); n as usize];
        // SAFETY: writes at most `n` device handles and the count.
        if unsafe { (ext.query_devices)(n, devices.as_mut_ptr(), &mut n) } == 0 {
            return fail("eglQueryDevicesEXT failed");
        }
        devices.truncate(n.max(0) as usize);

        let cuda_of = |d: EglDevice| -> Option<i64> {
            let has_cuda = ext.query_string.is_some_and(|qs| {
                // SAFETY: `d` is a device handle from eglQueryDevicesEXT.
                let s = unsafe { qs(d, egl::EXTENSIONS) };
                // SAFETY: a non-null result is a NUL-terminated static string.
                !s.is_null()
                    && unsafe { CStr::from_ptr(s) }
                        .to_string_lossy()
                        .split_whitespace()
                        .any(|e| e == "EGL_NV_device_cuda")
            });
            let qa = ext.query_attrib.filter(|_| has_cuda)?;
            let mut v: isize = -1;
            // SAFETY: writes one EGLAttrib for a device that has EGL_NV_device_cuda.
            (unsafe { qa(d, EGL_CUDA_DEVICE_NV, &mut v) } != 0).then_some(v as i64)
        };
        let mut order: Vec<(usize, Option<i64>)> = devices
            .iter()
            .enumerate()
            .map(|(i, d)| (i, cuda_of(*d)))
            .collect();
        if let Some(want) = cuda_device {
            order.sort_by_key(|(i, c)| (*c != Some(i64::from(want)), *i));
        }

        let mut reasons = Vec::new();
        for (index, cuda) in order {
            match Self::try_device(&egl, &ext, devices[index]) {
                Ok((display, context, surface)) => {
                    // SAFETY: the context is current on this thread; eglGetProcAddress
                    // returns GL functions of it (or null).
                    let gl = unsafe {
                        glow::Context::from_loader_function_cstr(|name| {
                            name.to_str()
                                .ok()
                                .and_then(|n| egl.get_proc_address(n))
                                .map_or(std::ptr::null(), |p| p as *const c_void)
                        })
                    };
                    return Ok(HeadlessGl {
                        egl,
                        display,
                        context,
                        surface,
                        gl,
                        egl_device_index: index,
                        cuda_device: cuda,
                        _not_send: PhantomData,
                    });
                }
                Err(e) => reasons.push(format!("EGL device {index}: {e}")),
            }
        }
        fail(format!(
            "no EGL device gave an OpenGL context: {}",
            reasons.join("; ")
        ))
    }

    fn try_device(
        egl: &egl::DynamicInstance<egl::EGL1_4>,
        ext: &Ext,
        device: EglDevice,
    ) -> Result<(egl::Display, egl::Context, Option<egl::Surface>), HeadlessError> {
        let attribs = [egl::NONE];
        // SAFETY: `device` is a handle from eglQueryDevicesEXT, the native display of
        // the device platform; the attribute list is terminated.
        let raw = unsafe {
            (ext.get_platform_display)(EGL_PLATFORM_DEVICE_EXT, device, attribs.as_ptr())
        };
        if raw.is_null() {
            return fail(format!(
                "eglGetPlatformDisplayEXT failed ({:?})",
                egl.get_error()
            ));
        }
        // SAFETY: a display handle EGL just returned.
        let display = unsafe { egl::Display::from_ptr(raw) };
        egl.initialize(display)
            .map_err(|e| HeadlessError(format!("eglInitialize: {e}")))?;
        let rgba = [
            egl::RED_SIZE,
            8,
            egl::GREEN_SIZE,
            8,
            egl::BLUE_SIZE,
            8,
            egl::ALPHA_SIZE,
            8,
        ];
        let mut with_pbuffer = vec![
            egl::SURFACE_TYPE,
            egl::PBUFFER_BIT,
            egl::RENDERABLE_TYPE,
            egl::OPENGL_BIT,
        ];
        with_pbuffer.extend_from_slice(&rgba);
        with_pbuffer.push(egl::NONE);
        let any_surface = [
            egl::SURFACE_TYPE,
            0,
            egl::RENDERABLE_TYPE,
            egl::OPENGL_BIT,
            egl::NONE,
        ];
        let config = match egl.choose_first_config(display, &with_pbuffer) {
            Ok(Some(c)) => c,
            _ => egl
                .choose_first_config(display, &any_surface)
                .map_err(|e| HeadlessError(format!("eglChooseConfig: {e}")))?
                .ok_or_else(|| HeadlessError("no EGL config renders OpenGL".into()))?,
        };
        egl.bind_api(egl::OPENGL_API)
            .map_err(|e| HeadlessError(format!("eglBindAPI(EGL_OPENGL_API): {e}")))?;
        let context = egl
            .create_context(display, config, None, &[egl::NONE])
            .map_err(|e| HeadlessError(format!("eglCreateContext: {e}")))?;
        // Surfaceless first (EGL_KHR_surfaceless_context); a 1x1 pbuffer otherwise.
        if egl.make_current(display, None, None, Some(context)).is_ok() {
            return Ok((display, context, None));
        }
        let surface = egl
            .create_pbuffer_surface(display, config, &[egl::WIDTH, 1, egl::HEIGHT, 1, egl::NONE])
            .map_err(|e| {
                let _ = egl.destroy_context(display, context);
                HeadlessError(format!(
                    "no surfaceless context and eglCreatePbufferSurface: {e}"
                ))
            })?;
        if let Err(e) = egl.make_current(display, Some(surface), Some(surface), Some(context)) {
            let _ = egl.destroy_surface(display, surface);
            let _ = egl.destroy_context(display, context);
            return fail(format!("eglMakeCurrent: {e}"));
        }
        Ok((display, context, Some(surface)))
    }

    /// The GL functions of the context (glow), for drawing and for this crate's
    /// [`GlApi`](crate::GlApi).
    pub fn gl(&self) -> &glow::Context {
        &self.gl
    }

    /// A GL or EGL function's address (`eglGetProcAddress`), null when unknown: a loader
    /// for [`GlFns::load`](crate::GlFns::load) or another GL binding.
    pub fn proc_address(&self, name: &CStr) -> *const c_void {
        name.to_str()
            .ok()
            .and_then(|n| self.egl.get_proc_address(n))
            .map_or(std::ptr::null(), |p| p as *const c_void)
    }

    /// Makes the context current on this thread again (after other EGL/GL code changed
    /// it).
    pub fn make_current(&self) -> Result<(), HeadlessError> {
        self.egl
            .make_current(self.display, self.surface, self.surface, Some(self.context))
            .map_err(|e| HeadlessError(format!("eglMakeCurrent: {e}")))
    }

    /// The index of the EGL device used (in `eglQueryDevicesEXT` order).
    pub fn egl_device_index(&self) -> usize {
        self.egl_device_index
    }

    /// The CUDA device ordinal the EGL device reports (`EGL_NV_device_cuda`), if any.
    pub fn cuda_device(&self) -> Option<i64> {
        self.cuda_device
    }

    /// `GL_VERSION`, `GL_RENDERER` and the devices, in one line.
    pub fn describe(&self) -> String {
        use glow::HasContext;
        // SAFETY: the context is current on this thread (not Send).
        let (version, renderer) = unsafe {
            (
                self.gl.get_parameter_string(glow::VERSION),
                self.gl.get_parameter_string(glow::RENDERER),
            )
        };
        format!(
            "OpenGL {version} on {renderer} (EGL device {}, CUDA device {})",
            self.egl_device_index,
            self.cuda_device
                .map_or_else(|| "unknown".to_string(), |c| c.to_string())
        )
    }
}

impl Drop for HeadlessGl {
    fn drop(&mut self) {
        let _ = self.egl.make_current(self.display, None, None, None);
        if let Some(s) = self.surface.take() {
            let _ = self.egl.destroy_surface(self.display, s);
        }
        let _ = self.egl.destroy_context(self.display, self.context);
    }
}
