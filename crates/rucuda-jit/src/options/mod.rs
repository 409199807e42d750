//! What to compile and how: [`CompileOptions`] (PyCUDA's `SourceModule` arguments and a
//! few typed switches) and the [`Backend`] that compiles. `args` checks the options and
//! turns them into the option strings each backend gets; `defaults` reads the cache's
//! folder and size cap from the environment.

use std::fmt;
use std::path::PathBuf;

use crate::arch::Arch;
use crate::output::OutputKind;

mod args;
pub(crate) mod defaults;

/// Which compiler turns CUDA C++ into device code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// NVRTC, loaded in-process at run time (no toolkit needed). The default.
    #[default]
    Nvrtc,
    /// `nvcc`, run as a subprocess (needs the CUDA toolkit and a host C++ compiler).
    Nvcc,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Nvrtc => "nvrtc",
            Backend::Nvcc => "nvcc",
        })
    }
}

/// How to compile: PyCUDA's `SourceModule`/`compile` arguments plus typed switches.
///
/// Build it with the chained setters; every field is public too.
///
/// ```
/// use rucuda_jit::{Arch, CompileOptions, OutputKind};
/// let opts = CompileOptions::new()
///     .arch(Arch::SM_90)
///     .define("N", "256")
///     .fast_math(true)
///     .option("--extra-device-vectorization");
/// assert_eq!(
///     opts.nvrtc_args(Arch::SM_90)?,
///     ["--gpu-architecture=sm_90", "-DN=256", "--use_fast_math", "--extra-device-vectorization"]
/// );
/// let ptx = CompileOptions::new().output(OutputKind::Ptx);
/// assert_eq!(ptx.nvrtc_args(Arch::SM_80)?, ["--gpu-architecture=compute_80"]);
/// # Ok::<(), rucuda_jit::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// NVRTC (default) or nvcc.
    pub backend: Backend,
    /// What to produce; a cubin by default.
    pub output: OutputKind,
    /// The target architecture. `None`: the current device's (see
    /// [`SourceModule`](crate::SourceModule)); [`compile`](crate::compile) then needs one.
    pub arch: Option<Arch>,
    /// nvcc's `-code` (PyCUDA's `code`), e.g. `"sm_90,compute_90"` for a fatbin.
    pub code: Option<String>,
    /// Extra compiler options, passed on verbatim after ours (PyCUDA's `options`).
    pub options: Vec<String>,
    /// Header folders (`-I`), searched in order.
    pub include_dirs: Vec<PathBuf>,
    /// Preprocessor definitions, `-DNAME` or `-DNAME=VALUE`.
    pub defines: Vec<(String, Option<String>)>,
    /// Leave the source as it is; by default it is wrapped in `extern "C" { ... }` so
    /// kernels keep their plain names.
    pub no_extern_c: bool,
    /// C++ name expressions (`"my_kernel<float, 4>"`) whose lowered names NVRTC reports,
    /// so templated kernels are found by their C++ name. NVRTC only.
    pub name_expressions: Vec<String>,
    /// Keep the compiler's files (source, options, log, output) in a folder, printed on
    /// stderr and returned in [`Compiled::kept`](crate::Compiled::kept). Skips the cache.
    pub keep: bool,
    /// The disk cache folder; `None` turns the cache off. Default: `RUCUDA_CACHE_DIR`,
    /// else the user cache folder's `rucuda` (`~/.cache/rucuda`); `None` when
    /// `RUCUDA_DISABLE_CACHE` is set.
    pub cache_dir: Option<PathBuf>,
    /// The cache's size cap in bytes: least recently used entries are removed past it.
    /// Default 1 GiB, or `RUCUDA_CACHE_MAX_SIZE` (bytes, or with a K, M or G suffix).
    pub cache_max_bytes: u64,
    /// The nvcc to run; default: `CUDA_PATH`/`CUDA_HOME` `bin/nvcc`, then `PATH`, then
    /// `/usr/local/cuda/bin/nvcc`.
    pub nvcc: Option<PathBuf>,
    /// `--use_fast_math`.
    pub fast_math: bool,
    /// Device debug information (`-G`).
    pub debug: bool,
    /// Line information for profilers (`-lineinfo`).
    pub line_info: bool,
    /// Relocatable device code (`-rdc=true`): needed to link modules together and for
    /// dynamic parallelism.
    pub relocatable: bool,
    /// The C++ dialect, e.g. `"c++17"` (`--std=`).
    pub std: Option<String>,
    /// `--maxrregcount`.
    pub max_registers: Option<u32>,
    /// The source's file name in messages and for nvcc: `kernel.cu`.
    pub program_name: String,
    /// NVRTC only: add the CUDA headers' folder (the `include` folder beside the loaded
    /// NVRTC, else that of `CUDA_PATH`, `CUDA_HOME` or `/usr/local/cuda`, the first that
    /// has `cuda_fp16.h`) as the last include path, so `<cuda_fp16.h>`,
    /// `<cuda_runtime.h>` and friends resolve as they do for nvcc. On by default.
    pub toolkit_include: bool,
    /// NVRTC only: serve rucuda's small built-in C and C++ standard headers
    /// (`<stdio.h>`, `<cstdint>`, `<climits>`, `<cfloat>`, `<cmath>`, `<cstddef>`,
    /// `<assert.h>` and their other forms, see [`std_headers`](crate::std_headers)) to a
    /// source that includes them and has no file of that name in its include folders.
    /// On by default.
    pub std_headers: bool,
    /// NVRTC only: when NVRTC cannot open a header (a host header such as `<vector>`
    /// that no include folder has and rucuda does not serve), compile with nvcc instead,
    /// where nvcc is installed ([`Compiled::compiler`](crate::Compiled::compiler) says
    /// which compiled). Without nvcc, NVRTC's error is returned with a note saying so.
    /// On by default; not done for name expressions, which need NVRTC.
    pub nvcc_fallback: bool,
}

