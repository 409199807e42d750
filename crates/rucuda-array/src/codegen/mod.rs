//! Pieces shared by the kernel generators: typed argument specs ([`ArgSpec`]), PyCUDA's
//! C argument strings ([`parse_arguments`]), the C names of element types, the prelude
//! that defines our half/bfloat16/complex types, the analysis of user operations, the
//! index arithmetic of strided variants, and the template renderer.
//!
//! Generators are fixed skeletons with typed slots (PyCUDA's design): user code goes
//! into named places of text that never changes, so every generated kernel is a pure
//! function of (skeleton, argument types, user snippets) and can be unit-tested as text.
//! The skeletons are CUDA files (`cuda/` beside each generator) filled by one renderer
//! (`template.rs`).

mod args;
mod error;
pub(crate) mod grid_dependency;
mod operation;
mod parse;
pub mod prelude;
pub(crate) mod strided;
pub mod template;

pub(crate) use args::{is_identifier, validate_arguments};
pub use args::{ArgKind, ArgSpec, RESERVED_NAMES};
pub use error::{ArgParseError, CodegenError};
pub use operation::{index_only_in_subscripts, ArgUsage, OperationAnalysis};
pub use parse::{c_type_to_dtype, parse_arguments};
pub use prelude::{full_prelude, prelude_for};
