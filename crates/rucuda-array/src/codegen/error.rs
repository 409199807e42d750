//! Errors of the code generators: [`ArgParseError`] for C argument strings (pointing at
//! the bad token) and [`CodegenError`] for everything else a generator refuses.

use std::fmt;

/// A malformed C argument list, with the position of the offending token.
///
/// ```
/// let e = rucuda_array::codegen::parse_arguments("float a, flot *x").unwrap_err();
/// assert_eq!(e.column, 10);
/// assert_eq!(e.token, "flot");
/// assert!(e.to_string().contains("^^^^"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgParseError {
    /// The whole argument string.
    pub source: String,
    /// 1-based column (in characters) of the bad token.
    pub column: usize,
    /// The bad token (empty at the end of the input).
    pub token: String,
    /// What was expected there.
    pub expected: String,
}

impl fmt::Display for ArgParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = if self.token.is_empty() {
            "the end of the arguments".to_string()
        } else {
            format!("`{}`", self.token)
        };
        writeln!(
            f,
            "bad kernel argument list at column {}: found {shown}, expected {}",
            self.column, self.expected
        )?;
        writeln!(f, "  {}", self.source)?;
        write!(
            f,
            "  {}{}",
            " ".repeat(self.column.saturating_sub(1)),
            "^".repeat(self.token.chars().count().max(1))
        )
    }
}

impl std::error::Error for ArgParseError {}

/// A kernel that cannot be generated or called as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodegenError {
    /// A kernel template and the values given for its slots do not match (a bug of the
    /// generator, reported rather than compiled).
    #[error("kernel template: {0}")]
    Template(String),
    /// An argument name that is not a C identifier, is a C keyword, or is reserved.
    #[error("argument name `{name}` {problem}")]
    BadName {
        /// The name.
        name: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// Two arguments with one name.
    #[error("two arguments are named `{0}`")]
    DuplicateName(String),
    /// A kernel name that is not a C identifier, or that starts with `rucuda_` (the
    /// prefix of rucuda's own kernels, reserved so that no user kernel shadows one).
    #[error(
        "kernel name `{0}` is not a C identifier, or starts with `rucuda_` (reserved for \
         rucuda's own kernels)"
    )]
    BadKernelName(String),
    /// A kernel with no vector argument (nothing gives its length).
    #[error("kernel `{0}` has no array argument to take its length from")]
    NoVectorArgument(String),
    /// A call with the wrong number of arguments.
    #[error("kernel `{kernel}` takes {expected} arguments, {given} were given")]
    ArgumentCount {
        /// The kernel.
        kernel: String,
        /// Arguments it declares.
        expected: usize,
        /// Arguments passed.
        given: usize,
    },
    /// A call argument of the wrong kind or type.
    #[error("argument `{name}` of kernel `{kernel}`: expected {expected}, got {got}")]
    ArgumentType {
        /// The kernel.
        kernel: String,
        /// The argument's name.
        name: String,
        /// What its declaration asks for.
        expected: String,
        /// What was passed.
        got: String,
    },
    /// A scalar argument that does not convert to its declared type (see
    /// [`crate::elementwise::ScalarValue::convert_to`] for the rules).
    #[error("argument `{name}` of kernel `{kernel}`: {reason}")]
    ScalarConversion {
        /// The kernel.
        kernel: String,
        /// The argument's name.
        name: String,
        /// Why (the types and the rule).
        reason: String,
    },
    /// Array arguments of different lengths or shapes.
    #[error("argument `{name}` of kernel `{kernel}` has shape {got:?}, the first array argument has {expected:?}")]
    ShapeMismatch {
        /// The kernel.
        kernel: String,
        /// The argument.
        name: String,
        /// The first array argument's shape.
        expected: Vec<usize>,
        /// This argument's shape.
        got: Vec<usize>,
    },
    /// A non-contiguous array argument the operation cannot index through strides.
    #[error(
        "argument `{name}` of kernel `{kernel}` is not contiguous, and the operation uses it \
         other than as `{name}[i]` (at `{usage}`), so it cannot be indexed through its strides: \
         pass a row-major copy (`copy_order(Order::C)`)"
    )]
    StridedUnsupported {
        /// The kernel.
        kernel: String,
        /// The argument.
        name: String,
        /// The first offending use in the operation.
        usage: String,
    },
    /// More dimensions than strided kernels are generated for.
    #[error("kernel `{kernel}`: {ndim} dimensions after merging contiguous axes; at most {max} are supported")]
    TooManyDimensions {
        /// The kernel.
        kernel: String,
        /// Dimensions needed.
        ndim: usize,
        /// The limit.
        max: usize,
    },
    /// A ranged call with step 0.
    #[error("a ranged call needs a nonzero step")]
    ZeroStep,
    /// A ranged call whose bounds are negative as Python's `range` never visits: a
    /// negative start, or a negative stop with a positive step (an empty range). Negative
    /// bounds counting from the end are slice semantics: `call_slice`.
    #[error(
        "range {start}..{stop} step {step}: `call_range` takes indices as Python's `range` \
         does (only `stop == -1` with a negative step, to reach index 0, may be negative); \
         for negative bounds counting from the end use `call_slice`"
    )]
    NegativeRangeBound {
        /// Start.
        start: i64,
        /// Stop.
        stop: i64,
        /// Step.
        step: i64,
    },
    /// A ranged call that reaches past an array argument.
    #[error("range {start}..{stop} step {step} reaches index {reach}, past argument `{name}` of {len} elements")]
    RangeOutOfBounds {
        /// Start.
        start: i64,
        /// Stop.
        stop: i64,
        /// Step.
        step: i64,
        /// The furthest index reached.
        reach: i64,
        /// The argument.
        name: String,
        /// Its length.
        len: usize,
    },
}
