//! The one error type of the driver layer, and the checks that produce it.

use rucuda_driver_sys::{CUresult, Driver, LoadError, MissingFunction};
use std::ffi::CStr;
use std::fmt;

/// Result of every fallible call in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// PyCUDA's error classes, for callers who branch on the kind of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Out of device or host memory (PyCUDA's `MemoryError`).
    Memory,
    /// A call that cannot succeed with these arguments or in this state (`LogicError`).
    Logic,
    /// A kernel failed, or its launch was refused (`LaunchError`).
    Launch,
    /// Anything else the driver reports (`RuntimeError`).
    Runtime,
    /// The device or driver does not support the operation.
    NotSupported,
    /// No driver, or no device, can be used.
    NoDriver,
}

/// A failing `CUresult` with the call that returned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverError {
    /// The code the driver returned.
    pub code: CUresult,
    /// The C function that returned it.
    pub call: &'static str,
    /// The code's name (`CUDA_ERROR_OUT_OF_MEMORY`), from `cuGetErrorName`.
    pub name: &'static str,
    /// The driver's description, from `cuGetErrorString`.
    pub message: std::borrow::Cow<'static, str>,
}

impl DriverError {
    /// True for the errors that asynchronous work (a kernel) raises and that a later,
    /// unrelated call reports: the context is unusable afterwards.
    ///
    /// What to do next: every later call on that context returns the error again, and
    /// CUDA documents the whole process as unusable (a device-side trap, assert or
    /// illegal address). Drop what you hold (releases that fail are ignored), and
    /// continue in a new process; `tests/faults_gpu.rs` shows the pattern (the work
    /// runs in a child process, the parent stays healthy).
    pub fn is_sticky(&self) -> bool {
        matches!(
            self.code,
            CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
                | CUresult::CUDA_ERROR_LAUNCH_FAILED
                | CUresult::CUDA_ERROR_ASSERT
                | CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR
                | CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION
                | CUresult::CUDA_ERROR_MISALIGNED_ADDRESS
                | CUresult::CUDA_ERROR_INVALID_ADDRESS_SPACE
                | CUresult::CUDA_ERROR_INVALID_PC
                | CUresult::CUDA_ERROR_LAUNCH_TIMEOUT
                | CUresult::CUDA_ERROR_ECC_UNCORRECTABLE
                | CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED
        )
    }

    /// True when the error was raised by earlier asynchronous work and only reported by
    /// this call (which was not itself a launch).
    pub fn is_from_earlier_async_work(&self) -> bool {
        self.is_sticky() && !self.call.starts_with("cuLaunch")
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed: {} ({}): {}",
            self.call, self.name, self.code.0, self.message
        )?;
        if self.is_from_earlier_async_work() {
            write!(
                f,
                " [raised by earlier asynchronous work (a kernel launched before this call), \
                 not by {}; the context is unusable: create a new one, and where that fails \
                 too, start a new process (CUDA documents the process as unusable)]",
                self.call
            )?;
        }
        Ok(())
    }
}

// Its text already says everything (call, code, message), so it has no source.
impl std::error::Error for DriverError {}

/// Every error of the driver layer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A driver call failed.
    #[error("{0}")]
    Driver(DriverError),
    /// The driver library could not be loaded.
    #[error(transparent)]
    NoDriver(#[from] LoadError),
    /// The loaded driver lacks a function we need.
    #[error(transparent)]
    MissingFunction(#[from] MissingFunction),
    /// A kernel launch was refused before reaching the driver (wrong arguments, a block
    /// too large, too much shared memory).
    #[error("launch of kernel `{kernel}` refused: {problem}")]
    LaunchCheck {
        /// The kernel's name.
        kernel: String,
        /// What was wrong.
        problem: String,
    },
    /// An argument was out of range or inconsistent.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Work that a graph capture cannot record, or memory it cannot keep alive: the
    /// capture fails with this error instead of producing a graph that would misbehave
    /// when replayed (rucuda's capture sessions, `rucuda_array::graph`).
    #[error("{operation} cannot be captured into a graph: {problem}")]
    Uncapturable {
        /// The operation or driver call that was refused (`cuMemcpyDtoH_v2`,
        /// `cuStreamSynchronize`, "eager work on another stream", ...).
        operation: String,
        /// Why.
        problem: String,
    },
    /// Errors that destructors met; reported by the next call on the same context.
    #[error("earlier errors while releasing resources: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Deferred(Vec<Error>),
}

impl Error {
    /// PyCUDA's class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Driver(d) => kind_of(d.code),
            Error::NoDriver(_) => ErrorKind::NoDriver,
            Error::MissingFunction(_) => ErrorKind::NotSupported,
            Error::LaunchCheck { .. } => ErrorKind::Launch,
            Error::InvalidArgument(_) | Error::Uncapturable { .. } => ErrorKind::Logic,
            Error::Deferred(v) => v.first().map_or(ErrorKind::Runtime, Error::kind),
        }
    }

    /// The driver's code when this is a driver error.
    pub fn code(&self) -> Option<CUresult> {
        match self {
            Error::Driver(d) => Some(d.code),
            _ => None,
        }
    }

    /// Builds an [`Error::InvalidArgument`].
    pub(crate) fn invalid(msg: impl Into<String>) -> Error {
        Error::InvalidArgument(msg.into())
    }
}

