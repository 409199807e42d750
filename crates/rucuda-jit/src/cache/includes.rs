//! Our own `#include` scan for the cache key: finds every header a source includes
//! (recursively, over the include folders) and hashes their contents, with no
//! preprocessor run. Each header's digest and directives are remembered per process,
//! checked against its size and modification time, so a lookup costs one `stat` per
//! header.
//!
//! The scan over-approximates: an `#include` inside `#if 0` or a comment still counts.
//! That can only make a key change more often, never miss a change. A header that is not
//! found in any folder but is one of the standard headers rucuda serves to NVRTC
//! ([`crate::std_headers`], when the caller passes them) counts as found: its text enters
//! the key, its own includes are scanned, and the scan reports it as one to serve. Any
//! other header found nowhere (NVRTC's built-in headers, a toolkit header with no `-I`)
//! enters the key by name; the compiler's identity covers built-in ones.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

/// One `#include` directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Directive {
    /// `#include "name"`: the includer's folder first, then the include folders.
    Quoted(String),
    /// `#include <name>`: the include folders only.
    Angled(String),
    /// `#include MACRO`: cannot be resolved without a preprocessor; hashed as text.
    Computed(String),
}

/// Every `#include` directive of `text`, in order.
pub(crate) fn directives(text: &str) -> Vec<Directive> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(rest) = rest
            .strip_prefix("include_next")
            .or_else(|| rest.strip_prefix("include"))
        else {
            continue;
        };
        let rest = rest.trim();
        if let Some(r) = rest.strip_prefix('"') {
            if let Some(end) = r.find('"') {
                out.push(Directive::Quoted(r[..end].to_string()));
            }
        } else if let Some(r) = rest.strip_prefix('<') {
            if let Some(end) = r.find('>') {
                out.push(Directive::Angled(r[..end].to_string()));
            }
        } else if !rest.is_empty() {
            out.push(Directive::Computed(rest.to_string()));
        }
    }
    out
}

/// A header's remembered digest and directives.
#[derive(Clone)]
struct Scanned {
    len: u64,
    modified: Option<SystemTime>,
    digest: [u8; 32],
    directives: Vec<Directive>,
}

fn memo() -> &'static Mutex<HashMap<PathBuf, Scanned>> {
    static MEMO: OnceLock<Mutex<HashMap<PathBuf, Scanned>>> = OnceLock::new();
    MEMO.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Reads and scans a header, or takes it from the memo when its size and modification
/// time are unchanged. `None` when it cannot be read.
fn scan_file(path: &Path) -> Option<Scanned> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok();
    if let Ok(m) = memo().lock() {
        if let Some(s) = m.get(path) {
            if s.len == meta.len() && s.modified == modified {
                return Some(s.clone());
            }
        }
    }
    let bytes = std::fs::read(path).ok()?;
    let scanned = Scanned {
        len: bytes.len() as u64,
        modified,
        digest: Sha256::digest(&bytes).into(),
        directives: directives(&String::from_utf8_lossy(&bytes)),
    };
    if let Ok(mut m) = memo().lock() {
        m.insert(path.to_path_buf(), scanned.clone());
    }
    Some(scanned)
}

fn resolve(
    directive: &Directive,
    includer_dir: Option<&Path>,
    dirs: &[PathBuf],
) -> Option<PathBuf> {
    let (name, quoted) = match directive {
        Directive::Quoted(n) => (n, true),
        Directive::Angled(n) => (n, false),
        Directive::Computed(_) => return None,
    };
    let name = Path::new(name);
    if name.is_absolute() {
        return name.is_file().then(|| name.to_path_buf());
    }
    let local = if quoted { includer_dir } else { None };
    local
        .into_iter()
        .chain(dirs.iter().map(PathBuf::as_path))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// What the include scan found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IncludeScan {
    /// The digest of every header included, directly or not.
    pub digest: [u8; 32],
    /// The built-in headers to serve (found in no folder), by name, in the order first
    /// included.
    pub builtins: Vec<&'static str>,
}

/// Built-in headers by name: the header's name and text, `None` for a name there is
/// none of.
pub(crate) type Builtins<'a> = &'a dyn Fn(&str) -> Option<(&'static str, &'static str)>;

