//! What a search says about a library: which library it is and what provides it
//! ([`LibrarySpec`]), the short not-found error ([`NotFound`]), folders taken from the
//! environment only when absolute ([`absolute_entries`]), and version-aware ordering of
//! versioned names ([`version_cmp`]).

use std::cmp::Ordering;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

use crate::dynlib::FailedCandidate;

/// Set to `1` to make a not-found error list every place tried, with the loader's reason.
pub const DEBUG_LOADER_ENV: &str = "RUCUDA_DEBUG_LOADER";

/// How many places the short not-found message names.
const FIRST_PLACES: usize = 3;

/// One library that a loader looks for: its name, the variable that overrides the
/// search, and what to install to get it.
///
/// ```
/// use rucuda_dylib::search::LibrarySpec;
/// let spec = LibrarySpec {
///     what: "NCCL (libnccl.so.2)",
///     override_env: "RUCUDA_NCCL",
///     install: "`pip install nvidia-nccl-cu13`",
/// };
/// assert_eq!(spec.override_env, "RUCUDA_NCCL");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibrarySpec {
    /// The library, as the message names it: `"NVRTC (libnvrtc.so.13 or .12)"`.
    pub what: &'static str,
    /// The environment variable naming the library file to open instead of searching.
    pub override_env: &'static str,
    /// What provides the library: a package, a wheel, a driver.
    pub install: &'static str,
}

/// A library that no candidate opened: a short message (what, the first places, the
/// override, what to install); every place tried is in the fields, in `Debug`, and in
/// the message when `RUCUDA_DEBUG_LOADER=1`.
///
/// ```
/// use rucuda_dylib::dynlib::FailedCandidate;
/// use rucuda_dylib::search::{LibrarySpec, NotFound};
/// let spec = LibrarySpec { what: "libx.so.1", override_env: "X_LIB", install: "the x package" };
/// let tried = (0..10)
///     .map(|i| FailedCandidate { candidate: format!("/p{i}/libx.so.1"), reason: "no such file".into() })
///     .collect();
/// let e = NotFound { spec, tried, skipped_relative: vec!["PATH entry `bin`".into()] };
/// let text = e.to_string();
/// assert!(text.contains("/p0/libx.so.1") && !text.contains("/p9/libx.so.1"), "{text}");
/// assert!(text.contains("7 more") && text.contains("X_LIB") && text.contains("the x package"));
/// assert!(text.contains("1 relative folder"), "{text}");
/// assert!(format!("{e:?}").contains("/p9/libx.so.1"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound {
    /// The library looked for.
    pub spec: LibrarySpec,
    /// Every name or path tried, in order, with the loader's reason.
    pub tried: Vec<FailedCandidate>,
    /// Relative entries of the search variables that were skipped, as
    /// `` "PATH entry `bin`" ``.
    pub skipped_relative: Vec<String>,
}

impl NotFound {
    /// True when `RUCUDA_DEBUG_LOADER=1` asks for every place tried.
    fn debug_requested() -> bool {
        std::env::var_os(DEBUG_LOADER_ENV).is_some_and(|v| v == "1")
    }
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spec = &self.spec;
        write!(f, "{} was not found", spec.what)?;
        let all = NotFound::debug_requested();
        let shown = if all {
            self.tried.len()
        } else {
            FIRST_PLACES.min(self.tried.len())
        };
        if shown > 0 {
            write!(f, " (looked in ")?;
            for (i, t) in self.tried[..shown].iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                if all {
                    write!(f, "{t}")?;
                } else {
                    write!(f, "{}", t.candidate)?;
                }
            }
            let more = self.tried.len() - shown;
            if more > 0 {
                write!(f, " and {more} more; {DEBUG_LOADER_ENV}=1 lists them")?;
            }
            write!(f, ")")?;
        }
        if !self.skipped_relative.is_empty() {
            write!(
                f,
                "; skipped {} relative folder(s) ({})",
                self.skipped_relative.len(),
                self.skipped_relative.join(", ")
            )?;
        }
        write!(
            f,
            ". Install {}, or set {} to the library's full path.",
            spec.install, spec.override_env
        )
    }
}

