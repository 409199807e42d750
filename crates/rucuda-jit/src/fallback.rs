//! When NVRTC cannot open a header: finding that in its log, whether nvcc may compile
//! instead, the notes that say what happened, and the sources this process already
//! knows need nvcc (their NVRTC cache keys), so they skip the failing NVRTC run.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use crate::cache::CacheKey;
use crate::options::CompileOptions;

/// The headers NVRTC's log says it could not open (`cannot open source file "vector"`
/// from NVRTC 13, `could not open source file "vector" (no directories in search list)`
/// from NVRTC 12), each once, in order.
pub(crate) fn missing_headers(log: &str) -> Vec<String> {
    const MARK: &str = "open source file \"";
    let mut out: Vec<String> = Vec::new();
    for line in log.lines() {
        let Some(at) = line.find(MARK) else {
            continue;
        };
        let rest = &line[at + MARK.len()..];
        if let Some(end) = rest.find('"') {
            let name = rest[..end].to_string();
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// Why nvcc may not compile in NVRTC's place, or `None` when it may.
pub(crate) fn refusal(options: &CompileOptions) -> Option<&'static str> {
    if !options.nvcc_fallback {
        Some("the nvcc fallback is off (CompileOptions::nvcc_fallback)")
    } else if !options.name_expressions.is_empty() {
        Some("name expressions need NVRTC, so nvcc was not tried")
    } else {
        None
    }
}

/// The headers as a list for a message: `"vector", "iostream"`.
pub(crate) fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The note on NVRTC's error when nvcc did not compile instead: which headers, what
/// rucuda serves, and `why`.
pub(crate) fn not_tried_note(missing: &[String], why: &str) -> String {
    format!(
        "NVRTC cannot open {}: NVRTC has no host C/C++ headers (rucuda serves only {}; \
         see rucuda_jit::std_headers). nvcc can compile such a source, but {why}. Add the \
         header's folder with CompileOptions::include_dir, remove the include, or compile \
         with Backend::Nvcc",
        quoted(missing),
        crate::std_headers::NAMES.join(", ")
    )
}

/// The note on nvcc's error when it compiled in NVRTC's place.
pub(crate) fn tried_note(missing: &[String], nvrtc_first_error: Option<&str>) -> String {
    let first = nvrtc_first_error
        .map(|e| format!(" (NVRTC said: {e})"))
        .unwrap_or_default();
    format!(
        "compiled with nvcc because NVRTC cannot open {}{first}",
        quoted(missing)
    )
}

fn known() -> &'static Mutex<HashSet<CacheKey>> {
    static KNOWN: OnceLock<Mutex<HashSet<CacheKey>>> = OnceLock::new();
    KNOWN.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Remembers that the NVRTC compile of cache key `key` fails for a header and went to nvcc.
pub(crate) fn remember(key: CacheKey) {
    if let Ok(mut k) = known().lock() {
        k.insert(key);
    }
}

/// Whether the NVRTC compile of `key` is known (in this process) to need nvcc.
pub(crate) fn is_known(key: &CacheKey) -> bool {
    known().lock().is_ok_and(|k| k.contains(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_headers_nvrtc_could_not_open() {
        let log = "kernel.cu(1): catastrophic error: cannot open source file \"vector\"\n\
                   #include <vector>\n\
                   x.h(2): catastrophic error: cannot open source file \"sys/time.h\"\n\
                   y.h(3): catastrophic error: could not open source file \"map\" (no directories in search list)\n\
                   kernel.cu(1): catastrophic error: cannot open source file \"vector\"\n\
                   1 catastrophic error detected in the compilation of \"kernel.cu\".";
        assert_eq!(missing_headers(log), ["vector", "sys/time.h", "map"]);
        assert!(missing_headers("kernel.cu(3): error: identifier \"y\" is undefined").is_empty());
        assert!(missing_headers("").is_empty());
    }

    #[test]
    fn when_nvcc_may_not_step_in() {
        assert_eq!(refusal(&CompileOptions::new()), None);
        assert!(refusal(&CompileOptions::new().nvcc_fallback(false))
            .unwrap()
            .contains("nvcc_fallback"));
        assert!(refusal(&CompileOptions::new().name_expression("k<int>"))
            .unwrap()
            .contains("name expressions"));
    }

    #[test]
    fn notes_name_the_headers() {
        let missing = vec!["vector".to_string()];
        let n = not_tried_note(&missing, "nvcc was not found");
        assert!(n.contains("\"vector\""), "{n}");
        assert!(n.contains("stdio.h"), "{n}");
        assert!(n.contains("nvcc was not found"), "{n}");
        let t = tried_note(&missing, Some("kernel.cu(1): catastrophic error"));
        assert!(t.starts_with("compiled with nvcc because NVRTC cannot open \"vector\""));
    }

    #[test]
    fn known_fallbacks_are_remembered() {
        let key = CacheKey([7; 32]);
        assert!(!is_known(&key));
        remember(key);
        assert!(is_known(&key));
        assert!(!is_known(&CacheKey([8; 32])));
    }
}
