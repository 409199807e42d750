//! [`KernelCompiler`]: the one place generated source becomes loaded kernels. The
//! generators only produce CUDA C++ text; whatever implements this trait compiles and
//! loads it. The default, [`JitCompiler`], compiles with rucuda-jit (NVRTC, disk cache)
//! to a cubin for the context's device.

use std::sync::{Arc, RwLock};

use rucuda_driver::{Context, Function, Module};
use rucuda_jit::{Arch, CompileOptions};

use crate::error::{ArrayError, Result};

/// The kernels of one compiled and loaded source.
#[derive(Debug, Clone)]
pub struct LoadedKernels {
    /// The module (kept alive by the functions too).
    pub module: Module,
    /// The requested kernels, in the order asked for.
    pub functions: Vec<Function>,
}

/// Compiles CUDA C++ source for `ctx`'s device and loads the named `extern "C"` kernels.
///
/// ```no_run
/// use rucuda_array::{KernelCompiler, LoadedKernels, Result};
/// use rucuda_driver::{Context, Module};
/// /// Loads PTX made elsewhere (here: a file named after the source's length).
/// struct FromPtxFiles;
/// // SAFETY: loads PTX that was compiled from exactly the source it is given (the
/// // caller keeps the files in step with the sources).
/// unsafe impl KernelCompiler for FromPtxFiles {
///     fn load(&self, ctx: &Context, source: &str, names: &[&str]) -> Result<LoadedKernels> {
///         let ptx = std::fs::read(format!("{}.ptx", source.len()))
///             .map_err(|e| rucuda_array::ArrayError::InvalidArgument(e.to_string()))?;
///         let module = Module::load_data(ctx, &ptx)?;
///         let functions = names.iter().map(|n| module.function(n)).collect::<Result<_, _>>()?;
///         Ok(LoadedKernels { module, functions })
///     }
/// }
/// ```
///
/// # Safety
/// The library launches what `load` returns as the kernels its generators wrote, with
/// the arguments and bounds those were written for: an implementation must return
/// kernels compiled from exactly `source` (any options that keep its meaning), with the
/// requested names in order. A compiler that returns other code makes safe calls run it.
pub unsafe trait KernelCompiler: Send + Sync {
    /// Compiles `source` and loads the kernels `names` in `ctx`.
    fn load(&self, ctx: &Context, source: &str, names: &[&str]) -> Result<LoadedKernels>;
}

/// Compiles with rucuda-jit (NVRTC by default, through its disk cache) to a cubin for the
/// architecture of the context's device, and loads it.
///
/// ```no_run
/// use rucuda_array::{JitCompiler, KernelCompiler};
/// let ctx = rucuda_driver::Device::get(0)?.primary_context()?;
/// let k = JitCompiler::new().load(&ctx, "extern \"C\" __global__ void nop() {}", &["nop"])?;
/// assert_eq!(k.functions[0].name(), "nop");
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
#[derive(Debug, Clone)]
pub struct JitCompiler {
    options: CompileOptions,
}

impl Default for JitCompiler {
    fn default() -> Self {
        JitCompiler::new()
    }
}

impl JitCompiler {
    /// rucuda-jit's default options; generated sources declare `extern "C"` themselves.
    pub fn new() -> JitCompiler {
        JitCompiler {
            options: CompileOptions::new().no_extern_c(true),
        }
    }

    /// Other options (the architecture is still taken from the device).
    pub fn with_options(options: CompileOptions) -> JitCompiler {
        JitCompiler { options }
    }

    /// Compiles without loading, for a given architecture (needs no GPU: what CI uses to
    /// check every generated kernel).
    pub fn compile_for(&self, source: &str, arch: Arch) -> Result<rucuda_jit::Compiled> {
        Ok(rucuda_jit::compile(
            source,
            &self.options.clone().arch(arch),
        )?)
    }
}

// SAFETY: compiles exactly `source` with rucuda-jit and loads the named kernels.
unsafe impl KernelCompiler for JitCompiler {
    fn load(&self, ctx: &Context, source: &str, names: &[&str]) -> Result<LoadedKernels> {
        let (major, minor) = ctx.device().compute_capability()?;
        let arch = Arch::new(major.max(0) as u32, minor.max(0) as u32);
        let compiled = self.compile_for(source, arch)?;
        let module = Module::load_data(ctx, &compiled.image)?;
        let functions = names
            .iter()
            .map(|n| module.function(n))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LoadedKernels { module, functions })
    }
}

/// Compiles `source` with `compiler` and loads its kernels `names`: all of them, in
/// order, or an error. Every rucuda-array kernel is loaded here, and their calls
/// allocate stream-ordered, so the context's pool keeps freed memory from the first load
/// on ([`crate::pool`]).
pub(crate) fn load_kernel_list(
    compiler: &dyn KernelCompiler,
    ctx: &Context,
    source: &str,
    names: &[&str],
) -> Result<Vec<Function>> {
    let functions = compiler.load(ctx, source, names)?.functions;
    if functions.len() != names.len() {
        return Err(ArrayError::Compile {
            kernel: names.join(", "),
            message: format!(
                "the compiler returned {} kernels, not the {} asked for",
                functions.len(),
                names.len()
            ),
        });
    }
    crate::pool::retain_freed_memory(ctx);
    Ok(functions)
}

/// [`load_kernel_list`] for a fixed number of kernels.
pub(crate) fn load_kernels<const N: usize>(
    compiler: &dyn KernelCompiler,
    ctx: &Context,
    source: &str,
    names: [&str; N],
) -> Result<[Function; N]> {
    let functions = load_kernel_list(compiler, ctx, source, &names)?;
    <[Function; N]>::try_from(functions).map_err(|_| ArrayError::Compile {
        kernel: names.join(", "),
        message: format!("the compiler returned other than the {N} kernels asked for"),
    })
}

static DEFAULT: RwLock<Option<Arc<dyn KernelCompiler>>> = RwLock::new(None);

/// Sets the compiler that generators created afterwards use by default.
pub fn set_default_compiler(compiler: Arc<dyn KernelCompiler>) {
    match DEFAULT.write() {
        Ok(mut g) => *g = Some(compiler),
        Err(poisoned) => *poisoned.into_inner() = Some(compiler),
    }
}

/// The default compiler: the one given to [`set_default_compiler`], else a
/// [`JitCompiler`] with default options.
pub fn default_compiler() -> Arc<dyn KernelCompiler> {
    let current = match DEFAULT.read() {
        Ok(g) => g.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    current.unwrap_or_else(|| Arc::new(JitCompiler::new()))
}
