//! [`SourceModule`]: PyCUDA's `SourceModule` — compile CUDA C++ for a context's device
//! (through the disk cache and the per-context memo) and load it.

use std::sync::Arc;

use rucuda_driver::{Context, DeviceGlobal, Function, Module};

use crate::compile::{compile_for_device, Compiled};
use crate::error::{Error, Result};
use crate::memo;
use crate::options::CompileOptions;
use crate::target::device_arch;

/// A compiled and loaded module: PyCUDA's `SourceModule`.
///
/// By default the source is compiled by NVRTC to a cubin for the context's device and
/// wrapped in `extern "C"`, so kernels are found by their plain names; C++ templates are
/// found by their C++ name when it was given as a name expression.
///
/// [`SourceModule::new`] and [`SourceModule::for_context`] are memoized per context:
/// the same source and options on the same context return the same `Arc` at once.
///
/// ```no_run
/// use rucuda_driver::{Device, DeviceBuffer, LaunchConfig, Stream};
/// use rucuda_jit::{CompileOptions, SourceModule};
/// let ctx = Device::get(0)?.primary_context()?;
/// let module = SourceModule::for_context(&ctx, r#"
///     __global__ void twice(float *x, int n) {
///         int i = blockIdx.x * blockDim.x + threadIdx.x;
///         if (i < n) x[i] *= 2.0f;
///     }"#, &CompileOptions::new())?;
/// let twice = module.function("twice")?;
/// let mut x = DeviceBuffer::from_slice(&ctx, &[1.0f32, 2.0, 3.0])?;
/// // SAFETY: twice(float *x, int n) touches x[0..n).
/// unsafe { twice.launch(LaunchConfig::for_elements(3, 128), &Stream::null(&ctx), (&mut x, 3i32))? };
/// assert_eq!(x.to_vec()?, [2.0, 4.0, 6.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SourceModule {
    module: Module,
    compiled: Compiled,
}

impl std::fmt::Debug for SourceModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceModule")
            .field("module", &self.module)
            .field("arch", &self.compiled.arch)
            .field("output", &self.compiled.output)
            .field("cache", &self.compiled.cache)
            .finish_non_exhaustive()
    }
}

impl SourceModule {
    /// Compiles and loads `source` for the current context (PyCUDA's
    /// `SourceModule(source, ...)`), memoized per context.
    pub fn new(source: &str, options: &CompileOptions) -> Result<Arc<SourceModule>> {
        let ctx = Context::current()?.ok_or(Error::NoContext)?;
        SourceModule::for_context(&ctx, source, options)
    }

    /// Compiles and loads `source` for `ctx`, memoized per context: the same source and
    /// options on the same context return the same module.
    pub fn for_context(
        ctx: &Context,
        source: &str,
        options: &CompileOptions,
    ) -> Result<Arc<SourceModule>> {
        if !options.keep {
            if let Some(found) = memo::get::<SourceModule>(ctx.id(), source, options) {
                return Ok(found);
            }
        }
        let loaded = Arc::new(SourceModule::load(ctx, source, options)?);
        if options.keep {
            return Ok(loaded);
        }
        Ok(memo::insert(ctx.id(), source, options, loaded))
    }

    /// Compiles (through the disk cache) and loads `source` for `ctx`, bypassing the
    /// memo: a new module every call.
    pub fn load(ctx: &Context, source: &str, options: &CompileOptions) -> Result<SourceModule> {
        let compiled = compile_for_device(source, options, device_arch(ctx)?)?;
        let module = Module::load_data(ctx, &compiled.image)?;
        Ok(SourceModule { module, compiled })
    }

    /// A kernel by name (PyCUDA's `get_function`): a name expression given in the options
    /// (`"scale<float>"`) is looked up by its lowered name; any other name as it is.
    pub fn function(&self, name: &str) -> Result<Function> {
        let lowered = self.compiled.lowered_name(name).unwrap_or(name);
        Ok(self.module.function(lowered)?)
    }

    /// A `__device__` or `__constant__` variable by name (PyCUDA's `get_global`); name
    /// expressions (`"&table<int>"`) are lowered as for [`function`](Self::function).
    pub fn global(&self, name: &str) -> Result<DeviceGlobal> {
        let lowered = self.compiled.lowered_name(name).unwrap_or(name);
        Ok(self.module.global(lowered)?)
    }

    /// The lowered (mangled) name of a name expression given in the options.
    pub fn lowered_name(&self, expression: &str) -> Option<&str> {
        self.compiled.lowered_name(expression)
    }

    /// The loaded driver module.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The module's context.
    pub fn context(&self) -> &Context {
        self.module.context()
    }

    /// What was compiled: the image, its kind and architecture, the log, the cache status.
    pub fn compiled(&self) -> &Compiled {
        &self.compiled
    }
}
