//! The compilers: NVRTC in this process ([`nvrtc`], through `program`, one
//! `nvrtcProgram`, and `nvrtc_call`, NVRTC's results as errors) and nvcc as a subprocess
//! ([`nvcc`]). Each takes prepared source and option strings and returns a `RawOutput`
//! (`raw`); the disk cache and the target choice are the callers' business.

pub(crate) mod nvcc;
pub(crate) mod nvrtc;
mod nvrtc_call;
mod program;
mod raw;
