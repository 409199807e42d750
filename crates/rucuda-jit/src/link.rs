//! Linking with `cuLink*` (PyCUDA's `DynamicModule` and `Linker`): several sources, PTX,
//! cubins, fatbins, objects and libraries into one module, including `libcudadevrt.a`
//! for dynamic parallelism (kernels that launch kernels).

use std::ffi::{c_void, CString};
use std::path::{Path, PathBuf};

use rucuda_driver::{Context, DeviceGlobal, Function, Module};
use rucuda_driver_sys::{CUjitInputType, CUjit_option, CUlinkState};

use rucuda_dylib::resolve_folders;

use crate::arch::Arch;
use crate::compile::{compile, Compiled};
use crate::error::{Error, Result};
use crate::nvrtc::Nvrtc;
use crate::options::{Backend, CompileOptions};
use crate::output::OutputKind;
use crate::target::device_arch;
use crate::toolkit;

const LOG_BYTES: usize = 64 * 1024;

/// What an input to the linker is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkInput {
    /// A (relocatable) cubin.
    Cubin,
    /// PTX text; the linker compiles it.
    Ptx,
    /// A fat binary.
    Fatbin,
    /// A host object file with embedded device code (`nvcc -dc`).
    Object,
    /// A static library of such objects (`libcudadevrt.a`).
    Library,
    /// LTO-IR (needs [`LinkOptions::lto`]).
    LtoIr,
}

impl LinkInput {
    fn raw(self) -> CUjitInputType {
        match self {
            LinkInput::Cubin => CUjitInputType::CU_JIT_INPUT_CUBIN,
            LinkInput::Ptx => CUjitInputType::CU_JIT_INPUT_PTX,
            LinkInput::Fatbin => CUjitInputType::CU_JIT_INPUT_FATBINARY,
            LinkInput::Object => CUjitInputType::CU_JIT_INPUT_OBJECT,
            LinkInput::Library => CUjitInputType::CU_JIT_INPUT_LIBRARY,
            LinkInput::LtoIr => CUjitInputType::CU_JIT_INPUT_NVVM,
        }
    }

    /// The kind a file's extension says: `.cubin`, `.ptx`, `.fatbin`, `.o`/`.obj`,
    /// `.a`/`.lib`, `.ltoir`.
    ///
    /// ```
    /// use rucuda_jit::LinkInput;
    /// assert_eq!(LinkInput::from_path("libcudadevrt.a".as_ref()), Some(LinkInput::Library));
    /// assert_eq!(LinkInput::from_path("k.ptx".as_ref()), Some(LinkInput::Ptx));
    /// assert_eq!(LinkInput::from_path("k.cu".as_ref()), None);
    /// ```
    pub fn from_path(path: &Path) -> Option<LinkInput> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "cubin" => LinkInput::Cubin,
            "ptx" => LinkInput::Ptx,
            "fatbin" | "fatbinary" => LinkInput::Fatbin,
            "o" | "obj" => LinkInput::Object,
            "a" | "lib" => LinkInput::Library,
            "ltoir" => LinkInput::LtoIr,
            _ => return None,
        })
    }

    /// The input kind of a compiler output.
    ///
    /// ```
    /// use rucuda_jit::{LinkInput, OutputKind};
    /// assert_eq!(LinkInput::from_output(OutputKind::Ptx), LinkInput::Ptx);
    /// ```
    pub fn from_output(kind: OutputKind) -> LinkInput {
        match kind {
            OutputKind::Cubin => LinkInput::Cubin,
            OutputKind::Ptx => LinkInput::Ptx,
            OutputKind::Fatbin => LinkInput::Fatbin,
            OutputKind::LtoIr => LinkInput::LtoIr,
        }
    }
}

/// Options of the link step (`cuLinkCreate`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkOptions {
    /// `CU_JIT_OPTIMIZATION_LEVEL` (0..=4) for PTX inputs.
    pub optimization_level: Option<u32>,
    /// `CU_JIT_GENERATE_DEBUG_INFO`.
    pub debug_info: bool,
    /// `CU_JIT_GENERATE_LINE_INFO`.
    pub line_info: bool,
    /// `CU_JIT_LOG_VERBOSE`: more in [`LinkedModule::info_log`].
    pub verbose: bool,
    /// `CU_JIT_LTO`: link-time optimisation of LTO-IR inputs (deprecated by the driver
    /// in favour of nvJitLink, still accepted by CUDA 13).
    pub lto: bool,
}

