//! What to compile and how: [`CompileOptions`] (PyCUDA's `SourceModule` arguments and a
//! few typed switches), the target [`Arch`], the [`OutputKind`] and the [`Backend`], and
//! the option strings each backend gets.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::{Error, Result};

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

/// What the compiler produces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OutputKind {
    /// Machine code for one real architecture (`sm_XY`): loads with no JIT step. The
    /// default, so that a compiler newer than the driver still works.
    #[default]
    Cubin,
    /// PTX text for a virtual architecture (`compute_XY`), NUL-terminated; the driver
    /// JIT-compiles it when loading.
    Ptx,
    /// A fat binary (`nvcc -fatbin`), possibly with several architectures; nvcc only.
    Fatbin,
    /// LTO-IR for link-time optimisation (`-dlto`), for `cuLink` with LTO: raw LTO-IR
    /// from NVRTC, a fatbin holding LTO-IR from nvcc (`-fatbin -arch=lto_XY`).
    LtoIr,
}

impl OutputKind {
    /// The usual file extension: `cubin`, `ptx`, `fatbin`, `ltoir`.
    ///
    /// ```
    /// assert_eq!(rucuda_jit::OutputKind::Cubin.extension(), "cubin");
    /// ```
    pub fn extension(self) -> &'static str {
        match self {
            OutputKind::Cubin => "cubin",
            OutputKind::Ptx => "ptx",
            OutputKind::Fatbin => "fatbin",
            OutputKind::LtoIr => "ltoir",
        }
    }

    pub(crate) fn code(self) -> u32 {
        match self {
            OutputKind::Cubin => 1,
            OutputKind::Ptx => 2,
            OutputKind::Fatbin => 3,
            OutputKind::LtoIr => 4,
        }
    }

    pub(crate) fn from_code(code: u32) -> Option<OutputKind> {
        [
            OutputKind::Cubin,
            OutputKind::Ptx,
            OutputKind::Fatbin,
            OutputKind::LtoIr,
        ]
        .into_iter()
        .find(|k| k.code() == code)
    }
}

/// A GPU architecture: a compute capability and an optional feature suffix (`a` for
/// architecture-specific features as in `sm_90a`, `f` for family features as in
/// `sm_100f`).
///
/// ```
/// use rucuda_jit::Arch;
/// let a: Arch = "sm_90a".parse()?;
/// assert_eq!((a.major, a.minor), (9, 0));
/// assert_eq!(a.real(), "sm_90a");
/// assert_eq!(a.virtual_arch(), "compute_90a");
/// assert_eq!(Arch::new(12, 0).to_string(), "sm_120");
/// # Ok::<(), rucuda_jit::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arch {
    /// The major compute capability (9 for `sm_90`).
    pub major: u32,
    /// The minor compute capability (0 for `sm_90`).
    pub minor: u32,
    /// `Some('a')` or `Some('f')` for the feature-specific variants, else `None`.
    pub suffix: Option<char>,
}

impl Arch {
    /// Turing, the oldest architecture CUDA 13 supports.
    pub const SM_75: Arch = Arch::new(7, 5);
    /// Ampere A100.
    pub const SM_80: Arch = Arch::new(8, 0);
    /// Ampere consumer GPUs.
    pub const SM_86: Arch = Arch::new(8, 6);
    /// Ada.
    pub const SM_89: Arch = Arch::new(8, 9);
    /// Hopper (H100, H200).
    pub const SM_90: Arch = Arch::new(9, 0);
    /// Blackwell B200.
    pub const SM_100: Arch = Arch::new(10, 0);
    /// Blackwell consumer GPUs.
    pub const SM_120: Arch = Arch::new(12, 0);

    /// The architecture of compute capability `major.minor`.
    ///
    /// ```
    /// assert_eq!(rucuda_jit::Arch::new(8, 6).real(), "sm_86");
    /// ```
    pub const fn new(major: u32, minor: u32) -> Arch {
        Arch {
            major,
            minor,
            suffix: None,
        }
    }

    /// The real (machine code) architecture name: `sm_90`.
    pub fn real(&self) -> String {
        format!("sm_{}", self.number())
    }

    /// The virtual (PTX) architecture name: `compute_90`.
    pub fn virtual_arch(&self) -> String {
        format!("compute_{}", self.number())
    }

    fn number(&self) -> String {
        let mut s = format!("{}{}", self.major, self.minor);
        if let Some(c) = self.suffix {
            s.push(c);
        }
        s
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.real())
    }
}

