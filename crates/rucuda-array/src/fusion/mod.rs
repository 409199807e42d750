//! Fusion: a whole expression over arrays and scalars compiled into one kernel.

use crate::elementwise::ElementwiseSpec;
use crate::error::{ArrayError, Result};

/// The spec of an interned fused expression.
pub(crate) fn spec_of_id(id: u64) -> Result<ElementwiseSpec> {
    Err(ArrayError::InvalidArgument(format!(
        "unknown fused expression {id}"
    )))
}
