//! One search for every library: [`LibrarySearch`] says where a library may be, and
//! [`LibrarySearch::open`] looks there in one fixed order, opens the first candidate that
//! loads and hands it to the caller, or returns the short [`NotFound`] error.

use std::ffi::OsString;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::dynlib::{self, FailedCandidate};
use crate::python_sites::{dedup, search_site_packages};
use crate::search::{absolute_entries, LibrarySpec, NotFound};

/// A folder a library may be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Folder {
    /// The sub-folder `.1` of each absolute entry of the variable `.0`
    /// (`Folder::Env("CUDA_PATH", "lib64")`); relative entries are skipped and named in
    /// the not-found error.
    Env(&'static str, &'static str),
    /// A fixed absolute folder.
    Fixed(&'static str),
}

/// The folders of `list`, in order and without repeats, read through `env`; relative
/// entries of the variables are left out and noted in `skipped`.
///
/// ```
/// use std::ffi::OsString;
/// use std::path::PathBuf;
/// use rucuda_dylib::{resolve_folders, Folder};
/// let list = [Folder::Env("CUDA_PATH", "lib64"), Folder::Fixed("/usr/local/cuda/lib64")];
/// let env = |v: &str| (v == "CUDA_PATH").then(|| OsString::from("/usr/local/cuda:cuda"));
/// let mut skipped = Vec::new();
/// assert_eq!(resolve_folders(&list, &env, &mut skipped), [PathBuf::from("/usr/local/cuda/lib64")]);
/// assert_eq!(skipped, ["CUDA_PATH entry `cuda`"]);
/// ```
pub fn resolve_folders(
    list: &[Folder],
    env: &dyn Fn(&str) -> Option<OsString>,
    skipped: &mut Vec<String>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for folder in list {
        match *folder {
            Folder::Env(var, sub) => {
                for root in absolute_entries(env, var, skipped) {
                    out.push(root.join(sub));
                }
            }
            Folder::Fixed(path) => out.push(PathBuf::from(path)),
        }
    }
    dedup(out)
}

/// One place to look for a library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidate {
    /// A file, opened by full path (its folder may hold a library to open first).
    File(PathBuf),
    /// A bare name, searched on the system loader path.
    Name(OsString),
}

impl Candidate {
    /// The candidate an override variable's value names: a file when it holds a path
    /// separator, else a name for the system loader.
    ///
    /// ```
    /// use rucuda_dylib::Candidate;
    /// assert_eq!(Candidate::from_override("/opt/libx.so".into()), Candidate::File("/opt/libx.so".into()));
    /// assert_eq!(Candidate::from_override("libx.so.1".into()), Candidate::Name("libx.so.1".into()));
    /// ```
    pub fn from_override(value: OsString) -> Candidate {
        if Path::new(&value).components().count() > 1 {
            Candidate::File(PathBuf::from(value))
        } else {
            Candidate::Name(value)
        }
    }
}

/// Where a library may be, and what to say when it is nowhere: the one description each
/// loader (libcuda, NVRTC, NCCL) gives of its library.
///
/// ```
/// use rucuda_dylib::{Candidate, Folder, LibrarySearch, LibrarySpec};
/// const X: LibrarySearch = LibrarySearch {
///     spec: LibrarySpec { what: "libx.so.1", override_env: "X_LIB", install: "the x package" },
///     names: &["libx.so.1"],
///     folders: &[Folder::Fixed("/opt/x/lib")],
///     wheel_files: &["x/lib/libx.so.1"],
///     preload_beside: None,
/// };
/// let c = X.direct_candidates(&|_| None, &mut Vec::new());
/// assert_eq!(c, [Candidate::File("/opt/x/lib/libx.so.1".into()), Candidate::Name("libx.so.1".into())]);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct LibrarySearch {
    /// What the library is, its override variable and what to install.
    pub spec: LibrarySpec,
    /// The library's file names, preferred first: tried in each folder, then on the
    /// system loader path.
    pub names: &'static [&'static str],
    /// Folders to look in before the system loader path.
    pub folders: &'static [Folder],
    /// The library's files inside a site-packages folder (`nvidia/nccl/lib/libnccl.so.2`),
    /// for NVIDIA's pip wheels; empty for a library that has none (Python is then never
    /// asked).
    pub wheel_files: &'static [&'static str],
    /// For a library opened by full path: the file of another library to open first,
    /// by full path, given the library's path (NVRTC's builtins library beside it).
    pub preload_beside: Option<fn(&Path) -> Option<PathBuf>>,
}

