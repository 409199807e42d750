//! The disk cache of compiled kernels: [`key`] hashes everything a compile depends on,
//! [`store`] keeps the compiled images on disk (checked, atomic, size-capped), `includes`
//! finds the headers a source includes so that editing one invalidates the entries that
//! used it, and `trust` refuses folders other users could write. Where the cache is and
//! how large it may grow are the compile options' defaults (read from the environment).
//!
//! The per-context memo of loaded modules, in front of this cache, is
//! [`crate::memo`]; `cache::memo` is the same module under its old path.

pub mod key;
pub mod store;

pub(crate) mod includes;
pub(crate) mod trust;

pub use key::{CacheKey, CACHE_FORMAT_VERSION};
pub use store::{CacheStats, DiskCache};

// Where the cache is and how large it may grow: the compile options' defaults, named
// here as they always were.
#[cfg(feature = "fuzzing")]
pub(crate) use crate::options::defaults::parse_size;
pub use crate::options::defaults::{
    default_cache_dir, default_max_bytes, CACHE_DIR_ENV, CACHE_MAX_SIZE_ENV,
    DEFAULT_CACHE_MAX_BYTES, DISABLE_CACHE_ENV,
};

// The old path of the memo, which lives beside `SourceModule` now; nothing here uses it.
pub use crate::memo;
