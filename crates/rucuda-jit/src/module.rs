//! [`SourceModule`]: PyCUDA's `SourceModule` — compile CUDA C++ for a context's device
//! (through the disk cache and the per-context memo) and load it.

use std::sync::Arc;

use rucuda_driver::{Context, DeviceGlobal, Function, Module};

use crate::cache::memo;
use crate::compile::{compile_for, Compiled};
use crate::nvrtc::Nvrtc;
use crate::options::{Arch, Backend, CompileOptions, OutputKind};
use crate::{Error, Result};

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

/// The architecture of `ctx`'s device.
///
/// ```no_run
/// let ctx = rucuda_driver::Device::get(0)?.primary_context()?;
/// println!("{}", rucuda_jit::device_arch(&ctx)?);
/// # Ok::<(), rucuda_jit::Error>(())
/// ```
pub fn device_arch(ctx: &Context) -> Result<Arch> {
    let (major, minor) = ctx.device().compute_capability()?;
    Ok(Arch::new(
        u32::try_from(major).unwrap_or(0),
        u32::try_from(minor).unwrap_or(0),
    ))
}

/// What to compile for on a device of architecture `device`: the options' own arch when
/// given; else the device's. NVRTC asked for a cubin of an architecture it does not know
/// (a device newer than the compiler) gets PTX for the newest architecture it knows below
/// the device's, which the driver compiles when loading.
pub(crate) fn target_for(options: &CompileOptions, device: Arch) -> Result<(Arch, OutputKind)> {
    if let Some(arch) = options.arch {
        return Ok((arch, options.output));
    }
    if options.backend != Backend::Nvrtc || options.output != OutputKind::Cubin {
        return Ok((device, options.output));
    }
    let supported = Nvrtc::get()?.supported_archs()?;
    let number = (device.major * 10 + device.minor) as i32;
    if supported.is_empty() || supported.contains(&number) {
        return Ok((device, OutputKind::Cubin));
    }
    match supported.iter().filter(|&&a| a < number).max() {
        Some(&older) => {
            let older = u32::try_from(older).unwrap_or(0);
            Ok((Arch::new(older / 10, older % 10), OutputKind::Ptx))
        }
        None => Err(Error::Unsupported(format!(
            "the device ({device}) is older than every architecture this NVRTC supports \
             ({supported:?})"
        ))),
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
            if let Some(found) = memo::get(ctx.id(), source, options) {
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
        let (arch, output) = target_for(options, device_arch(ctx)?)?;
        let compiled = if options.output == output {
            compile_for(source, options, arch)?
        } else {
            let mut adjusted = options.clone();
            adjusted.output = output;
            compile_for(source, &adjusted, arch)?
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_arch_wins() {
        let o = CompileOptions::new().arch(Arch::SM_80);
        assert_eq!(
            target_for(&o, Arch::SM_90).unwrap(),
            (Arch::SM_80, OutputKind::Cubin)
        );
        let ptx = CompileOptions::new().output(OutputKind::Ptx);
        assert_eq!(
            target_for(&ptx, Arch::SM_90).unwrap(),
            (Arch::SM_90, OutputKind::Ptx)
        );
        let nvcc = CompileOptions::new().backend(Backend::Nvcc);
        assert_eq!(
            target_for(&nvcc, Arch::new(15, 0)).unwrap(),
            (Arch::new(15, 0), OutputKind::Cubin)
        );
    }

    #[test]
    fn the_device_decides_when_no_arch_is_given() {
        rucuda_testkit::nvrtc_or_skip!();
        // Needs NVRTC (CI installs it): its list of supported architectures.
        let o = CompileOptions::new();
        assert_eq!(
            target_for(&o, Arch::SM_90).unwrap(),
            (Arch::SM_90, OutputKind::Cubin)
        );
        let supported = Nvrtc::get().unwrap().supported_archs().unwrap();
        let newest = *supported.iter().max().unwrap() as u32;
        // A device newer than NVRTC: PTX for the newest architecture NVRTC knows.
        let future = Arch::new(newest / 10 + 5, 0);
        assert_eq!(
            target_for(&o, future).unwrap(),
            (Arch::new(newest / 10, newest % 10), OutputKind::Ptx)
        );
        // Older than anything NVRTC supports: a clear error.
        let err = target_for(&o, Arch::new(3, 0)).unwrap_err();
        assert!(err.to_string().contains("older"), "{err}");
    }
}
