//! Opening a shared library by name or path, reporting the loader's reason for every
//! candidate that failed, and reading its symbols.

use std::ffi::{c_void, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

/// A shared library that was opened, and the name or path it was opened by.
pub struct OpenedLibrary {
    /// The open library; closed when dropped.
    pub library: libloading::Library,
    /// The candidate that worked.
    pub opened_as: OsString,
}

impl fmt::Debug for OpenedLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenedLibrary")
            .field("opened_as", &self.opened_as)
            .finish()
    }
}

/// One candidate that failed to open, with the loader's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedCandidate {
    /// The name or path tried.
    pub candidate: String,
    /// What the system loader said.
    pub reason: String,
}

impl fmt::Display for FailedCandidate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.candidate, self.reason)
    }
}

/// Opens the first candidate that loads. Each candidate is a file name (searched on the
/// system loader path) or a full path.
///
/// ```
/// let tried = rucuda_dylib::dynlib::open_first(["libsurely-not-here.so.9"]).unwrap_err();
/// assert_eq!(tried[0].candidate, "libsurely-not-here.so.9");
/// ```
pub fn open_first<I, S>(candidates: I) -> Result<OpenedLibrary, Vec<FailedCandidate>>
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    let mut failed = Vec::new();
    for candidate in candidates {
        let candidate: OsString = candidate.into();
        // SAFETY: opening a library runs its initialisers; the candidates are the CUDA
        // libraries (or paths the user named for them), whose initialisers are sound.
        match unsafe { libloading::Library::new(&candidate) } {
            Ok(library) => {
                return Ok(OpenedLibrary {
                    library,
                    opened_as: candidate,
                })
            }
            Err(e) => failed.push(FailedCandidate {
                candidate: candidate.to_string_lossy().into_owned(),
                reason: e.to_string(),
            }),
        }
    }
    Err(failed)
}

/// Looks up a NUL-terminated symbol name, `None` when the library lacks it.
pub fn symbol(library: &libloading::Library, name: &[u8]) -> Option<*mut c_void> {
    // SAFETY: we read the symbol's address only, as an untyped pointer; the caller gives
    // it a type that matches the C declaration.
    let sym = unsafe { library.get::<*mut c_void>(name) }.ok()?;
    let ptr = *sym;
    (!ptr.is_null()).then_some(ptr)
}

/// The file of a library this process has loaded whose file name starts with
/// `name_prefix`, read off `/proc/self/maps`: where a library opened by bare name came
/// from. `None` where there is no such file or no `/proc` (not Linux).
///
/// ```
/// assert_eq!(rucuda_dylib::dynlib::mapped_file("libsurely-not-loaded.so"), None);
/// ```
pub fn mapped_file(name_prefix: &str) -> Option<PathBuf> {
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