/// The digest of every header `source` includes, directly or not, with no built-in
/// headers. `source_dir` is the folder quoted includes of the source itself are searched
/// in first (the working directory, as for NVRTC); `dirs` are the include folders in order.
#[cfg(test)]
pub(crate) fn headers_digest(
    source: &str,
    source_dir: Option<&Path>,
    dirs: &[PathBuf],
) -> [u8; 32] {
    scan_includes(source, source_dir, dirs, &|_| None).digest
}

/// [`headers_digest`] where a header found in no folder may be a built-in one
/// (`builtins`): the scan hashes and follows its text and reports it in
/// [`IncludeScan::builtins`].
pub(crate) fn scan_includes(
    source: &str,
    source_dir: Option<&Path>,
    dirs: &[PathBuf],
    builtins: Builtins<'_>,
) -> IncludeScan {
    let mut h = Sha256::new();
    let mut served: Vec<&'static str> = Vec::new();
    // Names an include found a user's file for (NVRTC would give the built-in header of
    // that name to every include of it, the user's included).
    let mut found_names: HashSet<String> = HashSet::new();
    let mut visited: HashSet<PathBuf> = HashSet::new();
    // Depth-first, in directive order: (directive, the includer's folder).
    let mut stack: Vec<(Directive, Option<PathBuf>)> = directives(source)
        .into_iter()
        .rev()
        .map(|d| (d, source_dir.map(Path::to_path_buf)))
        .collect();
    while let Some((directive, includer_dir)) = stack.pop() {
        let spelled = match &directive {
            Directive::Quoted(n) => format!("\"{n}\""),
            Directive::Angled(n) => format!("<{n}>"),
            Directive::Computed(t) => t.clone(),
        };
        h.update((spelled.len() as u64).to_le_bytes());
        h.update(spelled.as_bytes());
        let found = resolve(&directive, includer_dir.as_deref(), dirs);
        let Some(path) = found else {
            let builtin = match &directive {
                Directive::Quoted(n) | Directive::Angled(n) => builtins(n),
                Directive::Computed(_) => None,
            };
            let Some((name, text)) = builtin else {
                h.update(b"unresolved");
                continue;
            };
            h.update(b"builtin");
            h.update(Sha256::digest(text.as_bytes()));
            if !served.contains(&name) {
                served.push(name);
                // A built-in header's own includes are searched like a header in no
                // folder: the include folders only.
                for d in directives(text).into_iter().rev() {
                    stack.push((d, None));
                }
            }
            continue;
        };
        let Some(scanned) = scan_file(&path) else {
            h.update(b"unreadable");
            continue;
        };
        h.update(b"found");
        if let Directive::Quoted(n) | Directive::Angled(n) = &directive {
            found_names.insert(n.clone());
        }
        h.update(scanned.digest);
        if visited.insert(path.clone()) {
            let parent = path.parent().map(Path::to_path_buf);
            for d in scanned.directives.into_iter().rev() {
                stack.push((d, parent.clone()));
            }
        }
    }
    // NVRTC gives an in-memory header to every include of its name, even a quoted one
    // that would find a user's file beside its includer: a name that found a user's
    // file anywhere is not served, so the user's file is never hidden (the include that
    // found nothing then fails, and goes to nvcc where installed).
    served.retain(|name| !found_names.contains(*name));
    IncludeScan {
        digest: h.finalize().into(),
        builtins: served,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder, removed when the returned guard drops (even when the test fails).
    fn temp(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("rucuda-jit-inc-{name}-"))
            .tempdir()
            .unwrap()
    }

    #[test]
    fn parses_directives() {
        let text = "#include \"a.h\"\n  #  include <b/c.h> // x\n#include_next <d.h>\n\
                    #include FOO_H\n#define X 1\n//#include \"no.h\"\n#pragma once\n";
        assert_eq!(
            directives(text),
            vec![
                Directive::Quoted("a.h".into()),
                Directive::Angled("b/c.h".into()),
                Directive::Angled("d.h".into()),
                Directive::Computed("FOO_H".into()),
            ]
        );
    }

    #[test]
    fn header_edits_change_the_digest() {
        let tmp = temp("edit");
        let dir = tmp.path();
        let inc = dir.join("inc");
        std::fs::create_dir_all(inc.join("sub")).unwrap();
        std::fs::write(inc.join("top.h"), "#include \"sub/leaf.h\"\n").unwrap();
        std::fs::write(
            inc.join("sub/leaf.h"),
            "#define LEAF 1\n#include \"top.h\"\n",
        )
        .unwrap();
        let src = "#include <top.h>\n__global__ void k() {}\n";
        let dirs = vec![inc.clone()];
        let d1 = headers_digest(src, None, &dirs);
        assert_eq!(
            d1,
            headers_digest(src, None, &dirs),
            "stable, and the cycle ends"
        );
        // Edit the nested header (a different length, so the memo sees it).
        std::fs::write(
            inc.join("sub/leaf.h"),
            "#define LEAF 22\n#include \"top.h\"\n",
        )
        .unwrap();
        let d2 = headers_digest(src, None, &dirs);
        assert_ne!(d1, d2);
        // Not found anywhere: only the name counts.
        let d3 = headers_digest("#include <cuda_fp16.h>\n", None, &dirs);
        assert_eq!(d3, headers_digest("#include <cuda_fp16.h>\n", None, &[]));
        assert_ne!(d3, headers_digest("#include <cuda_bf16.h>\n", None, &[]));
    }

    #[test]
    fn quoted_includes_search_the_includer_first() {
        let tmp = temp("quoted");
        let dir = tmp.path();
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("x.h"), "one").unwrap();
        std::fs::write(b.join("x.h"), "two").unwrap();
        let src = "#include \"x.h\"\n";
        let from_a = headers_digest(src, Some(&a), std::slice::from_ref(&b));
        let from_b = headers_digest(src, Some(&b), std::slice::from_ref(&b));
        assert_ne!(from_a, from_b);
        // Angled includes ignore the includer's folder.
        let angled = "#include <x.h>\n";
        assert_eq!(
            headers_digest(angled, Some(&a), std::slice::from_ref(&b)),
            headers_digest(angled, Some(&b), std::slice::from_ref(&b))
        );
    }

    fn builtin(name: &str) -> Option<(&'static str, &'static str)> {
        crate::std_headers::lookup(name)
    }

    #[test]
    fn built_in_headers_are_served_with_their_own_includes() {
        let src = "#include <cstdio>\n#include <vector>\n#include \"math.h\"\n";
        let scan = scan_includes(src, None, &[], &builtin);
        assert_eq!(scan.builtins, ["cstdio", "stdio.h", "stddef.h", "math.h"]);
        // Their text is in the digest: not the same as leaving them unresolved.
        assert_ne!(scan.digest, headers_digest(src, None, &[]));
        // A header that only differs in a built-in's text gets another digest.
        let edited = |name: &str| match name {
            "stddef.h" => Some(("stddef.h", "/* another text */")),
            other => builtin(other),
        };
        let other = scan_includes(src, None, &[], &edited);
        assert_eq!(other.builtins, scan.builtins);
        assert_ne!(other.digest, scan.digest);
        assert!(scan_includes("int x;", None, &[], &builtin)
            .builtins
            .is_empty());
    }

    #[test]
    fn a_users_header_of_the_same_name_wins() {
        let tmp = temp("shadow");
        let inc = tmp.path().join("inc");
        std::fs::create_dir_all(&inc).unwrap();
        std::fs::write(inc.join("stdint.h"), "typedef int my_int;\n").unwrap();
        let dirs = vec![inc.clone()];
        let src = "#include <stdint.h>\n#include <cstdint>\n";
        let scan = scan_includes(src, None, &dirs, &builtin);
        // <stdint.h> is the user's, also where the built-in <cstdint> includes it.
        assert_eq!(scan.builtins, ["cstdint"]);
        // A quoted include finds a file beside the source first.
        let beside = tmp.path().join("src");
        std::fs::create_dir_all(&beside).unwrap();
        std::fs::write(beside.join("limits.h"), "#define MINE 1\n").unwrap();
        let quoted = scan_includes("#include \"limits.h\"\n", Some(&beside), &[], &builtin);
        assert!(quoted.builtins.is_empty());
        let angled = scan_includes("#include <limits.h>\n", Some(&beside), &[], &builtin);
        assert_eq!(angled.builtins, ["limits.h"]);
        // Both: NVRTC would give the built-in one to the quoted include too, so neither
        // is served.
        let both = "#include <limits.h>\n#include \"limits.h\"\n";
        let both = scan_includes(both, Some(&beside), &[], &builtin);
        assert!(both.builtins.is_empty(), "{:?}", both.builtins);
    }
}
