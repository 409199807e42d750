//! NCCL's C API as bindgen sees it: [`bindings`] (types, constants, one `PFN_` pointer
//! type per function) and [`functions`] (the run-time table [`crate::Nccl`] resolves),
//! both generated from `nccl.h` by `cargo xtask bindgen` and committed.
//!
//! Enums are newtypes (`ncclResult_t(pub u32)`), never Rust enums: a newer NCCL may return
//! codes our header does not list.

pub mod bindings;
pub mod functions;
mod getters;

// The generated table refers to `super::loader::{Nccl, MissingFunction}`.
use crate::loader;

pub use bindings::*;
pub use functions::{NcclFunctions, FUNCTION_NAMES};
