//! [`ArrayError`]: every error of this crate, and the `Result` alias.

use crate::codegen::{ArgParseError, CodegenError};
use crate::dtype::DType;
use crate::layout::LayoutError;

/// Result of the fallible calls of this crate.
pub type Result<T, E = ArrayError> = std::result::Result<T, E>;

/// Why an array operation or a kernel generator failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArrayError {
    /// The driver refused a call (allocation, copy, launch).
    #[error(transparent)]
    Driver(#[from] rucuda_driver::Error),
    /// A shape, stride or broadcast problem.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A malformed C argument list (`"float a, float *x"`).
    #[error(transparent)]
    ArgParse(#[from] ArgParseError),
    /// A kernel that cannot be generated as asked (bad names, refused non-contiguous
    /// arguments, wrong argument types at a call).
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    /// rucuda-jit could not compile generated source (the error carries the log).
    #[error(transparent)]
    Jit(#[from] rucuda_jit::Error),
    /// A [`crate::KernelCompiler`] of your own failed.
    #[error("compiling kernel `{kernel}` failed: {message}")]
    Compile {
        /// The kernel's name.
        kernel: String,
        /// The compiler's message and log.
        message: String,
    },
    /// A host array or slice whose length does not match the device array's.
    #[error("length mismatch: the device array has {device} elements, the host data {host}")]
    LengthMismatch {
        /// Elements on the device side.
        device: usize,
        /// Elements on the host side.
        host: usize,
    },
    /// Arrays of one context used with another's.
    #[error("arrays belong to different contexts")]
    ContextMismatch,
    /// An element type that the operation does not support.
    #[error("{operation} does not support element type {dtype}")]
    UnsupportedType {
        /// What was attempted.
        operation: &'static str,
        /// The element type.
        dtype: DType,
    },
    /// Writing through a view in which several indices share an element (stride 0).
    #[error("cannot write to a broadcast view (shape {shape:?}, strides {strides:?})")]
    WriteToBroadcast {
        /// Its shape.
        shape: Vec<usize>,
        /// Its strides.
        strides: Vec<isize>,
    },
    /// An argument out of range (e.g. `linspace` with zero points and an endpoint).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}