impl FromStr for Arch {
    type Err = Error;

    /// Accepts `sm_90`, `compute_90`, `lto_90`, `sm_90a`, `sm_100f`, `90` and `9.0`.
    fn from_str(text: &str) -> Result<Arch> {
        let bad = || Error::InvalidOption {
            option: text.to_string(),
            reason: "not an architecture: expected sm_XY, compute_XY, XY or X.Y".into(),
        };
        let t = text.trim();
        if let Some((major, minor)) = t.split_once('.') {
            // Plain digits, one minor digit, and a number that `sm_XY` can hold: what
            // parses here must print (`real()`) and parse back to the same arch.
            let plain = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            if !plain(major) || minor.len() != 1 || !plain(minor) {
                return Err(bad());
            }
            let major: u32 = major.parse().map_err(|_| bad())?;
            let minor: u32 = minor.parse().map_err(|_| bad())?;
            if major
                .checked_mul(10)
                .and_then(|m| m.checked_add(minor))
                .is_none()
            {
                return Err(bad());
            }
            return Ok(Arch::new(major, minor));
        }
        let digits = ["sm_", "compute_", "lto_"]
            .iter()
            .find_map(|p| t.strip_prefix(p))
            .unwrap_or(t);
        let (digits, suffix) = match digits.chars().last() {
            Some(c @ ('a' | 'f')) => (&digits[..digits.len() - 1], Some(c)),
            _ => (digits, None),
        };
        if digits.len() < 2 || !digits.chars().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let number: u32 = digits.parse().map_err(|_| bad())?;
        Ok(Arch {
            major: number / 10,
            minor: number % 10,
            suffix,
        })
    }
}

/// The default size cap of the disk cache: 1 GiB.
pub const DEFAULT_CACHE_MAX_BYTES: u64 = 1 << 30;

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
            cache_dir: crate::cache::default_cache_dir(),
            cache_max_bytes: crate::cache::default_max_bytes(),
            nvcc: None,
            fast_math: false,
            debug: false,
            line_info: false,
            relocatable: false,
            std: None,
            max_registers: None,
            program_name: "kernel.cu".into(),
            toolkit_include: true,
        }
    }
}