/// A library that opened, handed to the caller of [`LibrarySearch::open`] to check and
/// keep.
pub struct Opened {
    /// The open library; closed when dropped.
    pub library: libloading::Library,
    /// The name or path it was opened by.
    pub opened_as: String,
    /// Its file, when it was opened by full path.
    pub file: Option<PathBuf>,
    /// The library [`LibrarySearch::preload_beside`] named, open; keep it as long as
    /// [`library`](Self::library) (drop it after).
    pub preloaded: Option<libloading::Library>,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("opened_as", &self.opened_as)
            .field("file", &self.file)
            .field("preloaded", &self.preloaded.is_some())
            .finish()
    }
}

impl LibrarySearch {
    /// The override's value, when it is set and not empty.
    fn override_value(&self, env: &dyn Fn(&str) -> Option<OsString>) -> Option<OsString> {
        env(self.spec.override_env).filter(|v| !v.is_empty())
    }

    /// The candidates that need no look at Python's folders, read through `env`: the
    /// override alone when it is set; else every name in every folder, then every name
    /// on the system loader path. Relative folder entries are noted in `skipped`.
    pub fn direct_candidates(
        &self,
        env: &dyn Fn(&str) -> Option<OsString>,
        skipped: &mut Vec<String>,
    ) -> Vec<Candidate> {
        if let Some(value) = self.override_value(env) {
            return vec![Candidate::from_override(value)];
        }
        let mut out = Vec::new();
        for folder in resolve_folders(self.folders, env, skipped) {
            for name in self.names {
                out.push(Candidate::File(folder.join(name)));
            }
        }
        out.extend(self.names.iter().map(|n| Candidate::Name(n.into())));
        out
    }

    /// The wheel files inside one site-packages folder.
    pub fn wheel_candidates(&self, site_packages: &Path) -> Vec<Candidate> {
        self.wheel_files
            .iter()
            .map(|f| Candidate::File(site_packages.join(f)))
            .collect()
    }

