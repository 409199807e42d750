//! Modules: loaded PTX, cubin or fatbin images; their kernels and device globals.

use std::ffi::{c_void, CString};
use std::path::Path;
use std::sync::Arc;

use rucuda_driver_sys::{CUdeviceptr, CUfunction, CUjit_option, CUmodule};

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::kernels::function::Function;
use crate::kernels::global::DeviceGlobal;
use crate::kernels::loaded::ModuleInner;

/// A loaded module, cheap to clone; unloaded when the last clone and kernel are gone.
///
/// ```no_run
/// use rucuda_driver::{Device, Module};
/// let ctx = Device::get(0)?.primary_context()?;
/// let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry noop() { ret; }\n";
/// let module = Module::load_data(&ctx, ptx.as_bytes())?;
/// let noop = module.function("noop")?;
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
#[derive(Clone)]
pub struct Module {
    pub(crate) inner: Arc<ModuleInner>,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("raw", &self.inner.raw)
            .finish()
    }
}

/// What the driver's JIT said while loading PTX.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JitLog {
    /// Informational output (`CU_JIT_INFO_LOG_BUFFER`).
    pub info: String,
    /// Error output (`CU_JIT_ERROR_LOG_BUFFER`).
    pub error: String,
}

/// Options for [`Module::load_data_with_options`] (PyCUDA's `jit_option`s that take values).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JitOptions {
    /// `CU_JIT_MAX_REGISTERS`.
    pub max_registers: Option<u32>,
    /// `CU_JIT_OPTIMIZATION_LEVEL` (0..=4).
    pub optimization_level: Option<u32>,
    /// `CU_JIT_GENERATE_DEBUG_INFO`.
    pub generate_debug_info: bool,
    /// `CU_JIT_GENERATE_LINE_INFO`.
    pub generate_line_info: bool,
    /// `CU_JIT_LOG_VERBOSE`.
    pub log_verbose: bool,
}

const LOG_BYTES: usize = 16 * 1024;

impl JitOptions {
    /// Checks the values the driver would refuse (an optimization level above 4).
    ///
    /// ```
    /// use rucuda_driver::JitOptions;
    /// assert!(JitOptions { optimization_level: Some(4), ..Default::default() }.validate().is_ok());
    /// assert!(JitOptions { optimization_level: Some(5), ..Default::default() }.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<()> {
        match self.optimization_level {
            Some(level) if level > 4 => Err(Error::invalid(format!(
                "JIT optimization level {level} is out of range 0..=4"
            ))),
            _ => Ok(()),
        }
    }

    /// The checked `(option, value)` pairs `cuModuleLoadDataEx` gets besides the log
    /// buffers, in a fixed order, each option at most once.
    pub(crate) fn raw_options(&self) -> Result<Vec<(CUjit_option, usize)>> {
        self.validate()?;
        let mut out = Vec::with_capacity(5);
        if let Some(r) = self.max_registers {
            out.push((CUjit_option::CU_JIT_MAX_REGISTERS, r as usize));
        }
        if let Some(o) = self.optimization_level {
            out.push((CUjit_option::CU_JIT_OPTIMIZATION_LEVEL, o as usize));
        }
        if self.generate_debug_info {
            out.push((CUjit_option::CU_JIT_GENERATE_DEBUG_INFO, 1));
        }
        if self.generate_line_info {
            out.push((CUjit_option::CU_JIT_GENERATE_LINE_INFO, 1));
        }
        if self.log_verbose {
            out.push((CUjit_option::CU_JIT_LOG_VERBOSE, 1));
        }
        Ok(out)
    }
}

fn nul_terminated(image: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    // PTX is text and must end in NUL; cubin/fatbin are ELF/fatbin containers that carry
    // their size, so the extra byte is harmless.
    if image.last() == Some(&0) {
        std::borrow::Cow::Borrowed(image)
    } else {
        let mut v = Vec::with_capacity(image.len() + 1);
        v.extend_from_slice(image);
        v.push(0);
        std::borrow::Cow::Owned(v)
    }
}

impl Module {
    /// Loads PTX text, a cubin or a fatbin (PyCUDA's `module_from_buffer`).
    pub fn load_data(ctx: &Context, image: &[u8]) -> Result<Module> {
        Ok(Self::load_data_with_options(ctx, image, &JitOptions::default())?.0)
    }

