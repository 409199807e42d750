//! NCCL's C API as bindgen sees it, and opening it: [`bindings`] (types, constants, one
//! `PFN_` pointer type per function) and [`functions`] (the run-time table
//! [`crate::Nccl`] resolves), generated from `nccl.h` by `cargo xtask bindgen` and
//! committed with `getters` (one method of [`crate::Nccl`] per function); `loader`
//! finds and opens the library. Bottom up: bindings, functions, loader, getters.
//!
//! Enums are newtypes (`ncclResult_t(pub u32)`), never Rust enums: a newer NCCL may return
//! codes our header does not list.

pub mod bindings;
pub mod functions;
mod getters;
pub(crate) mod loader;

pub use bindings::*;
pub use functions::{NcclFunctions, FUNCTION_NAMES};