/// Options the backends must not see in [`CompileOptions::options`], because a typed
/// field sets them, with the field to use instead.
const RESERVED: &[(&str, &str)] = &[
    ("-arch", "CompileOptions::arch"),
    ("--gpu-architecture", "CompileOptions::arch"),
    ("-code", "CompileOptions::code"),
    ("--gpu-code", "CompileOptions::code"),
    ("-o", "the returned bytes"),
    ("--output-file", "the returned bytes"),
    ("-ptx", "CompileOptions::output"),
    ("--ptx", "CompileOptions::output"),
    ("-cubin", "CompileOptions::output"),
    ("--cubin", "CompileOptions::output"),
    ("-fatbin", "CompileOptions::output"),
    ("--fatbin", "CompileOptions::output"),
    ("-dlto", "CompileOptions::output = OutputKind::LtoIr"),
    ("--dlto", "CompileOptions::output = OutputKind::LtoIr"),
    ("-c", "CompileOptions::output"),
    ("--compile", "CompileOptions::output"),
];

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

    /// Sets [`program_name`](Self::program_name).
    pub fn program_name(mut self, name: impl Into<String>) -> Self {
        self.program_name = name.into();
        self
    }

    /// Checks what can be checked before running a compiler: options that a typed
    /// field sets, NUL bytes, and combinations a backend cannot do.
    ///
    /// ```
    /// use rucuda_jit::CompileOptions;
    /// let err = CompileOptions::new().option("-arch=sm_80").validate().unwrap_err();
    /// assert!(err.to_string().contains("CompileOptions::arch"));
    /// ```
    pub fn validate(&self) -> Result<()> {
        self.validate_for(self.backend)
    }

    fn validate_for(&self, backend: Backend) -> Result<()> {
        for option in &self.options {
            if option.contains('\0') {
                return Err(Error::InvalidOption {
                    option: option.clone(),
                    reason: "contains a NUL byte".into(),
                });
            }
            let flag = option.split('=').next().unwrap_or(option);
            if let Some((_, field)) = RESERVED.iter().find(|(r, _)| *r == flag) {
                return Err(Error::InvalidOption {
                    option: option.clone(),
                    reason: format!("set it with {field} instead"),
                });
            }
            if backend == Backend::Nvrtc && !option.starts_with('-') {
                return Err(Error::InvalidOption {
                    option: option.clone(),
                    reason: "NVRTC options are single strings starting with '-' \
                             (write -I/dir or --include-path=/dir, not two strings)"
                        .into(),
                });
            }
        }
        for (name, _) in &self.defines {
            if name.is_empty() || name.contains(['=', '\0', ' ']) {
                return Err(Error::InvalidOption {
                    option: format!("-D{name}"),
                    reason: "a macro name must be non-empty, without '=', spaces or NUL".into(),
                });
            }
        }
        if backend == Backend::Nvrtc {
            if self.output == OutputKind::Fatbin {
                return Err(Error::Unsupported(
                    "NVRTC cannot produce a fatbin: use Backend::Nvcc, or a cubin or PTX".into(),
                ));
            }
            if self.code.is_some() {
                return Err(Error::Unsupported(
                    "`code` (nvcc's -code) needs Backend::Nvcc; NVRTC takes one arch".into(),
                ));
            }
        } else if !self.name_expressions.is_empty() {
            return Err(Error::Unsupported(
                "name expressions need NVRTC (nvcc has no lowered-name API); compile \
                 templated kernels with Backend::Nvrtc, or give them extern \"C\" wrappers"
                    .into(),
            ));
        }
        Ok(())
    }

    fn switch_args(&self, nvcc: bool) -> Vec<String> {
        let mut args = Vec::new();
        for (name, value) in &self.defines {
            args.push(match value {
                Some(v) => format!("-D{name}={v}"),
                None => format!("-D{name}"),
            });
        }
        for dir in &self.include_dirs {
            args.push(if nvcc {
                format!("-I{}", dir.display())
            } else {
                format!("--include-path={}", dir.display())
            });
        }
        if self.fast_math {
            args.push("--use_fast_math".into());
        }
        if self.debug {
            args.push(if nvcc { "-G" } else { "--device-debug" }.into());
        }
        if self.line_info {
            args.push(
                if nvcc {
                    "-lineinfo"
                } else {
                    "--generate-line-info"
                }
                .into(),
            );
        }
        if self.relocatable {
            args.push("--relocatable-device-code=true".into());
        }
        if let Some(std) = &self.std {
            args.push(format!("--std={std}"));
        }
        if let Some(r) = self.max_registers {
            args.push(format!("--maxrregcount={r}"));
        }
        args.extend(self.options.iter().cloned());
        args
    }

    /// The options NVRTC gets for `arch`: the target first, then ours, then
    /// [`options`](Self::options). ([`compile`](crate::compile) appends the CUDA
    /// headers' folder when [`toolkit_include`](Self::toolkit_include) is on.)
    ///
    /// ```
    /// use rucuda_jit::{Arch, CompileOptions, OutputKind};
    /// let o = CompileOptions::new().output(OutputKind::LtoIr).relocatable(true);
    /// assert_eq!(
    ///     o.nvrtc_args(Arch::SM_90)?,
    ///     ["--gpu-architecture=sm_90", "-dlto", "--relocatable-device-code=true"]
    /// );
    /// # Ok::<(), rucuda_jit::Error>(())
    /// ```
    pub fn nvrtc_args(&self, arch: Arch) -> Result<Vec<String>> {
        self.validate_for(Backend::Nvrtc)?;
        let mut args = match self.output {
            OutputKind::Cubin => vec![format!("--gpu-architecture={}", arch.real())],
            OutputKind::Ptx => vec![format!("--gpu-architecture={}", arch.virtual_arch())],
            OutputKind::LtoIr => vec![
                format!("--gpu-architecture={}", arch.real()),
                "-dlto".into(),
            ],
            OutputKind::Fatbin => unreachable_fatbin()?,
        };
        args.extend(self.switch_args(false));
        Ok(args)
    }

    /// The options nvcc gets for `arch`, without the input and output file names:
    /// the output mode and target first, then ours, then [`options`](Self::options).
    ///
    /// ```
    /// use rucuda_jit::{Arch, CompileOptions, OutputKind};
    /// let o = CompileOptions::new().include_dir("/inc").debug(true);
    /// assert_eq!(o.nvcc_args(Arch::SM_90)?, ["-cubin", "-arch=sm_90", "-I/inc", "-G"]);
    /// let fat = CompileOptions::new().output(OutputKind::Fatbin).code("sm_90,compute_90");
    /// assert_eq!(
    ///     fat.nvcc_args(Arch::SM_90)?,
    ///     ["-fatbin", "-arch=compute_90", "-code=sm_90,compute_90"]
    /// );
    /// # Ok::<(), rucuda_jit::Error>(())
    /// ```
    pub fn nvcc_args(&self, arch: Arch) -> Result<Vec<String>> {
        self.validate_for(Backend::Nvcc)?;
        let mut args: Vec<String> = Vec::new();
        match self.output {
            OutputKind::Cubin => {
                args.push("-cubin".into());
                args.push(format!("-arch={}", arch.real()));
            }
            OutputKind::Ptx => {
                args.push("-ptx".into());
                args.push(format!("-arch={}", arch.virtual_arch()));
            }
            OutputKind::Fatbin => {
                args.push("-fatbin".into());
                if self.code.is_some() {
                    args.push(format!("-arch={}", arch.virtual_arch()));
                } else {
                    args.push(format!("-arch={}", arch.real()));
                }
            }
            OutputKind::LtoIr => {
                // A fatbin holding only LTO-IR for `arch` (`-arch=lto_XY`), which cuLink
                // and nvJitLink accept.
                args.push("-fatbin".into());
                args.push(format!(
                    "-arch=lto_{}",
                    arch.real().trim_start_matches("sm_")
                ));
            }
        }
        if let Some(code) = &self.code {
            args.push(format!("-code={code}"));
        }
        args.extend(self.switch_args(true));
        Ok(args)
    }

    /// The header folders the include scan of the cache key searches: the
    /// [`include_dirs`](Self::include_dirs) and every `-I` or `--include-path` in the
    /// raw [`options`](Self::options).
    ///
    /// ```
    /// use rucuda_jit::CompileOptions;
    /// let o = CompileOptions::new()
    ///     .include_dir("/a")
    ///     .options(["-I/b", "--include-path=/c", "-I", "/d"]);
    /// let dirs: Vec<_> = o.header_dirs().into_iter().map(|d| d.display().to_string()).collect();
    /// assert_eq!(dirs, ["/a", "/b", "/c", "/d"]);
    /// ```
    pub fn header_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = self.include_dirs.clone();
        let mut it = self.options.iter().peekable();
        while let Some(option) = it.next() {
            let value = if option == "-I" || option == "--include-path" {
                it.next().cloned()
            } else if let Some(v) = option.strip_prefix("--include-path=") {
                Some(v.to_string())
            } else {
                option.strip_prefix("-I").map(str::to_string)
            };
            if let Some(v) = value.filter(|v| !v.is_empty()) {
                dirs.push(PathBuf::from(v));
            }
        }
        dirs
    }
}