    /// Loads an image with JIT options; returns the JIT's logs with the module. On a JIT
    /// failure the error message carries the error log.
    pub fn load_data_with_options(
        ctx: &Context,
        image: &[u8],
        opts: &JitOptions,
    ) -> Result<(Module, JitLog)> {
        let extra = opts.raw_options()?;
        let image = nul_terminated(image);
        ctx.bind_verified()?;
        let mut info = vec![0u8; LOG_BYTES];
        let mut error = vec![0u8; LOG_BYTES];
        let mut keys: Vec<CUjit_option> = vec![
            CUjit_option::CU_JIT_INFO_LOG_BUFFER,
            CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values: Vec<*mut c_void> = vec![
            info.as_mut_ptr().cast(),
            LOG_BYTES as *mut c_void,
            error.as_mut_ptr().cast(),
            LOG_BYTES as *mut c_void,
        ];
        for (k, v) in extra {
            keys.push(k);
            values.push(v as *mut c_void);
        }
        let mut raw: CUmodule = std::ptr::null_mut();
        // A kernel first used inside a capture loads its module there: the load queues
        // no work, but the capture's thread-local mode would refuse it (and invalidate
        // itself), so it runs with the mode relaxed.
        let r = crate::memory::tracking::capture::with_relaxed_mode(|| {
            // SAFETY: the image is NUL-terminated or self-describing; the option arrays
            // have equal lengths; log buffers outlive the call and their sizes are given.
            unsafe {
                call!(cuModuleLoadDataEx(
                    &mut raw,
                    image.as_ptr().cast(),
                    keys.len() as u32,
                    keys.as_mut_ptr(),
                    values.as_mut_ptr()
                ))
            }
        });
        let log = JitLog {
            info: c_string_lossy(&info),
            error: c_string_lossy(&error),
        };
        match r {
            Ok(()) => Ok((Module::wrap(ctx, raw), log)),
            Err(Error::Driver(mut d)) if !log.error.is_empty() => {
                d.message = format!("{}; JIT log: {}", d.message, log.error.trim()).into();
                Err(Error::Driver(d))
            }
            Err(e) => Err(e),
        }
    }

    /// Loads a module file (`.ptx`, `.cubin`, `.fatbin`) (PyCUDA's `module_from_file`).
    pub fn from_file(ctx: &Context, path: impl AsRef<Path>) -> Result<Module> {
        let path = path.as_ref();
        let data = std::fs::read(path)
            .map_err(|e| Error::invalid(format!("cannot read {}: {e}", path.display())))?;
        Self::load_data(ctx, &data)
    }

    /// Wraps a module loaded elsewhere (for example by a linker).
    ///
    /// # Safety
    /// `raw` must be a loaded module of `ctx`, owned by nobody else: it is unloaded on drop.
    pub unsafe fn from_raw(ctx: &Context, raw: CUmodule) -> Module {
        Module::wrap(ctx, raw)
    }

    fn wrap(ctx: &Context, raw: CUmodule) -> Module {
        Module {
            inner: Arc::new(ModuleInner {
                raw,
                ctx: ctx.clone(),
                globals: crate::memory::tracking::UseLog::new(),
            }),
        }
    }

    /// The raw handle.
    pub fn raw(&self) -> CUmodule {
        self.inner.raw
    }

    /// The module's context.
    pub fn context(&self) -> &Context {
        &self.inner.ctx
    }

    /// A kernel by its (mangled or `extern "C"`) name (PyCUDA's `get_function`).
    pub fn function(&self, name: &str) -> Result<Function> {
        let c = CString::new(name).map_err(|_| Error::invalid("kernel name contains NUL"))?;
        self.inner.ctx.bind()?;
        let mut raw: CUfunction = std::ptr::null_mut();
        // SAFETY: writes one CUfunction; the module is alive.
        unsafe { call!(cuModuleGetFunction(&mut raw, self.inner.raw, c.as_ptr())) }.map_err(
            |e| match e {
                Error::Driver(d) if d.code == rucuda_driver_sys::CUresult::CUDA_ERROR_NOT_FOUND => {
                    Error::invalid(format!("the module has no kernel named `{name}`"))
                }
                e => e,
            },
        )?;
        Ok(Function::new(self.inner.clone(), raw, name.to_string()))
    }

    /// A device global by name: its address and size (PyCUDA's `get_global`), a device
    /// region that copies read and write through the use tracking (see [`DeviceGlobal`]).
    pub fn global(&self, name: &str) -> Result<DeviceGlobal> {
        let c = CString::new(name).map_err(|_| Error::invalid("global name contains NUL"))?;
        self.inner.ctx.bind()?;
        let (mut ptr, mut bytes) = (0 as CUdeviceptr, 0usize);
        // SAFETY: writes an address and a size; the module is alive.
        unsafe {
            call!(cuModuleGetGlobal_v2(
                &mut ptr,
                &mut bytes,
                self.inner.raw,
                c.as_ptr()
            ))
        }
        .map_err(|e| match e {
            Error::Driver(d) if d.code == rucuda_driver_sys::CUresult::CUDA_ERROR_NOT_FOUND => {
                Error::invalid(format!("the module has no global named `{name}`"))
            }
            e => e,
        })?;
        Ok(DeviceGlobal::new(ptr, bytes, self.clone(), name))
    }
}

fn c_string_lossy(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}
