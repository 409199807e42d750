//! Tests under compute-sanitizer: `run.sh sanitize TOOL` exports `RUCUDA_SANITIZER=TOOL`,
//! and the tests ask here whether they run under it instead of reading the variable
//! themselves.
//!
//! Under the sanitizer every kernel is instrumented (tens to hundreds of times slower),
//! the tool keeps its own device memory, and `run.sh` runs several test binaries on one
//! GPU at once. So:
//!
//! - tests that provoke driver errors on purpose (a trap, out of memory) or that need the
//!   whole device skip with [`skip_under_sanitizer`];
//! - heavy tests (arrays of 2^28 elements, 10^8 random samples, thousands of repetitions)
//!   take a smaller size from [`scaled_for_sanitizer`]; the plain bundle run keeps the
//!   full sizes, so the sanitizer checks the same code paths on less data;
//! - checks of free device memory and of host timings, which other processes and the
//!   tool's interception disturb, look at [`under_sanitizer`], or at [`gpu_shared`],
//!   which also covers a plain run with several test processes at once
//!   (`run.sh --jobs N` exports `RUCUDA_TEST_SHARED_GPU=1`).

use std::fmt::Display;

/// The variable `run.sh sanitize` sets to the tool's name (`memcheck`, `racecheck`,
/// `initcheck`, `synccheck`).
pub const SANITIZER_ENV: &str = "RUCUDA_SANITIZER";

/// The compute-sanitizer tool this process runs under (`RUCUDA_SANITIZER`, set by
/// `run.sh sanitize`), or `None` for a plain run. An empty value counts as unset.
///
/// ```
/// if let Some(tool) = rucuda_testkit::sanitizer() {
///     println!("under compute-sanitizer {tool}: smaller sizes");
/// }
/// ```
pub fn sanitizer() -> Option<String> {
    std::env::var(SANITIZER_ENV)
        .ok()
        .filter(|tool| !tool.is_empty())
}

/// True when this process runs under compute-sanitizer (see [`sanitizer`]).
///
/// ```
/// // Other processes share the GPU under `run.sh sanitize`: free memory says little.
/// let check_free_memory = !rucuda_testkit::under_sanitizer();
/// # let _ = check_free_memory;
/// ```
pub fn under_sanitizer() -> bool {
    sanitizer().is_some()
}

/// The variable `run.sh --jobs N` (N > 1) sets: other test processes use the GPU at the
/// same time.
pub const SHARED_GPU_ENV: &str = "RUCUDA_TEST_SHARED_GPU";

/// True when other processes may use the GPU meanwhile: under compute-sanitizer, or in
/// a plain run with several test processes at once. Checks of free device memory and of
/// host timings are not meaningful then.
///
/// ```
/// let check_free_memory = !rucuda_testkit::gpu_shared();
/// # let _ = check_free_memory;
/// ```
pub fn gpu_shared() -> bool {
    under_sanitizer() || std::env::var(SHARED_GPU_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// `normal`, or `under_sanitizer` when this process runs under compute-sanitizer: the
/// size of a heavy test (smaller under the tool), or a time limit (longer under it).
///
/// ```
/// // 2^28 elements in the plain run, 2^24 under the sanitizer.
/// let n = rucuda_testkit::scaled_for_sanitizer(1usize << 28, 1 << 24);
/// assert!(n == 1 << 28 || n == 1 << 24);
/// ```
pub fn scaled_for_sanitizer<T>(normal: T, under_sanitizer: T) -> T {
    pick(sanitizer().is_some(), normal, under_sanitizer)
}

/// Under compute-sanitizer, prints the skip marker with `reason` and the tool's name and
/// returns true: the test then returns at once. Returns false (and prints nothing) in a
/// plain run.
///
/// ```
/// fn fills_the_device() {
///     if rucuda_testkit::skip_under_sanitizer("fills the device on purpose") {
///         return;
///     }
///     // ... the test ...
/// }
/// fills_the_device();
/// ```
pub fn skip_under_sanitizer(reason: impl Display) -> bool {
    match sanitizer() {
        Some(tool) => {
            crate::skip(sanitizer_skip_reason(&reason, &tool));
            true
        }
        None => false,
    }
}

/// Like [`skip_under_sanitizer`], only under the compute-sanitizer tools named in `tools`
/// (`"memcheck"`, `"racecheck"`, `"initcheck"`, `"synccheck"`): for what one tool cannot
/// follow, such as memory another process or OpenGL wrote (initcheck) or device-side
/// launches (all but memcheck).
///
/// ```
/// fn reads_what_a_child_process_wrote() {
///     if rucuda_testkit::skip_under_sanitizer_tools(&["initcheck"], "another process writes") {
///         return;
///     }
///     // ... the test ...
/// }
/// reads_what_a_child_process_wrote();
/// ```
pub fn skip_under_sanitizer_tools(tools: &[&str], reason: impl Display) -> bool {
    match sanitizer() {
        Some(tool) if tools.contains(&tool.as_str()) => {
            crate::skip(sanitizer_skip_reason(&reason, &tool));
            true
        }
        _ => false,
    }
}

fn pick<T>(sanitized: bool, normal: T, under_sanitizer: T) -> T {
    if sanitized {
        under_sanitizer
    } else {
        normal
    }
}

fn sanitizer_skip_reason(reason: &dyn Display, tool: &str) -> String {
    format!("{reason} (not under compute-sanitizer {tool}; the plain run covers it)")
}

#[cfg(test)]
mod tests {
    use super::*;

    // The environment is process-wide and tests run on threads: these tests read the
    // variable's effect through the pure helpers, never by setting it.

    #[test]
    fn pick_chooses_by_the_flag() {
        assert_eq!(pick(false, 1 << 28, 1 << 24), 1 << 28);
        assert_eq!(pick(true, 1 << 28, 1 << 24), 1 << 24);
    }

    #[test]
    fn skip_reason_names_the_tool() {
        assert_eq!(
            sanitizer_skip_reason(&"fills the device", "memcheck"),
            "fills the device (not under compute-sanitizer memcheck; the plain run covers it)"
        );
    }

    #[test]
    fn skip_under_sanitizer_prints_only_under_the_tool() {
        let printed = || crate::skip::tests::PRINTED.with(|p| p.borrow().len());
        let before = printed();
        let skipped = skip_under_sanitizer("reason");
        assert_eq!(skipped, under_sanitizer());
        assert_eq!(printed() - before, usize::from(skipped));
    }
}
