//! Pieces shared by the kernel generators: typed argument specs ([`ArgSpec`]), PyCUDA's
//! C argument strings ([`parse_arguments`]), the C names of element types, the prelude
//! that defines our half/bfloat16/complex types, and the analysis of user operations.
//!
//! Generators are fixed skeletons with typed slots (PyCUDA's design): user code goes
//! into named places of text that never changes, so every generated kernel is a pure
//! function of (skeleton, argument types, user snippets) and can be unit-tested as text.

mod args;
mod error;
mod operation;
mod parse;
pub mod prelude;
pub(crate) mod template;

pub(crate) use args::{is_identifier, validate_arguments};
pub use args::{ArgKind, ArgSpec, RESERVED_NAMES};
pub use error::{ArgParseError, CodegenError};
pub use operation::{ArgUsage, OperationAnalysis};
pub use parse::{c_type_to_dtype, parse_arguments};
pub use prelude::{full_prelude, prelude_for};
