//! The one error type of this crate, and the check that turns an `ncclResult_t` into it.

use std::ffi::{c_char, CStr};
use std::fmt;
use std::time::Duration;

use crate::sys::bindings::{ncclComm_t, ncclResult_t};
use crate::sys::loader::{LoadError, MissingFunction, Nccl};

/// Result of every fallible call in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failing `ncclResult_t` with the call that returned it and NCCL's own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NcclError {
    /// The code NCCL returned.
    pub code: ncclResult_t,
    /// The C function that returned it (`ncclCommInitRank`).
    pub call: &'static str,
    /// The code's name (`ncclInvalidUsage`).
    pub name: &'static str,
    /// NCCL's description of the code (`ncclGetErrorString`).
    pub message: String,
    /// NCCL's last error message (`ncclGetLastError`): usually what exactly went wrong
    /// ("Duplicate GPU detected ..."); empty when NCCL had nothing to say.
    pub last_error: String,
}

impl NcclError {
    /// True for the errors that say the communicator cannot be used any more (a peer
    /// failed, the network broke, an operation was aborted): abort it and make a new one.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self.code,
            ncclResult_t::ncclUnhandledCudaError
                | ncclResult_t::ncclSystemError
                | ncclResult_t::ncclInternalError
                | ncclResult_t::ncclRemoteError
        )
    }
}

impl fmt::Display for NcclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed: {} ({}): {}",
            self.call, self.name, self.code.0, self.message
        )?;
        let last = self.last_error.trim();
        if !last.is_empty() && last != self.message.trim() {
            write!(f, " (NCCL says: {last})")?;
        }
        Ok(())
    }
}

// Its text already says everything (call, code, message), so it has no source.
impl std::error::Error for NcclError {}

