//! Opening `libcuda.so.1` once per process (found by `rucuda-dylib`'s search) and the
//! errors of doing so.

use std::ffi::c_int;
use std::fmt;
use std::sync::OnceLock;

use rucuda_dylib::{dynlib, LibrarySearch, LibrarySpec, NotFound, Opened};

use crate::bindings::CUresult;
use crate::functions::DriverFunctions;

/// Environment variable naming the driver library to open instead of the default.
pub const LIBCUDA_ENV: &str = "RUCUDA_LIBCUDA";

/// The loaded driver: the library, its version and its function table.
///
/// One per process, opened on first use by [`Driver::get`]. Each bound function has a
/// getter of the same name (`driver.cuMemAlloc_v2()`, or the header's alias
/// `driver.cuMemAlloc()`) that returns its pointer or a [`MissingFunction`] error.
pub struct Driver {
    pub(crate) functions: DriverFunctions,
    version: i32,
    opened_as: String,
    _library: libloading::Library,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("version", &self.version)
            .field("opened_as", &self.opened_as)
            .finish_non_exhaustive()
    }
}

/// Why the driver library could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// No candidate library opened (the short message; every name tried is inside).
    NotFound(Box<NotFound>),
    /// The library opened but is not a usable CUDA driver.
    NotADriver {
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
            LoadError::NotADriver { opened_as, reason } => {
                write!(
                    f,
                    "{opened_as} opened but is not a usable CUDA driver: {reason}"
                )
            }
        }
    }
}

impl std::error::Error for LoadError {}

impl From<NotFound> for LoadError {
    fn from(not_found: NotFound) -> LoadError {
        LoadError::NotFound(Box::new(not_found))
    }
}

/// A function the loaded library does not provide (it is older than our headers, or a
/// tool such as a profiler interposed a library that lacks it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingFunction {
    /// The C name of the function.
    pub name: &'static str,
    /// The library's version as it reports it (`cuDriverGetVersion`: 12040 is 12.4).
    pub library_version: i32,
}

impl fmt::Display for MissingFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.library_version;
        write!(
            f,
            "{} is not provided by the loaded library (version {}.{}, {}); it needs a newer one",
            self.name,
            v / 1000,
            (v % 1000) / 10,
            v
        )
    }
}

impl std::error::Error for MissingFunction {}

/// The driver library and what provides it.
pub const LIBCUDA_SPEC: LibrarySpec = LibrarySpec {
    what: "the CUDA driver library libcuda.so.1",
    override_env: LIBCUDA_ENV,
    install: "the NVIDIA GPU driver (Debian/Ubuntu: libcuda1 or libnvidia-compute-<version>; \
              containers: the NVIDIA Container Toolkit mounts it)",
};

/// Where the driver library is: only on the system loader path (or where
/// `RUCUDA_LIBCUDA` says). It has no pip wheel, so Python is never asked.
const LIBCUDA_SEARCH: LibrarySearch = LibrarySearch {
    spec: LIBCUDA_SPEC,
    names: if cfg!(windows) {
        &["nvcuda.dll"]
    } else {
        &["libcuda.so.1", "libcuda.so"]
    },
    folders: &[],
    wheel_files: &[],
    preload_beside: None,
};

static DRIVER: OnceLock<Result<Driver, LoadError>> = OnceLock::new();

impl Driver {
    /// The process's driver, opened on the first call. Later calls return the same
    /// table, or the same error.
    pub fn get() -> Result<&'static Driver, LoadError> {
        DRIVER
            .get_or_init(Driver::open)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// True when the driver library can be opened (no error is kept).
    pub fn is_present() -> bool {
        Driver::get().is_ok()
    }

    fn open() -> Result<Driver, LoadError> {
        LIBCUDA_SEARCH.open(&|name| std::env::var_os(name), Driver::from_library)
    }

    /// Resolves the table of an opened library and asks its version.
    fn from_library(opened: Opened) -> Result<Driver, LoadError> {
        let Opened {
            library, opened_as, ..
        } = opened;
        let functions = DriverFunctions::resolve(&mut |name| dynlib::symbol(&library, name));
        let get_version = functions
            .cuDriverGetVersion
            .ok_or_else(|| LoadError::NotADriver {
                opened_as: opened_as.clone(),
                reason: "it has no cuDriverGetVersion".into(),
            })?;
        let mut version: c_int = 0;
        // SAFETY: cuDriverGetVersion writes one int through a valid pointer; it needs no cuInit.
        let code = unsafe { get_version(&mut version) };
        if code != CUresult::CUDA_SUCCESS {
            return Err(LoadError::NotADriver {
                opened_as,
                reason: format!("cuDriverGetVersion returned {}", code.0),
            });
        }
        Ok(Driver {
            functions,
            version,
            opened_as,
            _library: library,
        })
    }

    /// The driver's CUDA version (`cuDriverGetVersion`): 13000 is CUDA 13.0.
    pub fn version(&self) -> i32 {
        self.version
    }

    /// The name or path the library was opened by.
    pub fn opened_as(&self) -> &str {
        &self.opened_as
    }

    /// The whole function table, for callers that check presence themselves.
    pub fn functions(&self) -> &DriverFunctions {
        &self.functions
    }

    pub(crate) fn missing(&self, name: &'static str) -> MissingFunction {
        MissingFunction {
            name,
            library_version: self.version,
        }
    }
}