fn kind_of(code: CUresult) -> ErrorKind {
    match code {
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => ErrorKind::Memory,
        CUresult::CUDA_ERROR_NOT_SUPPORTED => ErrorKind::NotSupported,
        CUresult::CUDA_ERROR_NO_DEVICE
        | CUresult::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
        | CUresult::CUDA_ERROR_STUB_LIBRARY => ErrorKind::NoDriver,
        CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
        | CUresult::CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING
        | CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE => ErrorKind::Launch,
        CUresult::CUDA_ERROR_INVALID_VALUE
        | CUresult::CUDA_ERROR_INVALID_HANDLE
        | CUresult::CUDA_ERROR_INVALID_CONTEXT
        | CUresult::CUDA_ERROR_INVALID_DEVICE
        | CUresult::CUDA_ERROR_NOT_FOUND
        | CUresult::CUDA_ERROR_ALREADY_MAPPED
        | CUresult::CUDA_ERROR_NOT_MAPPED
        | CUresult::CUDA_ERROR_ALREADY_ACQUIRED
        | CUresult::CUDA_ERROR_NOT_INITIALIZED
        | CUresult::CUDA_ERROR_DEINITIALIZED
        | CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
        | CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED
        | CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
        | CUresult::CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
        | CUresult::CUDA_ERROR_INVALID_PTX
        | CUresult::CUDA_ERROR_INVALID_IMAGE
        | CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU
        | CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION
        | CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
        | CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
        | CUresult::CUDA_ERROR_ILLEGAL_STATE => ErrorKind::Logic,
        c if (DriverError {
            code: c,
            call: "",
            name: "",
            message: std::borrow::Cow::Borrowed(""),
        })
        .is_sticky() =>
        {
            ErrorKind::Launch
        }
        _ => ErrorKind::Runtime,
    }
}

/// The process's loaded driver, or the error saying why there is none.
///
/// ```no_run
/// let driver = rucuda_driver::driver()?;
/// println!("CUDA driver {}", driver.version());
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
#[inline]
pub fn driver() -> Result<&'static Driver> {
    Ok(Driver::get()?)
}

/// Turns a `CUresult` into `Ok` or an [`Error::Driver`] naming `call`.
///
/// ```
/// use rucuda_driver_sys::CUresult;
/// assert!(rucuda_driver::check(CUresult::CUDA_SUCCESS, "cuInit").is_ok());
/// ```
#[inline]
pub fn check(code: CUresult, call: &'static str) -> Result<()> {
    if code == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(driver_error(code, call))
    }
}

#[cold]
fn driver_error(code: CUresult, call: &'static str) -> Error {
    if is_capture_code(code) {
        FIRST_CAPTURE_REFUSAL.with(|f| {
            if f.get().is_none() {
                f.set(Some(call));
            }
        });
    }
    let (name, message) = describe(code);
    Error::Driver(DriverError {
        code,
        call,
        name,
        message: std::borrow::Cow::Borrowed(message),
    })
}

/// True for the codes the driver returns for work refused during a stream capture
/// (`CUDA_ERROR_STREAM_CAPTURE_*`, 900..=908).
pub(crate) fn is_capture_code(code: CUresult) -> bool {
    (900..=908).contains(&code.0)
}

thread_local! {
    /// The first driver call on this thread that a stream capture refused since the last
    /// [`take_capture_refusal`]: the operation a failed capture names.
    static FIRST_CAPTURE_REFUSAL: std::cell::Cell<Option<&'static str>> =
        const { std::cell::Cell::new(None) };
}

/// The first driver call on this thread that a capture refused since the last call, and
/// forgets it.
pub(crate) fn take_capture_refusal() -> Option<&'static str> {
    FIRST_CAPTURE_REFUSAL.with(|f| f.take())
}

/// The driver's name and description of a code; placeholders when it has none.
fn describe(code: CUresult) -> (&'static str, &'static str) {
    let Ok(d) = Driver::get() else {
        return (
            "CUDA_ERROR_UNKNOWN_CODE",
            "no driver loaded to describe this code",
        );
    };
    let mut name: *const std::ffi::c_char = std::ptr::null();
    let mut msg: *const std::ffi::c_char = std::ptr::null();
    if let (Ok(get_name), Ok(get_string)) = (d.cuGetErrorName(), d.cuGetErrorString()) {
        // SAFETY: both write a pointer to a static, NUL-terminated string (or fail).
        unsafe {
            get_name(code, &mut name);
            get_string(code, &mut msg);
        }
    }
    (
        static_str(name, "CUDA_ERROR_UNKNOWN_CODE"),
        static_str(msg, "unknown error code"),
    )
}

fn static_str(p: *const std::ffi::c_char, fallback: &'static str) -> &'static str {
    if p.is_null() {
        return fallback;
    }
    // SAFETY: the driver's error strings are static and NUL-terminated.
    unsafe { CStr::from_ptr::<'static>(p) }
        .to_str()
        .unwrap_or(fallback)
}

/// Calls a driver function by its C name, checks the result and names the call in the
/// error. Must be used inside `unsafe`: the caller upholds the C function's contract.
macro_rules! call {
    ($f:ident ( $($arg:expr),* $(,)? )) => {{
        let f = $crate::error::driver()?.$f()?;
        $crate::error::check(f($($arg),*), stringify!($f))
    }};
}
pub(crate) use call;
