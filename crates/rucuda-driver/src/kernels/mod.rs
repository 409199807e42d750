//! Device code: loaded modules and their kernels, launches and their arguments, host
//! arguments (PyCUDA's `In`/`Out`/`InOut`), occupancy, and the JIT's constants.

pub(crate) mod function;
pub(crate) mod global;
pub(crate) mod host_args;
pub(crate) mod jit_constants;
pub(crate) mod launch;
pub(crate) mod loaded;
pub(crate) mod module;
pub(crate) mod occupancy;
pub(crate) mod programmatic;
pub(crate) mod shared_config;