/// Every error of this crate.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An NCCL call failed.
    #[error("{0}")]
    Nccl(NcclError),
    /// The NCCL library could not be loaded.
    #[error(transparent)]
    NotLoaded(#[from] LoadError),
    /// The loaded NCCL lacks a function we need.
    #[error(transparent)]
    MissingFunction(#[from] MissingFunction),
    /// A CUDA driver call failed (binding a context, querying a stream).
    #[error(transparent)]
    Driver(#[from] rucuda_driver::Error),
    /// The element type cannot be used for this operation (NCCL has no such type, or no
    /// such reduction on it).
    #[error("{call} cannot work on {type_name}: {reason}")]
    UnsupportedType {
        /// The operation (`all_reduce`).
        call: &'static str,
        /// The element type (`int16`, `Complex<f32>`).
        type_name: String,
        /// Why, and what to do instead.
        reason: String,
    },
    /// Buffer sizes that do not fit the operation (all-gather: output = ranks × input).
    #[error("{call}: {what} has {got} elements, it needs {expected}")]
    SizeMismatch {
        /// The operation.
        call: &'static str,
        /// Which buffer.
        what: &'static str,
        /// The element count the operation needs.
        expected: usize,
        /// The element count given.
        got: usize,
    },
    /// Send and receive buffers of different element types.
    #[error("{call}: the input holds {send}, the output {recv}; they must be the same type")]
    TypeMismatch {
        /// The operation.
        call: &'static str,
        /// The input's element type.
        send: String,
        /// The output's element type.
        recv: String,
    },
    /// An array whose elements are not one contiguous block (NCCL reads and writes flat
    /// memory).
    #[error("{call}: {what} is not C-contiguous (shape {shape:?}, strides {strides:?}); make a row-major copy first (`copy_order(Order::C)`)")]
    NotContiguous {
        /// The operation.
        call: &'static str,
        /// Which argument.
        what: &'static str,
        /// Its shape.
        shape: Vec<usize>,
        /// Its strides in elements.
        strides: Vec<isize>,
    },
    /// A buffer or stream of another device than the communicator's.
    #[error("{call}: {what} is on device {got}, the communicator on device {expected}")]
    WrongDevice {
        /// The operation.
        call: &'static str,
        /// Which argument.
        what: &'static str,
        /// The communicator's device ordinal.
        expected: usize,
        /// The argument's device ordinal.
        got: usize,
    },
    /// A call on a communicator that was aborted (or whose wait timed out and aborted it).
    #[error("{call}: the communicator was aborted; create a new one")]
    Aborted {
        /// The operation attempted.
        call: &'static str,
    },
    /// Ranks driven by this process disagree about an operation (different counts,
    /// types, reductions or roots in one group): NCCL would hang or corrupt data, so
    /// nothing of the group was launched.
    #[error("ranks disagree in one group: {0}")]
    RankMismatch(String),
    /// An operation of a [`group`](crate::group()) failed (or an inner group failed)
    /// and the closure went on and returned `Ok`, or a communicator with operations
    /// recorded in the group was destroyed or aborted inside it: nothing of the group was
    /// launched (the operation's own error was returned to the closure where it failed).
    #[error("an operation of the group failed or lost its communicator, so nothing of the group was launched (the closure went on and returned Ok)")]
    GroupCancelled,
    /// [`Communicator::wait`](crate::Communicator::wait) gave up; the communicator was
    /// aborted so nothing hangs.
    #[error("the stream's NCCL work did not finish in {waited:?} (a peer may have failed or not joined); the communicator was aborted")]
    Timeout {
        /// How long it waited.
        waited: Duration,
    },
    /// A [`DeviceBuffer`](rucuda_driver::DeviceBuffer) or device view given to an
    /// operation inside a [`group`](crate::group()): a group issues its calls when the
    /// outermost group returns, and only a [`GpuArray`](rucuda_array::GpuArray) can be
    /// kept alive until then by the group itself (a plain buffer or view could be freed
    /// first, and NCCL would use freed memory). Outside a group they work as usual.
    #[error("{call}: {what} is a plain device buffer or view, which a group cannot keep alive until it issues its calls; inside group() use GpuArray, or call outside a group")]
    NotInGroup {
        /// The operation.
        call: &'static str,
        /// Which argument.
        what: &'static str,
    },
    /// An argument out of range (a rank, a root, a device count).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl Error {
    /// NCCL's code when this is an NCCL error.
    pub fn nccl_code(&self) -> Option<ncclResult_t> {
        match self {
            Error::Nccl(e) => Some(e.code),
            _ => None,
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::InvalidArgument(message.into())
    }
}

impl From<NcclError> for Error {
    fn from(e: NcclError) -> Self {
        Error::Nccl(e)
    }
}

/// The name of an NCCL result code (`ncclInvalidUsage`), or `ncclResult_t(N)` for a code
/// this header does not know.
///
/// ```
/// use rucuda_nccl::{result_name, sys::ncclResult_t};
/// assert_eq!(result_name(ncclResult_t::ncclInvalidUsage), "ncclInvalidUsage");
/// assert_eq!(result_name(ncclResult_t(99)), "ncclResult_t(99)");
/// ```
pub fn result_name(code: ncclResult_t) -> std::borrow::Cow<'static, str> {
    const NAMES: [&str; 8] = [
        "ncclSuccess",
        "ncclUnhandledCudaError",
        "ncclSystemError",
        "ncclInternalError",
        "ncclInvalidArgument",
        "ncclInvalidUsage",
        "ncclRemoteError",
        "ncclInProgress",
    ];
    match usize::try_from(code.0).ok().and_then(|i| NAMES.get(i)) {
        Some(name) => std::borrow::Cow::Borrowed(name),
        None => std::borrow::Cow::Owned(format!("ncclResult_t({})", code.0)),
    }
}

/// The process's NCCL, as this crate's error.
#[inline]
pub(crate) fn nccl() -> Result<&'static Nccl> {
    Ok(Nccl::get()?)
}

/// Turns an NCCL result into `Ok`, or an [`Error::Nccl`] naming `call`, with NCCL's
/// description and its last error message (asked of `comm` where there is one).
#[inline]
pub(crate) fn check(code: ncclResult_t, call: &'static str, comm: ncclComm_t) -> Result<()> {
    if code == ncclResult_t::ncclSuccess {
        Ok(())
    } else {
        Err(Error::Nccl(describe(code, call, comm)))
    }
}

#[cold]
pub(crate) fn describe(code: ncclResult_t, call: &'static str, comm: ncclComm_t) -> NcclError {
    let name = match result_name(code) {
        std::borrow::Cow::Borrowed(n) => n,
        std::borrow::Cow::Owned(_) => "unknown ncclResult_t",
    };
    let (mut message, mut last_error) = (String::new(), String::new());
    if let Ok(n) = Nccl::get() {
        if let Ok(get) = n.ncclGetErrorString() {
            // SAFETY: returns a static NUL-terminated string (or null) for any code.
            message = owned(unsafe { get(code) });
        }
        if let Ok(get) = n.ncclGetLastError() {
            // SAFETY: takes a live communicator or null; returns a NUL-terminated string
            // owned by NCCL (or null), copied at once.
            last_error = owned(unsafe { get(comm) });
        }
    }
    NcclError {
        code,
        call,
        name,
        message,
        last_error,
    }
}

fn owned(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null, NUL-terminated, and alive for the copy (NCCL's own storage).
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Calls an NCCL function by its C name, checks the result and names the call in the
/// error. Must be used inside `unsafe`: the caller upholds the C function's contract.
/// `comm` is the communicator asked for the last error message (null for none).
macro_rules! call {
    ($comm:expr, $f:ident ( $($arg:expr),* $(,)? )) => {{
        let f = $crate::error::nccl()?.$f()?;
        $crate::error::check(f($($arg),*), stringify!($f), $comm)
    }};
}
pub(crate) use call;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_well() {
        let e = NcclError {
            code: ncclResult_t::ncclInvalidUsage,
            call: "ncclCommInitRank",
            name: "ncclInvalidUsage",
            message: "invalid usage (run with NCCL_DEBUG=WARN for details)".into(),
            last_error: "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000"
                .into(),
        };
        let text = Error::Nccl(e.clone()).to_string();
        assert!(
            text.starts_with("ncclCommInitRank failed: ncclInvalidUsage (5): invalid usage"),
            "{text}"
        );
        assert!(text.contains("NCCL says: Duplicate GPU detected"), "{text}");
        assert!(!e.is_fatal());
        let e = Error::SizeMismatch {
            call: "all_gather",
            what: "the output",
            expected: 8,
            got: 6,
        };
        assert_eq!(
            e.to_string(),
            "all_gather: the output has 6 elements, it needs 8"
        );
        assert_eq!(e.nccl_code(), None);
    }

    #[test]
    fn every_known_code_has_a_name() {
        for code in 0..8 {
            assert!(result_name(ncclResult_t(code)).starts_with("nccl"));
        }
        assert_eq!(result_name(ncclResult_t(8)), "ncclResult_t(8)");
    }
}
