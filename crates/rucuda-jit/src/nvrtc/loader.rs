//! Finding and opening NVRTC once per process, and the errors of doing so.
//!
//! Candidates, in order: `RUCUDA_NVRTC` (a file path, and then nothing else), the `lib64`
//! folders of `CUDA_PATH` and `CUDA_HOME`, `/usr/local/cuda/lib64`, the system loader path,
//! and the `nvidia/cu13/lib` (or `nvidia/cuda_nvrtc/lib`) folder of NVIDIA's pip wheels in
//! Python's site-packages (asked of `python3` once, only when everything before failed).
//!
//! NVRTC opens `libnvrtc-builtins.so.<major>.<minor>` by name when it compiles; outside
//! the loader path that fails. For a library opened by full path we open the builtins
//! library of the same folder first, by full path, and keep it open, so the later
//! open by name finds it already loaded.

use std::ffi::{c_int, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rucuda_driver_sys::dynlib::{self, FailedCandidate};
pub(crate) use rucuda_driver_sys::python_sites::python_site_packages;
use rucuda_driver_sys::python_sites::{self, dedup};
use rucuda_driver_sys::search::{absolute_entries, version_cmp, LibrarySpec, NotFound};

use super::functions::NvrtcFunctions;

pub use rucuda_driver_sys::MissingFunction;

/// Environment variable naming the NVRTC library file to open instead of searching.
pub const NVRTC_ENV: &str = "RUCUDA_NVRTC";

/// NVRTC and what provides it, for the not-found message.
pub const NVRTC_SPEC: LibrarySpec = LibrarySpec {
    what: "NVRTC (libnvrtc.so.13 or .12)",
    override_env: NVRTC_ENV,
    install: "NVIDIA's wheel (`pip install nvidia-cuda-nvrtc==13.0.*`, found in Python's \
              site-packages; `cargo xtask test` installs it for the tests) or the CUDA toolkit \
              (found through CUDA_PATH, CUDA_HOME or /usr/local/cuda)",
};

/// The library file names tried in each folder and on the loader path, newest first.
const LIBRARY_NAMES: &[&str] = &["libnvrtc.so.13", "libnvrtc.so.12"];

/// The loaded NVRTC library: its version, where it came from and its function table.
///
/// One per process, opened on first use by [`Nvrtc::get`]. Each bound function has a
/// getter of the same name (`nvrtc.nvrtcCompileProgram()`) that returns its pointer or a
/// [`MissingFunction`] error.
pub struct Nvrtc {
    pub(crate) functions: NvrtcFunctions,
    version: (i32, i32),
    opened_as: String,
    file: Option<PathBuf>,
    identity: String,
    include_dir: Option<PathBuf>,
    // Field order is drop order: NVRTC is closed before the builtins library it uses.
    _library: libloading::Library,
    _builtins: Option<libloading::Library>,
}

impl fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Nvrtc")
            .field("version", &self.version)
            .field("opened_as", &self.opened_as)
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

/// Why NVRTC could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NvrtcLoadError {
    /// No candidate library opened (the short message; every place tried is inside).
    NotFound(Box<NotFound>),
    /// A library opened but is not a usable NVRTC.
    NotNvrtc {
        /// The library that opened.
        opened_as: String,
        /// What was wrong with it.
        reason: String,
    },
}

impl fmt::Display for NvrtcLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NvrtcLoadError::NotFound(not_found) => write!(f, "{not_found}"),
            NvrtcLoadError::NotNvrtc { opened_as, reason } => {
                write!(f, "{opened_as} opened but is not a usable NVRTC: {reason}")
            }
        }
    }
}

impl std::error::Error for NvrtcLoadError {}

static NVRTC: OnceLock<Result<Nvrtc, NvrtcLoadError>> = OnceLock::new();

/// One place to look for the library: a full path, or a bare name for the system loader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Candidate {
    /// A file, opened by full path (its folder may hold the builtins library).
    File(PathBuf),
    /// A bare name, searched on the system loader path.
    Name(&'static str),
}

/// The candidates that need no subprocess: environment, toolkit folders, loader path.
/// A relative `CUDA_PATH` or `CUDA_HOME` is left out and noted in `skipped`.
pub(crate) fn direct_candidates(
    env: &dyn Fn(&str) -> Option<OsString>,
    skipped: &mut Vec<String>,
) -> Vec<Candidate> {
    if let Some(path) = env(NVRTC_ENV) {
        return vec![Candidate::File(PathBuf::from(path))];
    }
    let mut folders: Vec<PathBuf> = Vec::new();
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        for root in absolute_entries(env, var, skipped) {
            folders.push(root.join("lib64"));
        }
    }
    folders.push(PathBuf::from("/usr/local/cuda/lib64"));
    let mut out = Vec::new();
    for folder in dedup(folders) {
        for name in LIBRARY_NAMES {
            out.push(Candidate::File(folder.join(name)));
        }
    }
    for name in LIBRARY_NAMES {
        out.push(Candidate::Name(name));
    }
    out
}