impl std::error::Error for NotFound {}

/// The absolute folders in the path list `var` (`PATH`, `LD_LIBRARY_PATH`) or single
/// folder (`CUDA_PATH`), read through `env`. Relative entries are left out (they would
/// depend on the current folder) and noted in `skipped`; empty entries are ignored.
///
/// ```
/// use std::ffi::OsString;
/// use rucuda_dylib::search::absolute_entries;
/// let env = |_: &str| Some(OsString::from("/usr/bin:bin::/opt/x"));
/// let mut skipped = Vec::new();
/// let dirs = absolute_entries(&env, "PATH", &mut skipped);
/// assert_eq!(dirs, [std::path::PathBuf::from("/usr/bin"), "/opt/x".into()]);
/// assert_eq!(skipped, ["PATH entry `bin`"]);
/// ```
pub fn absolute_entries(
    env: &dyn Fn(&str) -> Option<OsString>,
    var: &str,
    skipped: &mut Vec<String>,
) -> Vec<PathBuf> {
    let Some(value) = env(var).filter(|v| !v.is_empty()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in std::env::split_paths(&value) {
        if entry.as_os_str().is_empty() {
            continue;
        }
        if entry.is_absolute() {
            out.push(entry);
        } else {
            skipped.push(format!("{var} entry `{}`", entry.display()));
        }
    }
    out
}

/// Compares names the way versions compare: runs of digits as numbers, so
/// `libnvrtc-builtins.so.13.10` comes after `libnvrtc-builtins.so.13.9` and `python3.10`
/// after `python3.9`.
///
/// ```
/// use rucuda_dylib::search::version_cmp;
/// let mut names = vec!["python3.10", "python3.9", "python3.12"];
/// names.sort_by(|a, b| version_cmp(a, b));
/// assert_eq!(names, ["python3.9", "python3.10", "python3.12"]);
/// ```
pub fn version_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let (da, ra) = split_digits(a);
                let (db, rb) = split_digits(b);
                // Numbers compare by length once leading zeros are gone, then digit by digit.
                let (ta, tb) = (trim_zeros(da), trim_zeros(db));
                let order = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb));
                if order != Ordering::Equal {
                    return order;
                }
                (a, b) = (ra, rb);
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                (a, b) = (&a[1..], &b[1..]);
            }
        }
    }
}

/// The leading digits of `s` and the rest.
fn split_digits(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
    s.split_at(n)
}

/// `digits` without leading zeros.
fn trim_zeros(digits: &[u8]) -> &[u8] {
    let n = digits.iter().take_while(|c| **c == b'0').count();
    &digits[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_numerically() {
        assert_eq!(version_cmp("so.13.10", "so.13.9"), Ordering::Greater);
        assert_eq!(version_cmp("so.13.0", "so.13.0"), Ordering::Equal);
        assert_eq!(version_cmp("so.13", "so.13.0"), Ordering::Less);
        assert_eq!(version_cmp("a2", "b1"), Ordering::Less);
        assert_eq!(version_cmp("x007", "x7"), Ordering::Equal);
    }

    #[test]
    fn the_short_message_has_no_reasons() {
        let e = NotFound {
            spec: LibrarySpec {
                what: "libx.so.1",
                override_env: "X_LIB",
                install: "x",
            },
            tried: vec![FailedCandidate {
                candidate: "libx.so.1".into(),
                reason: "cannot open shared object file".into(),
            }],
            skipped_relative: Vec::new(),
        };
        let text = e.to_string();
        assert_eq!(
            text,
            "libx.so.1 was not found (looked in libx.so.1). Install x, or set X_LIB to the \
             library's full path."
        );
    }
}
