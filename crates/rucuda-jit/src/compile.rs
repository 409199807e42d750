//! [`compile`]: source and options in, device code out, through the disk cache. Needs no
//! GPU and no CUDA context when an architecture is given.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use crate::arch::Arch;
use crate::backend::{nvcc, nvrtc};
use crate::cache::includes::scan_includes;
use crate::cache::key::KeyInput;
use crate::cache::store::{Entry, Lookup};
use crate::cache::trust::trusted;
use crate::cache::{CacheKey, DiskCache};
use crate::error::{Error, Result};
use crate::fallback;
use crate::nvrtc::Nvrtc;
use crate::options::{Backend, CompileOptions};
use crate::output::OutputKind;
use crate::target::{device_arch, target_for};

/// Where a compiled image came from, with respect to the disk cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheStatus {
    /// Read from this cache entry; no compiler ran.
    Hit(PathBuf),
    /// Compiled, and written to this cache entry.
    Stored(PathBuf),
    /// Compiled; the cache folder could not be written (warned once per folder).
    NotStored,
    /// Compiled with the cache off (`cache_dir` is `None`, or `keep` is set).
    Off,
}

impl CacheStatus {
    /// True for [`CacheStatus::Hit`].
    pub fn is_hit(&self) -> bool {
        matches!(self, CacheStatus::Hit(_))
    }

    /// The entry's path, for a hit or a store.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            CacheStatus::Hit(p) | CacheStatus::Stored(p) => Some(p),
            _ => None,
        }
    }
}

/// A compiled image and what goes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// The bytes: cubin, PTX (NUL-terminated), fatbin or LTO-IR, as asked.
    pub image: Vec<u8>,
    /// What [`image`](Self::image) is.
    pub output: OutputKind,
    /// The architecture it was compiled for.
    pub arch: Arch,
    /// Each name expression with its lowered (mangled) name.
    pub lowered_names: Vec<(String, String)>,
    /// The compiler's log: warnings (empty when there were none).
    pub log: String,
    /// Whether it came from the disk cache.
    pub cache: CacheStatus,
    /// The cache key (also when the cache is off).
    pub key: CacheKey,
    /// Where the compiler's files were kept, when `keep` was set.
    pub kept: Option<PathBuf>,
    /// The compiler that made the image: the backend asked for, or [`Backend::Nvcc`]
    /// when NVRTC could not open a header and nvcc compiled instead (see
    /// [`CompileOptions::nvcc_fallback`]). [`key`](Self::key) is that compiler's key.
    pub compiler: Backend,
    /// The built-in standard headers ([`std_headers`](crate::std_headers)) NVRTC was
    /// given for this source, by name (empty for nvcc).
    pub std_headers: Vec<&'static str>,
}

impl Compiled {
    /// The lowered name of a name expression given in the options.
    ///
    /// ```no_run
    /// use rucuda_jit::{compile, Arch, CompileOptions};
    /// let src = "template <typename T> __global__ void fill(T *x, T v) { x[threadIdx.x] = v; }";
    /// let opts = CompileOptions::new()
    ///     .arch(Arch::SM_90)
    ///     .no_extern_c(true)
    ///     .name_expression("fill<float>");
    /// let compiled = compile(src, &opts)?;
    /// assert_eq!(compiled.lowered_name("fill<float>"), Some("_Z4fillIfEvPT_S0_"));
    /// # Ok::<(), rucuda_jit::Error>(())
    /// ```
    pub fn lowered_name(&self, expression: &str) -> Option<&str> {
        self.lowered_names
            .iter()
            .find(|(e, _)| e == expression)
            .map(|(_, l)| l.as_str())
    }

    /// The bytes alone.
    pub fn into_image(self) -> Vec<u8> {
        self.image
    }
}

/// The source as the compiler gets it: wrapped in `extern "C" { ... }` unless
/// `no_extern_c`, with a `#line` directive so the compiler's line numbers are the
/// user's.
pub(crate) fn prepare_source(source: &str, options: &CompileOptions) -> String {
    if options.no_extern_c {
        return source.to_string();
    }
    let name = options.program_name.replace(['\\', '"'], "_");
    let newline = if source.ends_with('\n') { "" } else { "\n" };
    format!("extern \"C\" {{\n#line 1 \"{name}\"\n{source}{newline}}}\n")
}

