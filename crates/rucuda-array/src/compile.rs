//! [`KernelCompiler`]: the one place generated source becomes loaded kernels. The
//! generators only produce CUDA C++ text; whatever implements this trait compiles and
//! loads it. The default is rucuda-jit once it is part of the workspace; until then a
//! compiler must be supplied ([`set_default_compiler`]).

use std::sync::{Arc, RwLock};

use rucuda_driver::{Context, Function, Module};

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
/// /// A compiler that loads PTX produced elsewhere (here: read from a file per source).
/// struct FromPtxFiles;
/// impl KernelCompiler for FromPtxFiles {
///     fn load(&self, ctx: &Context, source: &str, names: &[&str]) -> Result<LoadedKernels> {
///         let ptx = std::fs::read(format!("{}.ptx", source.len())).map_err(|e| {
///             rucuda_array::ArrayError::InvalidArgument(e.to_string())
///         })?;
///         let module = Module::load_data(ctx, &ptx)?;
///         let functions = names.iter().map(|n| module.function(n)).collect::<Result<_, _>>()?;
///         Ok(LoadedKernels { module, functions })
///     }
/// }
/// ```
pub trait KernelCompiler: Send + Sync {
    /// Compiles `source` and loads the kernels `names` in `ctx`.
    fn load(&self, ctx: &Context, source: &str, names: &[&str]) -> Result<LoadedKernels>;
}

/// The compiler used when none is given: reports that no compiler is configured.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCompiler;

impl KernelCompiler for NoCompiler {
    fn load(&self, _ctx: &Context, _source: &str, names: &[&str]) -> Result<LoadedKernels> {
        Err(ArrayError::Compile {
            kernel: names.join(", "),
            message: "no kernel compiler is configured: rucuda-jit is not integrated in this \
                      build yet; install one with rucuda_array::set_default_compiler"
                .into(),
        })
    }
}

static DEFAULT: RwLock<Option<Arc<dyn KernelCompiler>>> = RwLock::new(None);

/// Sets the compiler that generators created afterwards use by default.
pub fn set_default_compiler(compiler: Arc<dyn KernelCompiler>) {
    match DEFAULT.write() {
        Ok(mut g) => *g = Some(compiler),
        Err(poisoned) => *poisoned.into_inner() = Some(compiler),
    }
}

/// The default compiler (see [`set_default_compiler`]).
pub fn default_compiler() -> Arc<dyn KernelCompiler> {
    let current = match DEFAULT.read() {
        Ok(g) => g.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    current.unwrap_or_else(|| Arc::new(NoCompiler))
}