/// A pending link (PyCUDA's `DynamicModule`): add inputs, then [`link`](Linker::link).
///
/// ```no_run
/// use rucuda_driver::Device;
/// use rucuda_jit::{CompileOptions, Linker};
/// let ctx = Device::get(0)?.primary_context()?;
/// let mut linker = Linker::new(&ctx)?;
/// linker
///     .add_source(
///         r#"__global__ void child(float *x) { x[threadIdx.x] *= 2.0f; }
///            __global__ void parent(float *x) { child<<<1, 32>>>(x); }"#,
///         &CompileOptions::new(),
///     )?
///     .add_cudadevrt()?;
/// let linked = linker.link()?;
/// let parent = linked.function("parent")?;
/// # Ok::<(), rucuda_jit::Error>(())
/// ```
pub struct Linker {
    ctx: Context,
    arch: Arch,
    state: CUlinkState,
    // The option arrays and the log buffers they point to must outlive the link state
    // (the logs are output options): heap buffers, kept here, never reallocated.
    _keys: Vec<CUjit_option>,
    _values: Vec<*mut c_void>,
    info_log: Box<[u8]>,
    error_log: Box<[u8]>,
    lowered_names: Vec<(String, String)>,
    inputs: Vec<String>,
}

impl std::fmt::Debug for Linker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Linker")
            .field("arch", &self.arch)
            .field("inputs", &self.inputs)
            .finish_non_exhaustive()
    }
}

fn log_text(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).trim_end().to_string()
}

fn c_string(what: &str, text: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::InvalidInput(format!("{what} contains a NUL byte")))
}

impl Linker {
    /// A linker for `ctx`'s device with default options.
    pub fn new(ctx: &Context) -> Result<Linker> {
        Linker::with_options(ctx, &LinkOptions::default())
    }

    /// A linker for `ctx`'s device (`cuLinkCreate`).
    pub fn with_options(ctx: &Context, options: &LinkOptions) -> Result<Linker> {
        let arch = device_arch(ctx)?;
        ctx.bind()?;
        let create = rucuda_driver::driver()?
            .cuLinkCreate_v2()
            .map_err(rucuda_driver::Error::from)?;
        let mut info_log = vec![0u8; LOG_BYTES].into_boxed_slice();
        let mut error_log = vec![0u8; LOG_BYTES].into_boxed_slice();
        let mut keys = vec![
            CUjit_option::CU_JIT_INFO_LOG_BUFFER,
            CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        // Option values are pointers, or integers cast to pointer width.
        let mut values: Vec<*mut c_void> = vec![
            info_log.as_mut_ptr().cast(),
            LOG_BYTES as *mut c_void,
            error_log.as_mut_ptr().cast(),
            LOG_BYTES as *mut c_void,
        ];
        let mut push = |key: CUjit_option, value: usize| {
            keys.push(key);
            values.push(value as *mut c_void);
        };
        if let Some(level) = options.optimization_level {
            push(CUjit_option::CU_JIT_OPTIMIZATION_LEVEL, level as usize);
        }
        if options.debug_info {
            push(CUjit_option::CU_JIT_GENERATE_DEBUG_INFO, 1);
        }
        if options.line_info {
            push(CUjit_option::CU_JIT_GENERATE_LINE_INFO, 1);
        }
        if options.verbose {
            push(CUjit_option::CU_JIT_LOG_VERBOSE, 1);
        }
        if options.lto {
            push(CUjit_option::CU_JIT_LTO, 1);
        }
        let count = u32::try_from(keys.len()).unwrap_or(u32::MAX);
        let mut state: CUlinkState = std::ptr::null_mut();
        // SAFETY: `keys` and `values` have equal lengths; the log buffers and both
        // arrays live in this Linker, as long as the state does; `state` is written once.
        let code = unsafe { create(count, keys.as_mut_ptr(), values.as_mut_ptr(), &mut state) };
        rucuda_driver::check(code, "cuLinkCreate_v2")?;
        Ok(Linker {
            ctx: ctx.clone(),
            arch,
            state,
            _keys: keys,
            _values: values,
            info_log,
            error_log,
            lowered_names: Vec::new(),
            inputs: Vec::new(),
        })
    }

    /// The device architecture sources are compiled for.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    fn link_error(&self, source: rucuda_driver::Error) -> Error {
        Error::Link {
            source,
            log: log_text(&self.error_log),
        }
    }

    /// Compiles `source` as relocatable device code (`-rdc=true`, for the device's
    /// architecture unless `options.arch` is set; through the disk cache) and adds it.
    /// Name expressions of `options` become names [`LinkedModule::function`] knows.
    pub fn add_source(&mut self, source: &str, options: &CompileOptions) -> Result<&mut Self> {
        let mut o = options.clone();
        o.relocatable = true;
        if o.arch.is_none() {
            o.arch = Some(self.arch);
        }
        let compiled: Compiled = compile(source, &o)?;
        let name = format!("{} ({})", o.program_name, self.inputs.len());
        // nvcc's LTO-IR comes wrapped in a fatbin (`-fatbin -arch=lto_XY`).
        let kind = match (o.backend, compiled.output) {
            (Backend::Nvcc, OutputKind::LtoIr) => LinkInput::Fatbin,
            (_, output) => LinkInput::from_output(output),
        };
        self.add_data(kind, &compiled.image, &name)?;
        self.lowered_names.extend(compiled.lowered_names);
        Ok(self)
    }