fn unreachable_fatbin() -> Result<Vec<String>> {
    Err(Error::Unsupported(
        "NVRTC cannot produce a fatbin: use Backend::Nvcc, or a cubin or PTX".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_parsing() {
        let cases = [
            ("sm_90", Arch::new(9, 0)),
            ("compute_86", Arch::new(8, 6)),
            ("lto_80", Arch::new(8, 0)),
            ("75", Arch::new(7, 5)),
            ("8.9", Arch::new(8, 9)),
            ("sm_120", Arch::new(12, 0)),
            ("sm_103", Arch::new(10, 3)),
        ];
        for (text, want) in cases {
            assert_eq!(text.parse::<Arch>().unwrap(), want, "{text}");
        }
        let a: Arch = "sm_100f".parse().unwrap();
        assert_eq!(a.suffix, Some('f'));
        assert_eq!(a.virtual_arch(), "compute_100f");
        for bad in ["", "sm_", "sm_9", "gfx90a", "9.12", "sm_9x"] {
            assert!(bad.parse::<Arch>().is_err(), "{bad}");
        }
    }

    /// Found by the `compile_options` fuzz target: "555555550.000000" parsed as compute
    /// capability 555555550.0, whose `sm_5555555500` name did not parse back (u32
    /// overflow). The dotted form now takes plain digits, one minor digit, and a number
    /// that fits.
    #[test]
    fn dotted_arch_round_trips_or_is_refused() {
        for bad in [
            "555555550.000000",
            "429496729.6",
            "+9.0",
            "9.+0",
            "8.06",
            "9.",
            ".9",
        ] {
            assert!(bad.parse::<Arch>().is_err(), "{bad}");
        }
        for good in [
            "9.0",
            "12.1",
            "429496729.5",
            "00.0",
            "sm_90a",
            "compute_100f",
            "4294967295",
        ] {
            let a: Arch = good.parse().unwrap();
            assert_eq!(a.real().parse::<Arch>().unwrap(), a, "{good}");
            assert_eq!(a.virtual_arch().parse::<Arch>().unwrap(), a, "{good}");
        }
    }

    #[test]
    fn nvrtc_strings() {
        let o = CompileOptions::new()
            .define("N", "4")
            .define_flag("FAST")
            .include_dir("/inc")
            .fast_math(true)
            .debug(true)
            .line_info(true)
            .relocatable(true)
            .std("c++20")
            .max_registers(64)
            .option("--extra-device-vectorization");
        assert_eq!(
            o.nvrtc_args(Arch::SM_90).unwrap(),
            [
                "--gpu-architecture=sm_90",
                "-DN=4",
                "-DFAST",
                "--include-path=/inc",
                "--use_fast_math",
                "--device-debug",
                "--generate-line-info",
                "--relocatable-device-code=true",
                "--std=c++20",
                "--maxrregcount=64",
                "--extra-device-vectorization",
            ]
        );
        let ptx = CompileOptions::new().output(OutputKind::Ptx);
        assert_eq!(
            ptx.nvrtc_args(Arch::SM_75).unwrap(),
            ["--gpu-architecture=compute_75"]
        );
    }

    #[test]
    fn nvcc_strings() {
        let o = CompileOptions::new()
            .define("N", "4")
            .include_dir("/inc")
            .fast_math(true)
            .debug(true)
            .line_info(true)
            .relocatable(true)
            .option("-Xptxas=-v");
        assert_eq!(
            o.nvcc_args(Arch::SM_90).unwrap(),
            [
                "-cubin",
                "-arch=sm_90",
                "-DN=4",
                "-I/inc",
                "--use_fast_math",
                "-G",
                "-lineinfo",
                "--relocatable-device-code=true",
                "-Xptxas=-v",
            ]
        );
        let ptx = CompileOptions::new().output(OutputKind::Ptx);
        assert_eq!(
            ptx.nvcc_args(Arch::SM_80).unwrap(),
            ["-ptx", "-arch=compute_80"]
        );
        let lto = CompileOptions::new().output(OutputKind::LtoIr);
        assert_eq!(
            lto.nvcc_args(Arch::SM_90).unwrap(),
            ["-fatbin", "-arch=lto_90"]
        );
        let fat = CompileOptions::new().output(OutputKind::Fatbin);
        assert_eq!(
            fat.nvcc_args(Arch::SM_90).unwrap(),
            ["-fatbin", "-arch=sm_90"]
        );
    }

    #[test]
    fn reserved_and_malformed_options_are_reported() {
        for bad in [
            "-arch=sm_80",
            "--gpu-architecture=sm_80",
            "-o",
            "-ptx",
            "-dlto",
            "-c",
        ] {
            let e = CompileOptions::new().option(bad).validate().unwrap_err();
            assert!(matches!(e, Error::InvalidOption { .. }), "{bad}: {e}");
        }
        let e = CompileOptions::new().option("O3").validate().unwrap_err();
        assert!(e.to_string().contains("starting with '-'"), "{e}");
        let e = CompileOptions::new()
            .option("-DX\0")
            .validate()
            .unwrap_err();
        assert!(e.to_string().contains("NUL"), "{e}");
        let e = CompileOptions::new()
            .define("A=B", "1")
            .validate()
            .unwrap_err();
        assert!(e.to_string().contains("macro name"), "{e}");
        // nvcc takes option values as separate strings.
        CompileOptions::new()
            .backend(Backend::Nvcc)
            .options(["-Xptxas", "-v"])
            .validate()
            .unwrap();
    }

    #[test]
    fn backend_limits() {
        let e = CompileOptions::new()
            .output(OutputKind::Fatbin)
            .validate()
            .unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)));
        let e = CompileOptions::new().code("sm_90").validate().unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)));
        let e = CompileOptions::new()
            .backend(Backend::Nvcc)
            .name_expression("f<int>")
            .validate()
            .unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)));
    }

    #[test]
    fn nvcc_setter_picks_the_backend() {
        let o = CompileOptions::new().nvcc("/opt/cuda/bin/nvcc");
        assert_eq!(o.backend, Backend::Nvcc);
    }

    #[test]
    fn output_codes_round_trip() {
        for k in [
            OutputKind::Cubin,
            OutputKind::Ptx,
            OutputKind::Fatbin,
            OutputKind::LtoIr,
        ] {
            assert_eq!(OutputKind::from_code(k.code()), Some(k));
        }
        assert_eq!(OutputKind::from_code(0), None);
    }
}