/// The kernels a source defines, for the log: the name before the `(` after each
/// `__global__`, the first three and a count of the rest.
fn kernel_names(source: &str) -> String {
    let names: Vec<&str> = source
        .split("__global__")
        .skip(1)
        .filter_map(|rest| {
            let head = rest.split('(').next()?;
            head.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .rfind(|w| !w.is_empty())
        })
        .collect();
    match names.len() {
        0 => "no __global__ kernels".into(),
        1..=3 => names.join(", "),
        n => format!("{} and {} more kernels", names[..3].join(", "), n - 3),
    }
}

/// Folders found unwritable in this process: warned about once, not written again.
fn unwritable_dirs() -> &'static Mutex<Vec<PathBuf>> {
    static DIRS: OnceLock<Mutex<Vec<PathBuf>>> = OnceLock::new();
    DIRS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Warns once per folder that the cache cannot be written, and remembers it so later
/// compiles do not try again (lookups still read it: a shared read-only cache works).
fn mark_unwritable(dir: &std::path::Path, error: &std::io::Error) {
    if let Ok(mut dirs) = unwritable_dirs().lock() {
        if !dirs.iter().any(|d| d == dir) {
            dirs.push(dir.to_path_buf());
            log::warn!(
                "rucuda-jit: the kernel cache folder {} cannot be written ({error}); \
                 compiling without storing to the disk cache",
                dir.display()
            );
        }
    }
}

fn is_unwritable(dir: &std::path::Path) -> bool {
    unwritable_dirs()
        .lock()
        .is_ok_and(|dirs| dirs.iter().any(|d| d == dir))
}

/// Compiles CUDA C++ `source` to device code with no GPU and no context, through the
/// disk cache.
///
/// With `options.arch` unset, the current context's device decides (a cubin for its
/// `sm_XY`), and with no current context this is [`Error::NoArch`]. The cache key covers the compiler's identity and version, the target, the options, the
/// name expressions, the source and every header it includes; an entry is checked
/// before use and rebuilt when damaged.
///
/// ```no_run
/// use rucuda_jit::{compile, Arch, CompileOptions};
/// let src = r#"__global__ void scale(float *x, float a, int n) {
///     int i = blockIdx.x * blockDim.x + threadIdx.x;
///     if (i < n) x[i] *= a;
/// }"#;
/// let cubin = compile(src, &CompileOptions::new().arch(Arch::SM_90))?;
/// println!("{} bytes, {:?}", cubin.image.len(), cubin.cache);
/// # Ok::<(), rucuda_jit::Error>(())
/// ```
pub fn compile(source: &str, options: &CompileOptions) -> Result<Compiled> {
    if let Some(arch) = options.arch {
        return compile_for(source, options, arch);
    }
    // PyCUDA's default: the current context's device.
    let ctx = rucuda_driver::Context::current()
        .ok()
        .flatten()
        .ok_or(Error::NoArch)?;
    compile_for_device(source, options, device_arch(&ctx)?)
}

/// [`compile`] for a device of architecture `device`, with the architecture and output
/// [`target_for`] settles.
pub(crate) fn compile_for_device(
    source: &str,
    options: &CompileOptions,
    device: Arch,
) -> Result<Compiled> {
    let (arch, output) = target_for(options, device)?;
    if output == options.output {
        compile_for(source, options, arch)
    } else {
        let mut adjusted = options.clone();
        adjusted.output = output;
        compile_for(source, &adjusted, arch)
    }
}

/// What one compiler gets for one compile: its option strings, its identity, nvcc's path,
/// the built-in headers served to NVRTC, and the cache key of the result.
struct Plan {
    backend: Backend,
    args: Vec<String>,
    identity: String,
    nvcc: Option<PathBuf>,
    std_headers: Vec<&'static str>,
    key: CacheKey,
}