    /// Looks for the library, reading the environment through `env`
    /// (`&|n| std::env::var_os(n)` in production), and hands the first candidate that
    /// opens to `accept`: what `accept` returns, `Ok` or `Err`, ends the search (a library
    /// that opens but is not the right one is an error, not a reason to look further).
    /// When nothing opens: the [`NotFound`] error listing every place tried and the
    /// relative folders skipped.
    ///
    /// The order:
    /// 1. the override variable ([`LibrarySpec::override_env`]): when it is set and not
    ///    empty, its value is the only candidate, a file when it holds a path separator,
    ///    else a name for the system loader;
    /// 2. every [name](Self::names) in each of the [folders](Self::folders);
    /// 3. every name on the system loader path (`LD_LIBRARY_PATH`, `ldconfig`'s cache);
    /// 4. the [wheel files](Self::wheel_files) in Python's site-packages folders, in the
    ///    order of [`search_site_packages`](crate::python_sites::search_site_packages)
    ///    (relative `PATH` entries, skipped there, are named in the error).
    ///
    /// A file that does not exist is recorded as "no such file" without calling the
    /// system loader. Before a file is opened, the library
    /// [`preload_beside`](Self::preload_beside) names is opened from its folder by full
    /// path: NVRTC opens its builtins library by bare name when it compiles, which fails
    /// outside the loader path unless that library is already loaded.
    ///
    /// ```
    /// use rucuda_dylib::{LibrarySearch, LibrarySpec, NotFound};
    /// const X: LibrarySearch = LibrarySearch {
    ///     spec: LibrarySpec { what: "libx.so.1", override_env: "X_LIB", install: "the x package" },
    ///     names: &["libsurely-not-here.so.1"],
    ///     folders: &[],
    ///     wheel_files: &[],
    ///     preload_beside: None,
    /// };
    /// let err: NotFound = X.open(&|_| None, |opened| Ok(opened.opened_as)).unwrap_err();
    /// assert_eq!(err.tried[0].candidate, "libsurely-not-here.so.1");
    /// assert!(err.to_string().starts_with("libx.so.1 was not found"));
    /// ```
    pub fn open<T, E: From<NotFound>>(
        &self,
        env: &dyn Fn(&str) -> Option<OsString>,
        mut accept: impl FnMut(Opened) -> Result<T, E>,
    ) -> Result<T, E> {
        let explicit = self.override_value(env).is_some();
        let mut tried = Vec::new();
        let mut skipped = Vec::new();
        for candidate in self.direct_candidates(env, &mut skipped) {
            if let Some(found) = self.try_candidate(&candidate, &mut tried, &mut accept)? {
                return Ok(found);
            }
        }
        if !explicit && !self.wheel_files.is_empty() {
            let found = search_site_packages(env, |site| {
                for candidate in self.wheel_candidates(site) {
                    match self.try_candidate(&candidate, &mut tried, &mut accept) {
                        Ok(None) => {}
                        Ok(Some(found)) => return ControlFlow::Break(Ok(found)),
                        Err(e) => return ControlFlow::Break(Err(e)),
                    }
                }
                ControlFlow::Continue(())
            });
            if let Some(result) = found {
                return result;
            }
            // Python's folders are searched for the wheel; relative PATH entries are not.
            absolute_entries(env, "PATH", &mut skipped);
        }
        Err(self.not_found(tried, skipped).into())
    }

    /// Opens the file at `path` and nothing else (not the override, not the search), and
    /// hands it to `accept`; [`NotFound`] naming `path` when it does not open.
    ///
    /// ```
    /// use rucuda_dylib::{LibrarySearch, LibrarySpec, NotFound};
    /// const X: LibrarySearch = LibrarySearch {
    ///     spec: LibrarySpec { what: "libx.so.1", override_env: "X_LIB", install: "the x package" },
    ///     names: &[], folders: &[], wheel_files: &[], preload_beside: None,
    /// };
    /// let err: NotFound = X.open_file("/no/such/libx.so.1".as_ref(), |_| Ok(())).unwrap_err();
    /// assert!(err.to_string().contains("looked in /no/such/libx.so.1"));
    /// ```
    pub fn open_file<T, E: From<NotFound>>(
        &self,
        path: &Path,
        mut accept: impl FnMut(Opened) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut tried = Vec::new();
        let candidate = Candidate::File(path.to_path_buf());
        match self.try_candidate(&candidate, &mut tried, &mut accept)? {
            Some(found) => Ok(found),
            None => Err(self.not_found(tried, Vec::new()).into()),
        }
    }

    /// The not-found error for these places.
    pub fn not_found(
        &self,
        tried: Vec<FailedCandidate>,
        skipped_relative: Vec<String>,
    ) -> NotFound {
        NotFound {
            spec: self.spec,
            tried,
            skipped_relative,
        }
    }

