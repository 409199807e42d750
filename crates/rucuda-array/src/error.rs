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
    /// A result that NumPy's `same_kind` rule does not let an `out` array or an in-place
    /// operation store (e.g. a float result into an integer array).
    #[error("{operation}: cannot store a {from} result into a {to} array (same_kind casting)")]
    Casting {
        /// The operation.
        operation: &'static str,
        /// The result's type.
        from: DType,
        /// The destination's type.
        to: DType,
    },
    /// An argument out of range (e.g. `linspace` with zero points and an endpoint).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// An index outside the axis it indexes (NumPy's `IndexError`), found by a gather or
    /// scatter in [`crate::ops::TakeMode::Raise`] mode (checked on the device, reported
    /// after the kernel finished; nothing outside the array was touched).
    #[error("index {index} is out of bounds for axis {axis} with size {size}")]
    IndexOutOfBounds {
        /// One offending index, as given (indices beyond `i64::MAX` show as `i64::MAX`).
        index: i64,
        /// The axis it indexed (0 for flat indexing).
        axis: usize,
        /// That axis' length.
        size: usize,
    },
}