/// Settles how `backend` compiles `prepared` for `arch`: finds the compiler, scans the
/// includes (serving built-in headers to NVRTC when on) and computes the cache key.
fn plan(prepared: &str, options: &CompileOptions, arch: Arch, backend: Backend) -> Result<Plan> {
    let mut args = match backend {
        Backend::Nvrtc => options.nvrtc_args(arch)?,
        Backend::Nvcc => options.nvcc_args(arch)?,
    };
    let mut header_dirs = options.header_dirs();
    // The compiler's identity: NVRTC loaded, or nvcc found and asked its version.
    let (identity, nvcc_path) = match backend {
        Backend::Nvrtc => {
            let nvrtc = Nvrtc::get()?;
            if let Some(dir) = nvrtc
                .toolkit_include_dir()
                .filter(|_| options.toolkit_include)
            {
                args.push(format!("--include-path={}", dir.display()));
                header_dirs.push(dir.to_path_buf());
            }
            (nvrtc.identity().to_string(), None)
        }
        Backend::Nvcc => {
            let path = nvcc::locate(options.nvcc.as_deref())?;
            (nvcc::identity(&path)?, Some(path))
        }
    };
    let cwd = std::env::current_dir().ok();
    let serve = backend == Backend::Nvrtc && options.std_headers;
    let builtins = |name: &str| {
        if serve {
            crate::std_headers::lookup(name)
        } else {
            None
        }
    };
    let scan = scan_includes(prepared, cwd.as_deref(), &header_dirs, &builtins);
    let target = format!(
        "{} {} {}",
        arch.real(),
        options.output.extension(),
        options.code.as_deref().unwrap_or("")
    );
    let key = KeyInput {
        compiler: &identity,
        backend: match backend {
            Backend::Nvrtc => "nvrtc",
            Backend::Nvcc => "nvcc",
        },
        target: &target,
        args: &args,
        name_expressions: &options.name_expressions,
        source: prepared,
        headers: &scan.digest,
    }
    .key();
    Ok(Plan {
        backend,
        args,
        identity,
        nvcc: nvcc_path,
        std_headers: scan.builtins,
        key,
    })
}

/// [`compile`] for an explicit architecture (overriding `options.arch`).
///
/// With NVRTC, a source NVRTC cannot compile because a header cannot be opened goes to
/// nvcc when [`CompileOptions::nvcc_fallback`] allows and nvcc is installed; the result
/// then says [`Backend::Nvcc`] and carries nvcc's cache key.
pub(crate) fn compile_for(source: &str, options: &CompileOptions, arch: Arch) -> Result<Compiled> {
    let prepared = prepare_source(source, options);
    let cache = match (&options.cache_dir, options.keep) {
        (Some(dir), false) if trusted(dir) => Some(DiskCache::new(dir, options.cache_max_bytes)),
        _ => None,
    };
    let first = plan(&prepared, options, arch, options.backend)?;
    if first.backend == Backend::Nvrtc
        && fallback::refusal(options).is_none()
        && fallback::is_known(&first.key)
    {
        // This process already saw NVRTC fail on this source for a header.
        if let Ok(nvcc_plan) = plan(&prepared, options, arch, Backend::Nvcc) {
            return run(&nvcc_plan, source, &prepared, options, arch, cache.as_ref());
        }
    }
    let error = match run(&first, source, &prepared, options, arch, cache.as_ref()) {
        Err(Error::Compile(e)) if first.backend == Backend::Nvrtc => e,
        other => return other,
    };
    let missing = fallback::missing_headers(&error.log);
    if missing.is_empty() {
        return Err(Error::Compile(error));
    }
    if let Some(why) = fallback::refusal(options) {
        let note = fallback::not_tried_note(&missing, why);
        return Err(error.with_note(note).into());
    }
    let nvcc_plan = match plan(&prepared, options, arch, Backend::Nvcc) {
        Ok(p) => p,
        Err(Error::NvccNotFound { tried }) => {
            let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
            let why = format!(
                "nvcc was not found (tried: {}; install the CUDA toolkit or set CUDA_PATH)",
                tried.join(", ")
            );
            return Err(error
                .with_note(fallback::not_tried_note(&missing, &why))
                .into());
        }
        Err(e) => {
            let why = format!("nvcc could not be used: {e}");
            return Err(error
                .with_note(fallback::not_tried_note(&missing, &why))
                .into());
        }
    };
    log::info!(
        "rucuda-jit: NVRTC cannot open {} in {}; compiling it with nvcc",
        fallback::quoted(&missing),
        options.program_name
    );
    fallback::remember(first.key);
    match run(&nvcc_plan, source, &prepared, options, arch, cache.as_ref()) {
        Err(Error::Compile(e)) => {
            let note = fallback::tried_note(&missing, error.first_error.as_deref());
            Err(e.with_note(note).into())
        }
        other => other,
    }
}