    /// Adds an image in memory (`cuLinkAddData`). PTX gets a terminating NUL if it lacks
    /// one. `name` appears in the linker's messages.
    pub fn add_data(&mut self, kind: LinkInput, data: &[u8], name: &str) -> Result<&mut Self> {
        let add = rucuda_driver::driver()?
            .cuLinkAddData_v2()
            .map_err(rucuda_driver::Error::from)?;
        let mut owned;
        let bytes: &[u8] = if kind == LinkInput::Ptx && data.last() != Some(&0) {
            owned = Vec::with_capacity(data.len() + 1);
            owned.extend_from_slice(data);
            owned.push(0);
            &owned
        } else {
            data
        };
        let c_name = c_string("an input name", name)?;
        self.ctx.bind()?;
        // SAFETY: the state is live; the driver reads `bytes` during the call and keeps
        // no reference to it; no per-input options.
        let code = unsafe {
            add(
                self.state,
                kind.raw(),
                bytes.as_ptr().cast_mut().cast(),
                bytes.len(),
                c_name.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        rucuda_driver::check(code, "cuLinkAddData_v2").map_err(|e| self.link_error(e))?;
        self.inputs.push(name.to_string());
        Ok(self)
    }

    /// Adds a file (`cuLinkAddFile`); its kind from `kind` or else its extension.
    pub fn add_file(
        &mut self,
        path: impl AsRef<Path>,
        kind: Option<LinkInput>,
    ) -> Result<&mut Self> {
        let path = path.as_ref();
        let kind = kind.or_else(|| LinkInput::from_path(path)).ok_or_else(|| {
            Error::InvalidInput(format!(
                "cannot tell what {} is from its extension: pass its LinkInput",
                path.display()
            ))
        })?;
        let add = rucuda_driver::driver()?
            .cuLinkAddFile_v2()
            .map_err(rucuda_driver::Error::from)?;
        let c_path = c_string("a path", &path.to_string_lossy())?;
        self.ctx.bind()?;
        // SAFETY: the state is live; the path is NUL-terminated; no per-input options.
        let code = unsafe {
            add(
                self.state,
                kind.raw(),
                c_path.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        rucuda_driver::check(code, "cuLinkAddFile_v2").map_err(|e| self.link_error(e))?;
        self.inputs.push(path.display().to_string());
        Ok(self)
    }

    /// Adds a static library of device code (`.a`).
    pub fn add_library(&mut self, path: impl AsRef<Path>) -> Result<&mut Self> {
        self.add_file(path, Some(LinkInput::Library))
    }

    /// Adds `libcudadevrt.a`, the device runtime that dynamic parallelism needs
    /// (PyCUDA's `add_stdlib("cudadevrt")`); see [`find_cudadevrt`].
    pub fn add_cudadevrt(&mut self) -> Result<&mut Self> {
        let path = find_cudadevrt()?;
        self.add_library(path)
    }

    /// Links (`cuLinkComplete`) and loads the result into the context.
    pub fn link(self) -> Result<LinkedModule> {
        let complete = rucuda_driver::driver()?
            .cuLinkComplete()
            .map_err(rucuda_driver::Error::from)?;
        self.ctx.bind()?;
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: the state is live; the driver writes a pointer to the linked image it
        // owns (valid until cuLinkDestroy, in our Drop) and its size.
        let code = unsafe { complete(self.state, &mut out, &mut size) };
        rucuda_driver::check(code, "cuLinkComplete").map_err(|e| self.link_error(e))?;
        if out.is_null() {
            return Err(Error::InvalidInput(
                "cuLinkComplete returned no image".into(),
            ));
        }
        // SAFETY: `out` points to `size` bytes owned by the live link state; copied now.
        let image = unsafe { std::slice::from_raw_parts(out.cast::<u8>(), size) }.to_vec();
        let module = Module::load_data(&self.ctx, &image)?;
        Ok(LinkedModule {
            module,
            image,
            info_log: log_text(&self.info_log),
            lowered_names: self.lowered_names.clone(),
        })
    }
}

impl Drop for Linker {
    fn drop(&mut self) {
        if let Ok(destroy) = rucuda_driver::driver().and_then(|d| Ok(d.cuLinkDestroy()?)) {
            // SAFETY: the state came from cuLinkCreate and is destroyed once, here.
            let _ = unsafe { destroy(self.state) };
        }
    }
}

/// The linked and loaded module.
#[derive(Debug, Clone)]
pub struct LinkedModule {
    /// The loaded module.
    pub module: Module,
    /// The linked cubin (to save, or load elsewhere).
    pub image: Vec<u8>,
    /// The linker's information log.
    pub info_log: String,
    lowered_names: Vec<(String, String)>,
}

impl LinkedModule {
    /// A kernel by name; name expressions of the added sources are lowered.
    pub fn function(&self, name: &str) -> Result<Function> {
        Ok(self.module.function(self.lowered(name))?)
    }

    /// A device global by name; name expressions are lowered.
    pub fn global(&self, name: &str) -> Result<DeviceGlobal> {
        Ok(self.module.global(self.lowered(name))?)
    }

    fn lowered<'a>(&'a self, name: &'a str) -> &'a str {
        self.lowered_names
            .iter()
            .find(|(e, _)| e == name)
            .map_or(name, |(_, l)| l.as_str())
    }
}

/// The device runtime library's file name.
const CUDADEVRT: &str = "libcudadevrt.a";

/// `libcudadevrt.a` inside NVIDIA's wheels (`nvidia-cuda-runtime`), in a site-packages
/// folder.
const CUDADEVRT_IN_WHEEL: &str = "nvidia/cu13/lib/libcudadevrt.a";

/// Where `libcudadevrt.a` is looked for before Python's site-packages, in order: the
/// toolkit's `lib64` folders (`CUDA_PATH`, `CUDA_HOME`, `/usr/local/cuda`), then the
/// folder of the loaded NVRTC (NVIDIA's wheels put both in `nvidia/cu13/lib`).
pub(crate) fn cudadevrt_candidates(
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    nvrtc_dir: Option<&Path>,
) -> Vec<PathBuf> {
    let mut folders = resolve_folders(toolkit::LIB64, env, &mut Vec::new());
    folders.extend(nvrtc_dir.map(Path::to_path_buf));
    folders.into_iter().map(|d| d.join(CUDADEVRT)).collect()
}

/// The path of `libcudadevrt.a`, the device runtime library dynamic parallelism links
/// against, or an error listing where it was looked for and what to install. It looks
/// in the toolkit's `lib64` folders (`CUDA_PATH`, `CUDA_HOME`, `/usr/local/cuda`), the
/// loaded NVRTC's folder, then `nvidia/cu13/lib` in Python's site-packages.
///
/// ```no_run
/// let lib = rucuda_jit::find_cudadevrt()?;
/// println!("{}", lib.display());
/// # Ok::<(), rucuda_jit::Error>(())
/// ```
pub fn find_cudadevrt() -> Result<PathBuf> {
    let nvrtc_dir = Nvrtc::get()
        .ok()
        .and_then(|n| n.file())
        .and_then(Path::parent)
        .map(Path::to_path_buf);
    let candidates = cudadevrt_candidates(&toolkit::process_env, nvrtc_dir.as_deref());
    toolkit::find_file(&toolkit::process_env, candidates, &[CUDADEVRT_IN_WHEEL]).map_err(|tried| {
        Error::NotFound {
            what: "libcudadevrt.a (the device runtime for dynamic parallelism)".into(),
            tried,
            hint: "Install the CUDA toolkit (or `pip install nvidia-cuda-runtime==13.0.*`), or \
                   set CUDA_PATH to the toolkit's folder"
                .into(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cudadevrt_search_order() {
        let env = |n: &str| (n == "CUDA_PATH").then(|| std::ffi::OsString::from("/opt/cuda"));
        let c = cudadevrt_candidates(&env, Some(Path::new("/sp/nvidia/cu13/lib")));
        let want: Vec<PathBuf> = [
            "/opt/cuda/lib64/libcudadevrt.a",
            "/usr/local/cuda/lib64/libcudadevrt.a",
            "/sp/nvidia/cu13/lib/libcudadevrt.a",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(c, want);
    }

    #[test]
    fn input_kinds() {
        for (file, kind) in [
            ("a.cubin", LinkInput::Cubin),
            ("a.PTX", LinkInput::Ptx),
            ("a.fatbin", LinkInput::Fatbin),
            ("a.o", LinkInput::Object),
            ("libx.a", LinkInput::Library),
            ("a.ltoir", LinkInput::LtoIr),
        ] {
            assert_eq!(LinkInput::from_path(Path::new(file)), Some(kind), "{file}");
        }
        assert_eq!(LinkInput::from_path(Path::new("noext")), None);
    }
}
