//! [`RawOutput`]: what a compiler (NVRTC or nvcc) returns, before the disk cache and the
//! caller see it.

use std::path::PathBuf;

/// What a compiler produced.
pub(crate) struct RawOutput {
    /// The device code.
    pub image: Vec<u8>,
    /// Each name expression with its lowered name (NVRTC only).
    pub lowered_names: Vec<(String, String)>,
    /// The compiler's log.
    pub log: String,
    /// The folder of the compiler's files, when they were kept.
    pub kept: Option<PathBuf>,
}