/// Runs one plan through the disk cache: a hit, or a compile stored in it.
fn run(
    plan: &Plan,
    source: &str,
    prepared: &str,
    options: &CompileOptions,
    arch: Arch,
    cache: Option<&DiskCache>,
) -> Result<Compiled> {
    let key = plan.key;
    if let Some(cache) = cache {
        if let Lookup::Hit(entry) = cache.load(&key) {
            if entry.output == options.output {
                return Ok(Compiled {
                    image: entry.image,
                    output: entry.output,
                    arch,
                    lowered_names: entry.lowered_names,
                    log: entry.log,
                    cache: CacheStatus::Hit(cache.entry_path(&key)),
                    key,
                    kept: None,
                    compiler: plan.backend,
                    std_headers: plan.std_headers.clone(),
                });
            }
        }
    }

    let started = std::time::Instant::now();
    let raw = match (plan.backend, &plan.nvcc) {
        (Backend::Nvcc, Some(path)) => nvcc::compile(path, prepared, source, options, &plan.args)?,
        _ => {
            let headers: Vec<(&str, &str)> = plan
                .std_headers
                .iter()
                .filter_map(|name| crate::std_headers::lookup(name))
                .collect();
            nvrtc::compile(prepared, source, options, &plan.args, &headers)?
        }
    };
    log::info!(
        "rucuda-jit: compiled {} ({}) for {arch} ({:?}) with {} in {:.1} ms (not a cache hit)",
        options.program_name,
        kernel_names(source),
        options.output,
        plan.identity,
        started.elapsed().as_secs_f64() * 1e3
    );

    let status = match cache {
        None => CacheStatus::Off,
        Some(cache) if is_unwritable(cache.dir()) => CacheStatus::NotStored,
        Some(cache) => {
            let entry = Entry {
                output: options.output,
                lowered_names: raw.lowered_names.clone(),
                log: raw.log.clone(),
                image: raw.image.clone(),
            };
            match cache.store(&key, &entry) {
                Ok(path) => CacheStatus::Stored(path),
                Err(e) => {
                    mark_unwritable(cache.dir(), &e);
                    CacheStatus::NotStored
                }
            }
        }
    };
    Ok(Compiled {
        image: raw.image,
        output: options.output,
        arch,
        lowered_names: raw.lowered_names,
        log: raw.log,
        cache: status,
        key,
        kept: raw.kept,
        compiler: plan.backend,
        std_headers: plan.std_headers.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_for_the_log() {
        let src = "__global__ void a(int *x) {}\nextern \"C\" __global__ void b(){}";
        assert_eq!(kernel_names(src), "a, b");
        assert_eq!(kernel_names("int x;"), "no __global__ kernels");
        let many = "__global__ void k1(){} __global__ void k2(){} __global__ void k3(){} __global__ void k4(){}";
        assert_eq!(kernel_names(many), "k1, k2, k3 and 1 more kernels");
    }

    #[test]
    fn extern_c_wrapping_keeps_line_numbers() {
        let o = CompileOptions::new();
        let p = prepare_source("__global__ void k() {}", &o);
        assert_eq!(
            p,
            "extern \"C\" {\n#line 1 \"kernel.cu\"\n__global__ void k() {}\n}\n"
        );
        let raw = CompileOptions::new().no_extern_c(true);
        assert_eq!(prepare_source("x", &raw), "x");
    }

    #[test]
    fn no_arch_is_an_error() {
        let e = compile("", &CompileOptions::new()).unwrap_err();
        assert!(matches!(e, Error::NoArch));
    }
}
