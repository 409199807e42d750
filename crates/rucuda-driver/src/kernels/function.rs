//! Kernels: attributes, cache configuration, and what a launch is checked against.

use std::ffi::c_int;
use std::sync::{Arc, OnceLock};

use rucuda_driver_sys::{CUfunction, CUfunction_attribute, CUresult};

use crate::context::CacheConfig;
use crate::device::attribute::DeviceAttribute;
use crate::error::{call, Error, Result};
use crate::kernels::loaded::ModuleInner;

/// A kernel attribute (PyCUDA's `function_attribute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FunctionAttribute {
    /// Largest block this kernel can be launched with.
    MaxThreadsPerBlock,
    /// Static shared memory, bytes.
    SharedSizeBytes,
    /// Constant memory, bytes.
    ConstSizeBytes,
    /// Local memory per thread, bytes.
    LocalSizeBytes,
    /// Registers per thread.
    NumRegs,
    /// PTX version (major*10 + minor).
    PtxVersion,
    /// Binary (SASS) version (major*10 + minor).
    BinaryVersion,
    /// Whether compiled with `-Xptxas --dlcm=ca`.
    CacheModeCa,
    /// Largest dynamic shared memory a launch may ask for (settable).
    MaxDynamicSharedSizeBytes,
    /// Preferred shared-memory carveout in percent (settable).
    PreferredSharedMemoryCarveout,
}

impl FunctionAttribute {
    fn raw(self) -> CUfunction_attribute {
        CUfunction_attribute(match self {
            FunctionAttribute::MaxThreadsPerBlock => 0,
            FunctionAttribute::SharedSizeBytes => 1,
            FunctionAttribute::ConstSizeBytes => 2,
            FunctionAttribute::LocalSizeBytes => 3,
            FunctionAttribute::NumRegs => 4,
            FunctionAttribute::PtxVersion => 5,
            FunctionAttribute::BinaryVersion => 6,
            FunctionAttribute::CacheModeCa => 7,
            FunctionAttribute::MaxDynamicSharedSizeBytes => 8,
            FunctionAttribute::PreferredSharedMemoryCarveout => 9,
        })
    }
}

/// What launches of one kernel are checked against, read once.
#[derive(Debug, Clone)]
pub(crate) struct LaunchLimits {
    /// Sizes of the kernel's parameters in bytes, when the driver can tell.
    pub(crate) param_sizes: Option<Vec<usize>>,
    /// `(offset, size)` in bytes of each parameter in the kernel's parameter buffer (as
    /// `param_sizes`).
    pub(crate) param_layout: Option<Vec<(usize, usize)>>,
    pub(crate) max_threads_per_block: u32,
    pub(crate) max_block: [u32; 3],
    pub(crate) max_grid: [u32; 3],
    pub(crate) static_shared: u32,
    pub(crate) max_dynamic_shared: u32,
    /// Whether launches may overlap the previous kernel on their stream (programmatic
    /// dependent launch): compute capability 9.0 or newer and a driver with
    /// `cuLaunchKernelEx`.
    pub(crate) programmatic: bool,
}

pub(crate) struct FunctionInner {
    pub(crate) raw: CUfunction,
    pub(crate) module: Arc<ModuleInner>,
    pub(crate) name: String,
    pub(crate) limits: OnceLock<LaunchLimits>,
}

// SAFETY: a CUfunction may be used from any thread of its context's process.
unsafe impl Send for FunctionInner {}
// SAFETY: as above; the OnceLock is thread-safe.
unsafe impl Sync for FunctionInner {}

/// A kernel of a loaded [`crate::Module`], cheap to clone; keeps its module loaded.
#[derive(Clone)]
pub struct Function {
    pub(crate) inner: Arc<FunctionInner>,
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function")
            .field("name", &self.inner.name)
            .finish()
    }
}

impl Function {
    pub(crate) fn new(module: Arc<ModuleInner>, raw: CUfunction, name: String) -> Function {
        Function {
            inner: Arc::new(FunctionInner {
                raw,
                module,
                name,
                limits: OnceLock::new(),
            }),
        }
    }

    /// The raw handle.
    pub fn raw(&self) -> CUfunction {
        self.inner.raw
    }

    /// The name it was looked up by.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The context of its module.
    pub fn context(&self) -> &crate::context::Context {
        &self.inner.module.ctx
    }

    /// One attribute (PyCUDA's `get_attribute`).
    pub fn attribute(&self, attr: FunctionAttribute) -> Result<i32> {
        self.context().bind()?;
        let mut v: c_int = 0;
        // SAFETY: writes one int; the function is alive.
        unsafe { call!(cuFuncGetAttribute(&mut v, attr.raw(), self.inner.raw))? };
        Ok(v)
    }

