//! Finding and opening NCCL (`libnccl.so.2`) once per process, and the errors of doing so.
//!
//! Where it looks (`NCCL_SEARCH`, opened by `rucuda-dylib`'s search), in order:
//! 1. `RUCUDA_NCCL`: a file path, and then nothing else;
//! 2. `libnccl.so.2` (then `libnccl.so`) on the system loader path (`LD_LIBRARY_PATH`,
//!    `ldconfig`'s cache: a system package or a CUDA install);
//! 3. the `nvidia/nccl/lib` folder of NVIDIA's pip wheel (`nvidia-nccl-cu13`, which
//!    PyTorch also installs) in Python's site-packages: first the folders found without
//!    running Python (`VIRTUAL_ENV`, `CONDA_PREFIX`, `~/.local`, pyenv's interpreters,
//!    every `python3` on `PATH`), then, only when all of that failed, those `python3`
//!    reports.

use std::ffi::c_int;
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use rucuda_dylib::{dynlib, LibrarySearch, LibrarySpec, NotFound, Opened};

use super::bindings::ncclResult_t;
use super::functions::NcclFunctions;

/// Environment variable naming the NCCL library file to open instead of searching.
pub const NCCL_ENV: &str = "RUCUDA_NCCL";

/// The pip package that provides the library, named in the not-found message.
pub const NCCL_WHEEL: &str = "nvidia-nccl-cu13";

/// NCCL and what provides it, for the not-found message.
pub const NCCL_SPEC: LibrarySpec = LibrarySpec {
    what: "NCCL (libnccl.so.2)",
    override_env: NCCL_ENV,
    install: "NVIDIA's wheel (`pip install nvidia-nccl-cu13`, found in Python's site-packages; \
              PyTorch installs it too) or your distribution's libnccl2 package",
};

/// Where NCCL may be: on the system loader path, then in NVIDIA's wheel.
pub(crate) const NCCL_SEARCH: LibrarySearch = LibrarySearch {
    spec: NCCL_SPEC,
    names: &["libnccl.so.2", "libnccl.so"],
    folders: &[],
    wheel_files: &["nvidia/nccl/lib/libnccl.so.2"],
    preload_beside: None,
};

/// An NCCL version, as `ncclGetVersion` reports it.
///
/// ```
/// use rucuda_nccl::NcclVersion;
/// let v = NcclVersion::from_code(22809);
/// assert_eq!((v.major, v.minor, v.patch), (2, 28, 9));
/// assert_eq!(v.to_string(), "2.28.9");
/// // Before 2.9 the code had one digit less for the minor version.
/// assert_eq!(NcclVersion::from_code(2804).to_string(), "2.8.4");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NcclVersion {
    /// Major version (2).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Patch level.
    pub patch: u32,
}

impl NcclVersion {
    /// Decodes `NCCL_VERSION_CODE`: `major*10000 + minor*100 + patch` since 2.9,
    /// `major*1000 + minor*100 + patch` before.
    pub const fn from_code(code: u32) -> NcclVersion {
        if code >= 10_000 {
            NcclVersion {
                major: code / 10_000,
                minor: (code % 10_000) / 100,
                patch: code % 100,
            }
        } else {
            NcclVersion {
                major: code / 1000,
                minor: (code % 1000) / 100,
                patch: code % 100,
            }
        }
    }

    /// True when this version is `major.minor` or newer.
    pub const fn at_least(self, major: u32, minor: u32) -> bool {
        self.major > major || (self.major == major && self.minor >= minor)
    }
}

impl fmt::Display for NcclVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The loaded NCCL library: its version, where it came from and its function table.
///
/// One per process, opened on first use by [`Nccl::get`]. Each bound function has a
/// getter of the same name (`nccl.ncclAllReduce()`) that returns its pointer or a
/// [`MissingFunction`] error.
///
/// ```no_run
/// let nccl = rucuda_nccl::Nccl::get()?;
/// println!("NCCL {} from {}", nccl.version(), nccl.opened_as());
/// # Ok::<(), rucuda_nccl::LoadError>(())
/// ```
pub struct Nccl {
    pub(crate) functions: NcclFunctions,
    version: NcclVersion,
    opened_as: String,
    _library: libloading::Library,
}

impl fmt::Debug for Nccl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Nccl")
            .field("version", &self.version)
            .field("opened_as", &self.opened_as)
            .finish_non_exhaustive()
    }
}

/// Why NCCL could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// No candidate library opened (the short message; every place tried is inside).
    NotFound(Box<NotFound>),
    /// A library opened but is not a usable NCCL.
    NotNccl {
        /// The library that opened.
        opened_as: String,
        /// What was wrong with it.
        reason: String,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotFound(not_found) => write!(f, "{not_found}"),
            LoadError::NotNccl { opened_as, reason } => {
                write!(f, "{opened_as} opened but is not a usable NCCL: {reason}")
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// A function the loaded NCCL does not provide (it is older than our header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingFunction {
    /// The C name of the function.
    pub name: &'static str,
    /// The loaded library's version.
    pub library_version: NcclVersion,
}

impl fmt::Display for MissingFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is not provided by the loaded NCCL {}; it needs a newer NCCL",
            self.name, self.library_version
        )
    }
}

impl std::error::Error for MissingFunction {}

impl From<NotFound> for LoadError {
    fn from(not_found: NotFound) -> LoadError {
        LoadError::NotFound(Box::new(not_found))
    }
}

static NCCL: OnceLock<Result<Nccl, LoadError>> = OnceLock::new();

