//! NVRTC, NVIDIA's run-time compiler library, loaded at run time.
//!
//! [`bindings`] and [`functions`] (the table of optional function pointers) are
//! generated from `nvrtc.h` by `cargo xtask bindgen`, with `getters` (one method of
//! [`Nvrtc`] per function); [`Nvrtc`] opens the library once per process (see [`loader`]
//! for where it looks). Compiling with it is the crate's `backend` (above the crate's
//! errors, which this module is below).

pub mod bindings;
pub mod functions;
mod getters;
pub mod loader;

pub use functions::{NvrtcFunctions, FUNCTION_NAMES};
pub use loader::{MissingFunction, Nvrtc, NvrtcLoadError, NVRTC_ENV, NVRTC_SPEC};

use bindings::nvrtcResult;

/// The name of an NVRTC result code, e.g. `NVRTC_ERROR_COMPILATION`.
pub fn result_name(code: nvrtcResult) -> String {
    const NAMES: &[&str] = &[
        "NVRTC_SUCCESS",
        "NVRTC_ERROR_OUT_OF_MEMORY",
        "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
        "NVRTC_ERROR_INVALID_INPUT",
        "NVRTC_ERROR_INVALID_PROGRAM",
        "NVRTC_ERROR_INVALID_OPTION",
        "NVRTC_ERROR_COMPILATION",
        "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
        "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
        "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
        "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
        "NVRTC_ERROR_INTERNAL_ERROR",
        "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
        "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
        "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED",
        "NVRTC_ERROR_PCH_CREATE",
        "NVRTC_ERROR_CANCELLED",
        "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
    ];
    usize::try_from(code.0)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| format!("nvrtcResult({})", code.0), |n| (*n).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_names() {
        assert_eq!(
            result_name(nvrtcResult::NVRTC_ERROR_COMPILATION),
            "NVRTC_ERROR_COMPILATION"
        );
        assert_eq!(result_name(nvrtcResult(999)), "nvrtcResult(999)");
        assert_eq!(
            result_name(nvrtcResult::NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED),
            "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED"
        );
    }
}
