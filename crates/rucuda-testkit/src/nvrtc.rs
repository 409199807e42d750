//! The one policy for tests that need NVRTC (compiles of generated kernels, the cache
//! under concurrent writers): where NVRTC is not installed they skip with one short line
//! naming the command that provides it, in every crate alike.

use std::io::Write;

use crate::skip::SKIP_MARKER;

/// The command that installs NVIDIA's NVRTC wheel for the tests and runs them all.
pub const NVRTC_COMMAND: &str = "cargo xtask test";

/// The line a test prints when it skips for want of NVRTC.
pub fn nvrtc_skip_line() -> String {
    format!(
        "{SKIP_MARKER} needs NVRTC, which is not installed here; `{NVRTC_COMMAND}` installs it \
         and runs this test"
    )
}

/// `false`, after printing [`nvrtc_skip_line`], when `present` is false; the caller then
/// returns. Use it through [`nvrtc_or_skip!`](crate::nvrtc_or_skip).
///
/// The line goes straight to the process's stdout, not through `println!`, so that
/// `cargo test` shows it without `--nocapture` (and `run.sh` counts the test as skipped).
///
/// ```
/// assert!(rucuda_testkit::nvrtc_present_or_say_so(true));
/// ```
pub fn nvrtc_present_or_say_so(present: bool) -> bool {
    if !present {
        let line = format!("\n{}\n", nvrtc_skip_line());
        // A failed write to stdout leaves nothing else to report to.
        let _ = std::io::stdout().lock().write_all(line.as_bytes());
    }
    present
}

/// Returns from the test, saying so in one line, when NVRTC cannot be loaded.
///
/// The calling crate must depend on `rucuda-jit` (every crate with NVRTC tests does;
/// `rucuda-jit`'s own unit tests name it through `extern crate self as rucuda_jit`).
/// Works in tests returning `()` and in tests returning `Result<(), E>`.
///
/// ```ignore
/// #[test]
/// fn saxpy_compiles() {
///     rucuda_testkit::nvrtc_or_skip!();
///     // ... compile with NVRTC ...
/// }
/// ```
#[macro_export]
macro_rules! nvrtc_or_skip {
    () => {
        if !$crate::nvrtc_present_or_say_so(::rucuda_jit::nvrtc::Nvrtc::is_present()) {
            return $crate::SkipReturn::skipped();
        }
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_line_names_the_command() {
        let line = super::nvrtc_skip_line();
        assert!(line.starts_with("RUCUDA_SKIPPED: needs NVRTC"), "{line}");
        assert!(line.contains("`cargo xtask test`"), "{line}");
        assert!(!line.contains('\n'));
    }
}