impl Nccl {
    /// The process's NCCL, opened on the first call. Later calls return the same table,
    /// or the same error.
    pub fn get() -> Result<&'static Nccl, LoadError> {
        NCCL.get_or_init(Nccl::open).as_ref().map_err(Clone::clone)
    }

    /// True when NCCL can be opened (the error, if any, is kept for [`Nccl::get`]).
    ///
    /// ```
    /// if !rucuda_nccl::Nccl::is_present() {
    ///     println!("no NCCL here: {}", rucuda_nccl::Nccl::get().unwrap_err());
    /// }
    /// ```
    pub fn is_present() -> bool {
        Nccl::get().is_ok()
    }

    /// Opens the library file at `path` (not the process's shared table): for tools that
    /// compare libraries, and for tests.
    ///
    /// ```
    /// let e = rucuda_nccl::Nccl::open_path("/no/such/libnccl.so.2").unwrap_err();
    /// assert!(e.to_string().contains("looked in /no/such/libnccl.so.2"));
    /// ```
    pub fn open_path(path: impl AsRef<Path>) -> Result<Nccl, LoadError> {
        NCCL_SEARCH.open_file(path.as_ref(), Nccl::from_library)
    }

    fn open() -> Result<Nccl, LoadError> {
        NCCL_SEARCH.open(&|name| std::env::var_os(name), Nccl::from_library)
    }

    /// Resolves the table of an opened library and asks its version.
    fn from_library(opened: Opened) -> Result<Nccl, LoadError> {
        let Opened {
            library, opened_as, ..
        } = opened;
        let functions = NcclFunctions::resolve(&mut |name| dynlib::symbol(&library, name));
        let get_version = functions.ncclGetVersion.ok_or_else(|| LoadError::NotNccl {
            opened_as: opened_as.clone(),
            reason: "it has no ncclGetVersion".into(),
        })?;
        let mut code: c_int = 0;
        // SAFETY: ncclGetVersion writes one int through a valid pointer; it needs no GPU.
        let result = unsafe { get_version(&mut code) };
        if result != ncclResult_t::ncclSuccess || code <= 0 {
            return Err(LoadError::NotNccl {
                opened_as,
                reason: format!("ncclGetVersion returned {} (version {code})", result.0),
            });
        }
        Ok(Nccl {
            functions,
            version: NcclVersion::from_code(code.unsigned_abs()),
            opened_as,
            _library: library,
        })
    }

    /// The library's version (`ncclGetVersion`).
    pub fn version(&self) -> NcclVersion {
        self.version
    }

    /// The name or path the library was opened by.
    pub fn opened_as(&self) -> &str {
        &self.opened_as
    }

    /// The whole function table, for callers that check presence themselves.
    pub fn functions(&self) -> &NcclFunctions {
        &self.functions
    }

    pub(crate) fn missing(&self, name: &'static str) -> MissingFunction {
        MissingFunction {
            name,
            library_version: self.version,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rucuda_dylib::dynlib::FailedCandidate;
    use rucuda_dylib::Candidate;
    use std::ffi::OsString;

    #[test]
    fn explicit_path_is_the_only_candidate() {
        let env = |name: &str| (name == NCCL_ENV).then(|| OsString::from("/opt/x/libnccl.so.2"));
        assert_eq!(
            NCCL_SEARCH.direct_candidates(&env, &mut Vec::new()),
            vec![Candidate::File("/opt/x/libnccl.so.2".into())]
        );
    }

    #[test]
    fn loader_path_then_wheels() {
        let env = |_: &str| None;
        assert_eq!(
            NCCL_SEARCH.direct_candidates(&env, &mut Vec::new()),
            vec![
                Candidate::Name("libnccl.so.2".into()),
                Candidate::Name("libnccl.so".into())
            ]
        );
        assert_eq!(
            NCCL_SEARCH.wheel_candidates(Path::new("/sp")),
            vec![Candidate::File("/sp/nvidia/nccl/lib/libnccl.so.2".into())]
        );
    }

    #[test]
    fn not_found_message_says_what_to_install() {
        let e = LoadError::from(NCCL_SEARCH.not_found(
            vec![FailedCandidate {
                candidate: "libnccl.so.2".into(),
                reason: "cannot open".into(),
            }],
            Vec::new(),
        ));
        let text = e.to_string();
        assert!(text.contains("pip install nvidia-nccl-cu13"), "{text}");
        assert!(text.contains("looked in libnccl.so.2"), "{text}");
        assert!(text.contains(NCCL_ENV), "{text}");
    }

    #[test]
    fn a_file_that_is_not_nccl_is_refused() {
        let dir = std::env::temp_dir().join(format!("rucuda-nccl-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fake = dir.join("libnccl.so.2");
        std::fs::write(&fake, b"not a shared object").unwrap();
        match Nccl::open_path(&fake) {
            Err(LoadError::NotFound(not_found)) => {
                assert_eq!(not_found.tried.len(), 1);
                assert_eq!(not_found.tried[0].candidate, fake.display().to_string());
            }
            other => panic!("expected NotFound, got {other:?}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn versions_decode_and_compare() {
        let v = NcclVersion::from_code(22703);
        assert_eq!(v.to_string(), "2.27.3");
        assert!(v.at_least(2, 19) && v.at_least(2, 27) && !v.at_least(2, 28));
        let m = MissingFunction {
            name: "ncclCommSplit",
            library_version: NcclVersion::from_code(21703),
        };
        assert_eq!(
            m.to_string(),
            "ncclCommSplit is not provided by the loaded NCCL 2.17.3; it needs a newer NCCL"
        );
    }
}