/// The candidates inside Python's site-packages folders.
pub(crate) fn wheel_candidates(site_packages: &[PathBuf]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for site in site_packages {
        out.push(Candidate::File(site.join("nvidia/cu13/lib/libnvrtc.so.13")));
        out.push(Candidate::File(
            site.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12"),
        ));
    }
    out
}

/// Site-packages folders found without running Python, from this process's environment
/// (see [`rucuda_driver_sys::python_sites::guessed_site_packages`]).
pub(crate) fn guessed_site_packages() -> Vec<PathBuf> {
    python_sites::guessed_site_packages(&|name| std::env::var_os(name))
}

/// The builtins library beside `nvrtc_file`: `libnvrtc-builtins.so.<major>.<minor>`
/// (not the `.alt` variant).
pub(crate) fn builtins_beside(nvrtc_file: &Path) -> Option<PathBuf> {
    let folder = nvrtc_file.parent()?;
    let file_name = nvrtc_file.file_name()?.to_str()?;
    let major = file_name.strip_prefix("libnvrtc.so.")?.split('.').next()?;
    let prefix = format!("libnvrtc-builtins.so.{major}.");
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .map(|e| e.path())
        .collect();
    // 13.10 after 13.9: compared as versions, not as strings.
    found.sort_by(|a, b| version_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
    found.pop()
}

/// The CUDA headers' folder: `include` beside the NVRTC library's folder (toolkit and
/// wheel layouts alike), else that of `CUDA_PATH`, `CUDA_HOME`, `/usr/local/cuda`; the
/// first holding `cuda_fp16.h`.
pub(crate) fn toolkit_include_dir(
    nvrtc_file: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(root) = nvrtc_file.and_then(Path::parent).and_then(Path::parent) {
        dirs.push(root.join("include"));
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        for root in absolute_entries(env, var, &mut Vec::new()) {
            dirs.push(root.join("include"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/include"));
    dirs.into_iter().find(|d| d.join("cuda_fp16.h").is_file())
}

/// The file a library opened by bare name came from, read off `/proc/self/maps`.
fn mapped_file(name_prefix: &str) -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .map(Path::new)
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(name_prefix))
        })
        .map(Path::to_path_buf)
}

impl Nvrtc {
    /// The process's NVRTC, opened on the first call. Later calls return the same table,
    /// or the same error.
    ///
    /// ```no_run
    /// let nvrtc = rucuda_jit::nvrtc::Nvrtc::get()?;
    /// println!("NVRTC {:?} from {}", nvrtc.version(), nvrtc.opened_as());
    /// # Ok::<(), rucuda_jit::nvrtc::NvrtcLoadError>(())
    /// ```
    pub fn get() -> Result<&'static Nvrtc, NvrtcLoadError> {
        NVRTC
            .get_or_init(Nvrtc::open)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// True when NVRTC can be opened (the error, if any, is kept for [`Nvrtc::get`]).
    pub fn is_present() -> bool {
        Nvrtc::get().is_ok()
    }

    fn open() -> Result<Nvrtc, NvrtcLoadError> {
        let env = |name: &str| std::env::var_os(name);
        let explicit = env(NVRTC_ENV).is_some();
        let mut tried = Vec::new();
        let mut skipped = Vec::new();
        for candidate in direct_candidates(&env, &mut skipped) {
            if let Some(nvrtc) = Nvrtc::try_candidate(&candidate, &mut tried)? {
                return Ok(nvrtc);
            }
        }
        if !explicit {
            // Folders found without a subprocess first; Python is asked only after.
            let guessed = guessed_site_packages();
            for candidate in wheel_candidates(&guessed) {
                if let Some(nvrtc) = Nvrtc::try_candidate(&candidate, &mut tried)? {
                    return Ok(nvrtc);
                }
            }
            let asked: Vec<PathBuf> = python_site_packages()
                .iter()
                .filter(|s| !guessed.contains(s))
                .cloned()
                .collect();
            for candidate in wheel_candidates(&asked) {
                if let Some(nvrtc) = Nvrtc::try_candidate(&candidate, &mut tried)? {
                    return Ok(nvrtc);
                }
            }
        }
        if !explicit {
            // Python's folders are searched for the wheel; relative PATH entries are not.
            absolute_entries(&env, "PATH", &mut skipped);
        }
        Err(NvrtcLoadError::NotFound(Box::new(NotFound {
            spec: NVRTC_SPEC,
            tried,
            skipped_relative: skipped,
        })))
    }

    /// Opens one candidate: `Ok(None)` when it is not there (recorded in `tried`).
    fn try_candidate(
        candidate: &Candidate,
        tried: &mut Vec<FailedCandidate>,
    ) -> Result<Option<Nvrtc>, NvrtcLoadError> {
        let (target, file): (OsString, Option<PathBuf>) = match candidate {
            Candidate::File(path) => {
                if !path.is_file() {
                    tried.push(FailedCandidate {
                        candidate: path.display().to_string(),
                        reason: "no such file".into(),
                    });
                    return Ok(None);
                }
                (path.clone().into_os_string(), Some(path.clone()))
            }
            Candidate::Name(name) => ((*name).into(), None),
        };
        // Open the builtins library of the same folder first, by full path.
        let builtins = file
            .as_deref()
            .and_then(builtins_beside)
            .and_then(|b| dynlib::open_first([b.into_os_string()]).ok())
            .map(|opened| opened.library);
        let opened = match dynlib::open_first([target]) {
            Ok(opened) => opened,
            Err(mut failed) => {
                tried.append(&mut failed);
                return Ok(None);
            }
        };
        let opened_as = opened.opened_as.to_string_lossy().into_owned();
        let library = opened.library;
        let functions = NvrtcFunctions::resolve(&mut |name| dynlib::symbol(&library, name));
        let get_version = functions
            .nvrtcVersion
            .ok_or_else(|| NvrtcLoadError::NotNvrtc {
                opened_as: opened_as.clone(),
                reason: "it has no nvrtcVersion".into(),
            })?;
        let (mut major, mut minor): (c_int, c_int) = (0, 0);
        // SAFETY: nvrtcVersion writes two ints through valid pointers.
        let code = unsafe { get_version(&mut major, &mut minor) };
        if code != super::bindings::nvrtcResult::NVRTC_SUCCESS {
            return Err(NvrtcLoadError::NotNvrtc {
                opened_as,
                reason: format!("nvrtcVersion returned {}", code.0),
            });
        }
        let file = file.or_else(|| mapped_file("libnvrtc.so"));
        // The size tells apart patch releases of one minor version (13.0.48 and 13.0.88
        // both report 13.0), whose code generation may differ.
        let size = file
            .as_deref()
            .and_then(|f| std::fs::metadata(f).ok())
            .map_or(0, |m| m.len());
        let identity = format!("nvrtc {major}.{minor} ({size} bytes)");
        let include_dir = toolkit_include_dir(file.as_deref(), &|n: &str| std::env::var_os(n));
        Ok(Some(Nvrtc {
            functions,
            version: (major, minor),
            opened_as,
            file,
            identity,
            include_dir,
            _library: library,
            _builtins: builtins,
        }))
    }

    /// NVRTC's version, `(major, minor)`: `(13, 0)`.
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// The name or path the library was opened by.
    pub fn opened_as(&self) -> &str {
        &self.opened_as
    }

    /// The library file, where it is known.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// A string that changes whenever the compiler may produce different code: the
    /// version and the library file's size. Part of every cache key.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The CUDA headers' folder that goes with this NVRTC (see
    /// [`CompileOptions::toolkit_include`](crate::CompileOptions::toolkit_include)).
    pub fn toolkit_include_dir(&self) -> Option<&Path> {
        self.include_dir.as_deref()
    }

    /// The whole function table, for callers that check presence themselves.
    pub fn functions(&self) -> &NvrtcFunctions {
        &self.functions
    }

    /// The architectures this NVRTC can compile for (`nvrtcGetSupportedArchs`), as
    /// numbers such as 75, 80, 90, 100.
    pub fn supported_archs(&self) -> Result<Vec<i32>, crate::Error> {
        let count_fn = self.nvrtcGetNumSupportedArchs()?;
        let list_fn = self.nvrtcGetSupportedArchs()?;
        let mut count: c_int = 0;
        // SAFETY: writes one int through a valid pointer.
        let code = unsafe { count_fn(&mut count) };
        super::check(self, code, "nvrtcGetNumSupportedArchs")?;
        let mut archs = vec![0 as c_int; usize::try_from(count).unwrap_or(0)];
        // SAFETY: the buffer holds the `count` ints NVRTC said it would write.
        let code = unsafe { list_fn(archs.as_mut_ptr()) };
        super::check(self, code, "nvrtcGetSupportedArchs")?;
        Ok(archs)
    }

    pub(crate) fn missing(&self, name: &'static str) -> MissingFunction {
        MissingFunction {
            name,
            library_version: self.version.0 * 1000 + self.version.1 * 10,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_path_is_the_only_candidate() {
        let env = |name: &str| (name == NVRTC_ENV).then(|| OsString::from("/opt/x/libnvrtc.so.13"));
        assert_eq!(
            direct_candidates(&env, &mut Vec::new()),
            vec![Candidate::File("/opt/x/libnvrtc.so.13".into())]
        );
    }

    #[test]
    fn toolkit_folders_then_loader_path() {
        let env = |name: &str| match name {
            "CUDA_PATH" => Some(OsString::from("/opt/cuda")),
            "CUDA_HOME" => Some(OsString::from("/usr/local/cuda")),
            _ => None,
        };
        let c = direct_candidates(&env, &mut Vec::new());
        assert_eq!(
            c[0],
            Candidate::File("/opt/cuda/lib64/libnvrtc.so.13".into())
        );
        assert_eq!(
            c[1],
            Candidate::File("/opt/cuda/lib64/libnvrtc.so.12".into())
        );
        // CUDA_HOME equals the default folder: listed once.
        assert_eq!(
            c[2],
            Candidate::File("/usr/local/cuda/lib64/libnvrtc.so.13".into())
        );
        assert_eq!(c[4], Candidate::Name("libnvrtc.so.13"));
        assert_eq!(c.len(), 6);
    }

    #[test]
    fn wheel_layouts() {
        let c = wheel_candidates(&["/sp".into()]);
        assert_eq!(
            c[0],
            Candidate::File("/sp/nvidia/cu13/lib/libnvrtc.so.13".into())
        );
        assert_eq!(
            c[1],
            Candidate::File("/sp/nvidia/cuda_nvrtc/lib/libnvrtc.so.12".into())
        );
    }

    #[test]
    fn builtins_found_beside_the_library() {
        let dir = std::env::temp_dir().join(format!("rucuda-jit-builtins-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in [
            "libnvrtc.so.13",
            "libnvrtc-builtins.so.13.0",
            "libnvrtc-builtins.alt.so.13.0",
        ] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        let found = builtins_beside(&dir.join("libnvrtc.so.13")).unwrap();
        assert_eq!(found, dir.join("libnvrtc-builtins.so.13.0"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn headers_beside_the_library_first() {
        let root = std::env::temp_dir().join(format!("rucuda-jit-tkinc-{}", std::process::id()));
        let (wheel, toolkit) = (root.join("wheel"), root.join("toolkit"));
        for d in [&wheel, &toolkit] {
            std::fs::create_dir_all(d.join("include")).unwrap();
            std::fs::create_dir_all(d.join("lib")).unwrap();
        }
        std::fs::write(toolkit.join("include/cuda_fp16.h"), "").unwrap();
        let lib = wheel.join("lib/libnvrtc.so.13");
        let env = |n: &str| (n == "CUDA_PATH").then(|| toolkit.clone().into_os_string());
        // The wheel's folder lacks the headers: CUDA_PATH's.
        assert_eq!(
            toolkit_include_dir(Some(&lib), &env),
            Some(toolkit.join("include"))
        );
        std::fs::write(wheel.join("include/cuda_fp16.h"), "").unwrap();
        assert_eq!(
            toolkit_include_dir(Some(&lib), &env),
            Some(wheel.join("include"))
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn not_found_message_says_what_to_install() {
        let e = NvrtcLoadError::NotFound(Box::new(NotFound {
            spec: NVRTC_SPEC,
            tried: vec![FailedCandidate {
                candidate: "libnvrtc.so.13".into(),
                reason: "cannot open".into(),
            }],
            skipped_relative: Vec::new(),
        }));
        let text = e.to_string();
        assert!(
            text.contains("pip install nvidia-cuda-nvrtc==13.0.*"),
            "{text}"
        );
        assert!(text.contains("looked in libnvrtc.so.13"), "{text}");
        assert!(text.contains(NVRTC_ENV), "{text}");
        assert!(format!("{e:?}").contains("cannot open"));
    }

    #[test]
    fn relative_toolkit_folders_are_skipped() {
        let env = |name: &str| (name == "CUDA_PATH").then(|| OsString::from("cuda"));
        let mut skipped = Vec::new();
        let c = direct_candidates(&env, &mut skipped);
        assert!(!c.contains(&Candidate::File("cuda/lib64/libnvrtc.so.13".into())));
        assert_eq!(skipped, ["CUDA_PATH entry `cuda`"]);
    }

    #[test]
    fn builtins_sorted_as_versions() {
        let dir =
            std::env::temp_dir().join(format!("rucuda-jit-builtins-v-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["libnvrtc-builtins.so.13.9", "libnvrtc-builtins.so.13.10"] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        let found = builtins_beside(&dir.join("libnvrtc.so.13")).unwrap();
        assert_eq!(found, dir.join("libnvrtc-builtins.so.13.10"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
