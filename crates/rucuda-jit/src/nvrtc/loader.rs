//! Finding and opening NVRTC once per process, what the library says about itself, and
//! the errors of doing so.
//!
//! Where it looks (`NVRTC_SEARCH`, opened by `rucuda-dylib`'s search), in order:
//! `RUCUDA_NVRTC` (and then nothing else), the `lib64` folders of `CUDA_PATH`,
//! `CUDA_HOME` and `/usr/local/cuda`, the system loader path, and the `nvidia/cu13/lib`
//! (or `nvidia/cuda_nvrtc/lib`) folder of NVIDIA's pip wheels in Python's site-packages
//! (`python3` is asked once, only when everything before failed).
//!
//! NVRTC opens `libnvrtc-builtins.so.<major>.<minor>` by name when it compiles, which
//! fails outside the loader path. For a library opened by full path the search opens the
//! builtins library of the same folder first, by full path (`builtins_beside`), and
//! [`Nvrtc`] keeps it open, so NVRTC's open by name finds it already loaded.

use std::ffi::{c_int, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rucuda_dylib::search::version_cmp;
use rucuda_dylib::{dynlib, resolve_folders, LibrarySearch, LibrarySpec, NotFound, Opened};

use super::bindings::nvrtcResult;
use super::functions::NvrtcFunctions;
use crate::toolkit;

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

/// Where NVRTC may be: the library names newest first, in the toolkit's `lib64` folders,
/// on the loader path, and in NVIDIA's wheels (CUDA 13's, then CUDA 12's layout).
pub(crate) const NVRTC_SEARCH: LibrarySearch = LibrarySearch {
    spec: NVRTC_SPEC,
    names: &["libnvrtc.so.13", "libnvrtc.so.12"],
    folders: toolkit::LIB64,
    wheel_files: &[
        "nvidia/cu13/lib/libnvrtc.so.13",
        "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
    ],
    preload_beside: Some(builtins_beside),
};

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

impl From<NotFound> for NvrtcLoadError {
    fn from(not_found: NotFound) -> NvrtcLoadError {
        NvrtcLoadError::NotFound(Box::new(not_found))
    }
}

static NVRTC: OnceLock<Result<Nvrtc, NvrtcLoadError>> = OnceLock::new();

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
    let beside = nvrtc_file
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(|root| root.join("include"));
    beside
        .into_iter()
        .chain(resolve_folders(toolkit::INCLUDE, env, &mut Vec::new()))
        .find(|d| d.join("cuda_fp16.h").is_file())
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
        NVRTC_SEARCH.open(&toolkit::process_env, Nvrtc::from_library)
    }

    /// Resolves the table of an opened library and reads what it says about itself.
    fn from_library(opened: Opened) -> Result<Nvrtc, NvrtcLoadError> {
        let Opened {
            library,
            opened_as,
            file,
            preloaded,
        } = opened;
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
        if code != nvrtcResult::NVRTC_SUCCESS {
            return Err(NvrtcLoadError::NotNvrtc {
                opened_as,
                reason: format!("nvrtcVersion returned {}", code.0),
            });
        }
        let file = file.or_else(|| dynlib::mapped_file("libnvrtc.so"));
        // The size tells apart patch releases of one minor version (13.0.48 and 13.0.88
        // both report 13.0), whose code generation may differ.
        let size = file
            .as_deref()
            .and_then(|f| std::fs::metadata(f).ok())
            .map_or(0, |m| m.len());
        let identity = format!("nvrtc {major}.{minor} ({size} bytes)");
        let include_dir = toolkit_include_dir(file.as_deref(), &toolkit::process_env);
        Ok(Nvrtc {
            functions,
            version: (major, minor),
            opened_as,
            file,
            identity,
            include_dir,
            _library: library,
            _builtins: preloaded,
        })
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
    use rucuda_dylib::dynlib::FailedCandidate;
    use rucuda_dylib::Candidate;

    fn direct_candidates(
        env: &dyn Fn(&str) -> Option<OsString>,
        skipped: &mut Vec<String>,
    ) -> Vec<Candidate> {
        NVRTC_SEARCH.direct_candidates(env, skipped)
    }

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
        assert_eq!(c[4], Candidate::Name("libnvrtc.so.13".into()));
        assert_eq!(c.len(), 6);
    }

    #[test]
    fn wheel_layouts() {
        let c = NVRTC_SEARCH.wheel_candidates(Path::new("/sp"));
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
        let e = NvrtcLoadError::from(NVRTC_SEARCH.not_found(
            vec![FailedCandidate {
                candidate: "libnvrtc.so.13".into(),
                reason: "cannot open".into(),
            }],
            Vec::new(),
        ));
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