    /// Sets a settable attribute (PyCUDA's `set_attribute`): `MaxDynamicSharedSizeBytes`
    /// or `PreferredSharedMemoryCarveout`.
    pub fn set_attribute(&self, attr: FunctionAttribute, value: i32) -> Result<()> {
        self.context().bind()?;
        // SAFETY: plain values; the function is alive.
        unsafe { call!(cuFuncSetAttribute(self.inner.raw, attr.raw(), value)) }
    }

    /// Lets launches ask for up to `bytes` of dynamic shared memory (above the default 48 KiB).
    pub fn set_max_dynamic_shared_memory(&self, bytes: u32) -> Result<()> {
        self.set_attribute(FunctionAttribute::MaxDynamicSharedSizeBytes, bytes as i32)
    }

    /// Sets this kernel's preferred L1/shared split (PyCUDA's `set_cache_config`).
    pub fn set_cache_config(&self, config: CacheConfig) -> Result<()> {
        self.context().bind()?;
        // SAFETY: plain value; the function is alive.
        unsafe { call!(cuFuncSetCacheConfig(self.inner.raw, config.raw())) }
    }

    /// The sizes in bytes of the kernel's parameters, when the driver can tell
    /// (`cuFuncGetParamInfo`, CUDA 12.4 and later).
    pub fn param_sizes(&self) -> Result<Option<Vec<usize>>> {
        Ok(self.limits()?.param_sizes.clone())
    }

    /// `(offset, size)` in bytes of each of the kernel's parameters in its parameter
    /// buffer, when the driver can tell (`cuFuncGetParamInfo`, CUDA 12.4 and later):
    /// where a packed argument buffer (PyCUDA's struct format) holds each argument.
    pub fn param_layout(&self) -> Result<Option<&[(usize, usize)]>> {
        Ok(self.limits()?.param_layout.as_deref())
    }

    pub(crate) fn limits(&self) -> Result<&LaunchLimits> {
        if let Some(l) = self.inner.limits.get() {
            return Ok(l);
        }
        let l = self.read_limits()?;
        Ok(self.inner.limits.get_or_init(|| l))
    }

    fn read_limits(&self) -> Result<LaunchLimits> {
        let dev = self.context().device();
        let a = |x| dev.attribute(x).map(|v| v.max(0) as u32);
        let layout = self.read_param_layout()?;
        Ok(LaunchLimits {
            param_sizes: layout
                .as_ref()
                .map(|l| l.iter().map(|&(_, size)| size).collect()),
            param_layout: layout,
            max_threads_per_block: self
                .attribute(FunctionAttribute::MaxThreadsPerBlock)?
                .max(0) as u32,
            max_block: [
                a(DeviceAttribute::MaxBlockDimX)?,
                a(DeviceAttribute::MaxBlockDimY)?,
                a(DeviceAttribute::MaxBlockDimZ)?,
            ],
            max_grid: [
                a(DeviceAttribute::MaxGridDimX)?,
                a(DeviceAttribute::MaxGridDimY)?,
                a(DeviceAttribute::MaxGridDimZ)?,
            ],
            static_shared: self.attribute(FunctionAttribute::SharedSizeBytes)?.max(0) as u32,
            max_dynamic_shared: self
                .attribute(FunctionAttribute::MaxDynamicSharedSizeBytes)?
                .max(0) as u32,
            programmatic: dev.compute_capability()?.0 >= 9
                && crate::error::driver()?.cuLaunchKernelEx().is_ok(),
        })
    }

    /// `(offset, size)` of each parameter, when the driver can tell.
    fn read_param_layout(&self) -> Result<Option<Vec<(usize, usize)>>> {
        let Ok(f) = crate::error::driver()?.cuFuncGetParamInfo() else {
            return Ok(None);
        };
        let mut sizes = Vec::new();
        loop {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: writes two size_t; an index past the last parameter returns
            // CUDA_ERROR_INVALID_VALUE, which ends the loop.
            match unsafe { f(self.inner.raw, sizes.len(), &mut offset, &mut size) } {
                CUresult::CUDA_SUCCESS => sizes.push((offset, size)),
                CUresult::CUDA_ERROR_INVALID_VALUE => return Ok(Some(sizes)),
                CUresult::CUDA_ERROR_NOT_SUPPORTED => return Ok(None),
                code => {
                    crate::error::check(code, "cuFuncGetParamInfo")?;
                }
            }
            if sizes.len() > 4096 {
                return Err(Error::invalid(
                    "cuFuncGetParamInfo reported over 4096 parameters",
                ));
            }
        }
    }
}