impl Default for CompileOptions {
    fn default() -> CompileOptions {
        CompileOptions {
            backend: Backend::Nvrtc,
            output: OutputKind::Cubin,
            arch: None,
            code: None,
            options: Vec::new(),
            include_dirs: Vec::new(),
            defines: Vec::new(),
            no_extern_c: false,
            name_expressions: Vec::new(),
            keep: false,
            cache_dir: defaults::default_cache_dir(),
            cache_max_bytes: defaults::default_max_bytes(),
            nvcc: None,
            fast_math: false,
            debug: false,
            line_info: false,
            relocatable: false,
            std: None,
            max_registers: None,
            program_name: "kernel.cu".into(),
            toolkit_include: true,
            std_headers: true,
            nvcc_fallback: true,
        }
    }
}

impl CompileOptions {
    /// The defaults: NVRTC, a cubin for the current device, the default cache.
    pub fn new() -> CompileOptions {
        CompileOptions::default()
    }

    /// Sets [`backend`](Self::backend).
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// Sets [`output`](Self::output).
    pub fn output(mut self, output: OutputKind) -> Self {
        self.output = output;
        self
    }

    /// Sets [`arch`](Self::arch).
    pub fn arch(mut self, arch: Arch) -> Self {
        self.arch = Some(arch);
        self
    }

    /// Sets [`code`](Self::code) (nvcc only).
    pub fn code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// Appends one raw compiler option.
    pub fn option(mut self, option: impl Into<String>) -> Self {
        self.options.push(option.into());
        self
    }

    /// Appends raw compiler options.
    pub fn options<I, S>(mut self, options: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options.extend(options.into_iter().map(Into::into));
        self
    }

    /// Appends a header folder.
    pub fn include_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.include_dirs.push(dir.into());
        self
    }

    /// Adds `-DNAME=VALUE`.
    pub fn define(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.defines.push((name.into(), Some(value.into())));
        self
    }

    /// Adds `-DNAME`.
    pub fn define_flag(mut self, name: impl Into<String>) -> Self {
        self.defines.push((name.into(), None));
        self
    }

    /// Sets [`no_extern_c`](Self::no_extern_c).
    pub fn no_extern_c(mut self, no_extern_c: bool) -> Self {
        self.no_extern_c = no_extern_c;
        self
    }

    /// Adds a C++ name expression (NVRTC only), e.g. `"axpy<float>"`.
    pub fn name_expression(mut self, expression: impl Into<String>) -> Self {
        self.name_expressions.push(expression.into());
        self
    }

    /// Sets [`keep`](Self::keep).
    pub fn keep(mut self, keep: bool) -> Self {
        self.keep = keep;
        self
    }

    /// Sets [`cache_dir`](Self::cache_dir): `None` turns the cache off.
    pub fn cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.cache_dir = dir;
        self
    }

    /// Sets [`cache_max_bytes`](Self::cache_max_bytes).
    pub fn cache_max_bytes(mut self, bytes: u64) -> Self {
        self.cache_max_bytes = bytes;
        self
    }

    /// Sets [`nvcc`](Self::nvcc) and picks the nvcc backend.
    pub fn nvcc(mut self, path: impl Into<PathBuf>) -> Self {
        self.nvcc = Some(path.into());
        self.backend = Backend::Nvcc;
        self
    }

    /// Sets [`fast_math`](Self::fast_math).
    pub fn fast_math(mut self, on: bool) -> Self {
        self.fast_math = on;
        self
    }

    /// Sets [`debug`](Self::debug).
    pub fn debug(mut self, on: bool) -> Self {
        self.debug = on;
        self
    }

    /// Sets [`line_info`](Self::line_info).
    pub fn line_info(mut self, on: bool) -> Self {
        self.line_info = on;
        self
    }

    /// Sets [`relocatable`](Self::relocatable).
    pub fn relocatable(mut self, on: bool) -> Self {
        self.relocatable = on;
        self
    }

    /// Sets [`std`](Self::std), e.g. `"c++20"`.
    pub fn std(mut self, std: impl Into<String>) -> Self {
        self.std = Some(std.into());
        self
    }

    /// Sets [`max_registers`](Self::max_registers).
    pub fn max_registers(mut self, registers: u32) -> Self {
        self.max_registers = Some(registers);
        self
    }

    /// Sets [`toolkit_include`](Self::toolkit_include).
    pub fn toolkit_include(mut self, on: bool) -> Self {
        self.toolkit_include = on;
        self
    }

    /// Sets [`std_headers`](Self::std_headers).
    pub fn std_headers(mut self, on: bool) -> Self {
        self.std_headers = on;
        self
    }

    /// Sets [`nvcc_fallback`](Self::nvcc_fallback).
    pub fn nvcc_fallback(mut self, on: bool) -> Self {
        self.nvcc_fallback = on;
        self
    }

    /// Sets [`program_name`](Self::program_name).
    pub fn program_name(mut self, name: impl Into<String>) -> Self {
        self.program_name = name.into();
        self
    }
}