    /// Opens one candidate and hands it to `accept`: `Ok(None)` when it does not open
    /// (recorded in `tried`).
    fn try_candidate<T, E>(
        &self,
        candidate: &Candidate,
        tried: &mut Vec<FailedCandidate>,
        accept: &mut impl FnMut(Opened) -> Result<T, E>,
    ) -> Result<Option<T>, E> {
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
            Candidate::Name(name) => (name.clone(), None),
        };
        let preloaded = match (self.preload_beside, file.as_deref()) {
            (Some(beside), Some(file)) => beside(file)
                .and_then(|p| dynlib::open_first([p.into_os_string()]).ok())
                .map(|opened| opened.library),
            _ => None,
        };
        let opened = match dynlib::open_first([target]) {
            Ok(opened) => opened,
            Err(mut failed) => {
                tried.append(&mut failed);
                return Ok(None);
            }
        };
        accept(Opened {
            library: opened.library,
            opened_as: opened.opened_as.to_string_lossy().into_owned(),
            file,
            preloaded,
        })
        .map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: LibrarySpec = LibrarySpec {
        what: "libx.so.1",
        override_env: "X_LIB",
        install: "the x package",
    };

    const X: LibrarySearch = LibrarySearch {
        spec: SPEC,
        names: &["libx.so.2", "libx.so.1"],
        folders: &[Folder::Env("X_HOME", "lib"), Folder::Fixed("/opt/x/lib")],
        wheel_files: &["x/lib/libx.so.2"],
        preload_beside: None,
    };

    #[test]
    fn an_override_is_the_only_candidate() {
        let env = |n: &str| (n == "X_LIB").then(|| OsString::from("/p/libx.so.2"));
        assert_eq!(
            X.direct_candidates(&env, &mut Vec::new()),
            [Candidate::File("/p/libx.so.2".into())]
        );
        let bare = |n: &str| (n == "X_LIB").then(|| OsString::from("libx.so.9"));
        assert_eq!(
            X.direct_candidates(&bare, &mut Vec::new()),
            [Candidate::Name("libx.so.9".into())]
        );
        // Empty means unset.
        let empty = |n: &str| (n == "X_LIB").then(OsString::new);
        assert_eq!(X.direct_candidates(&empty, &mut Vec::new()).len(), 4);
    }

    #[test]
    fn folders_then_the_loader_path_and_relative_entries_skipped() {
        let env = |n: &str| (n == "X_HOME").then(|| OsString::from("/opt/x:rel"));
        let mut skipped = Vec::new();
        let c = X.direct_candidates(&env, &mut skipped);
        // X_HOME's folder equals the fixed one: listed once.
        assert_eq!(
            c,
            [
                Candidate::File("/opt/x/lib/libx.so.2".into()),
                Candidate::File("/opt/x/lib/libx.so.1".into()),
                Candidate::Name("libx.so.2".into()),
                Candidate::Name("libx.so.1".into()),
            ]
        );
        assert_eq!(skipped, ["X_HOME entry `rel`"]);
        assert_eq!(
            X.wheel_candidates(Path::new("/sp")),
            [Candidate::File("/sp/x/lib/libx.so.2".into())]
        );
    }

    #[test]
    fn a_missing_override_is_tried_alone() {
        let env = |n: &str| (n == "X_LIB").then(|| OsString::from("/surely/not/libx.so.1"));
        let e: NotFound = X.open(&env, |_| Ok(())).unwrap_err();
        assert_eq!(
            e.tried,
            [FailedCandidate {
                candidate: "/surely/not/libx.so.1".into(),
                reason: "no such file".into()
            }]
        );
        assert!(e.skipped_relative.is_empty());
    }

    #[test]
    fn a_file_that_is_no_library_is_not_opened() {
        let dir = std::env::temp_dir().join(format!("rucuda-dylib-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fake = dir.join("libx.so.1");
        std::fs::write(&fake, b"not a shared object").unwrap();
        let e: NotFound = X.open_file(&fake, |_| Ok(())).unwrap_err();
        assert_eq!(e.tried.len(), 1);
        assert_eq!(e.tried[0].candidate, fake.display().to_string());
        assert_ne!(e.tried[0].reason, "no such file");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
