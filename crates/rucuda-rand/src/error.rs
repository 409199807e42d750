//! The crate's one error type.

/// Result of every fallible call in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong when building or running a generator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument is outside what the generator accepts (a Sobol dimension past the
    /// table, a negative standard deviation, a Poisson mean that is not finite and
    /// positive, a state count of zero...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The generator does not offer this output (for example raw 32-bit integers from a
    /// 64-bit Sobol generator, as in cuRAND).
    #[error("{generator} does not generate {what}")]
    Unsupported {
        /// The generator's name.
        generator: &'static str,
        /// The output asked for.
        what: String,
    },
    /// The Joe–Kuo direction-number table could not be read.
    #[error("Joe-Kuo table, line {line}: {message}")]
    DirectionTable {
        /// 1-based line of the table.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// An output array that is not one contiguous run of elements.
    #[error("the output array is not contiguous (shape {shape:?}, strides {strides:?}): fill a contiguous array or a copy")]
    NotContiguous {
        /// Its shape.
        shape: Vec<usize>,
        /// Its strides, in elements.
        strides: Vec<isize>,
    },
    /// An output or stream of another context than the generator's.
    #[error("the generator belongs to another context than the {0}")]
    ContextMismatch(&'static str),
    /// The driver refused a call (allocation, copy, launch).
    #[error(transparent)]
    Driver(#[from] rucuda_driver::Error),
    /// Compiling our kernels failed (the error carries the compiler's log).
    #[error(transparent)]
    Jit(#[from] rucuda_jit::Error),
    /// Creating an output array failed.
    #[error(transparent)]
    Array(#[from] rucuda_array::ArrayError),
}

impl Error {
    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::InvalidArgument(message.into())
    }
}
