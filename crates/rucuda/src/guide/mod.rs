//! The rucuda guide, chapter by chapter: the Markdown files of this crate's `guide/`
//! folder (`crates/rucuda/guide/` in the repository, shipped in the package), included
//! here so that `cargo doc` renders them beside the API and `cargo test --doc` compiles
//! their Rust examples. (Links between chapters point at the Markdown files; here, use
//! the list below.)

#[doc = include_str!("../../guide/README.md")]
pub mod index {}

// A chapter whose examples use an optional part (ndarray, OpenGL, NCCL) is here with the
// feature that brings it, so `cargo test --doc` passes with any set of features.

#[cfg(feature = "ndarray")]
#[doc = include_str!("../../guide/getting-started.md")]
pub mod getting_started {}

#[doc = include_str!("../../guide/driver.md")]
pub mod driver {}

#[doc = include_str!("../../guide/jit.md")]
pub mod jit {}

#[cfg(feature = "ndarray")]
#[doc = include_str!("../../guide/array.md")]
pub mod array {}

#[cfg(feature = "rand")]
#[doc = include_str!("../../guide/rand.md")]
pub mod rand {}

#[cfg(feature = "gl")]
#[doc = include_str!("../../guide/gl.md")]
pub mod gl {}

#[doc = include_str!("../../guide/tools.md")]
pub mod tools {}

#[cfg(feature = "nccl")]
#[doc = include_str!("../../guide/scaling-out.md")]
pub mod scaling_out {}

// The chapter shows how to write a test, `#[test]` included.
#[allow(clippy::test_attr_in_doctest)]
#[doc = include_str!("../../guide/testing.md")]
pub mod testing {}

#[doc = include_str!("../../guide/python.md")]
pub mod python {}

#[doc = include_str!("../../guide/pycuda-map.md")]
pub mod pycuda_map {}

// Every `rucuda::...` path that pycuda-map.md names, as an intra-doc link: `cargo doc`
// with `-D warnings` (`cargo xtask doc`) fails when one no longer resolves, and the test
// `tests/guide_map.rs` fails when this list and the map drift apart.
// It names every subsystem, so it is checked with all of them.
#[cfg(all(
    feature = "gl",
    feature = "nccl",
    feature = "rand",
    feature = "ndarray"
))]
#[doc(hidden)]
pub mod links;
