//! The error type of the GL interop layer, and the queue of errors met in destructors.

use std::cell::RefCell;

use crate::flags::ResourceKind;

/// Result of every fallible call in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every error of the GL interop layer.
///
/// Misuse that the driver would answer with a bare code (mapping a mapped resource, using
/// a mapping after unmapping it, registering a name that is no GL object) is caught
/// before the driver call and reported as its own variant.
///
/// ```
/// use rucuda_gl::Error;
/// let e = Error::NotMapped;
/// assert!(e.to_string().contains("not mapped"));
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A CUDA driver call failed (the error names the call).
    #[error(transparent)]
    Driver(#[from] rucuda_driver::Error),
    /// The GL name given for registration is not a live object of that kind in the
    /// current GL context (never created, deleted, or created with `glGen*` but never
    /// bound).
    #[error("GL name {name} is not a {expected} of the current GL context")]
    NoSuchGlObject {
        /// The GL name.
        name: u32,
        /// What it should have been (`buffer`, `texture`, `renderbuffer`).
        expected: &'static str,
    },
    /// The resource is already mapped (by a mapping that is still alive).
    #[error("the graphics resource (GL name {gl_name}) is already mapped; unmap or drop its mapping first")]
    AlreadyMapped {
        /// The GL name of the resource.
        gl_name: u32,
    },
    /// The mapping was unmapped; its pointers and arrays are no longer valid.
    #[error("the mapping is not mapped (it was unmapped already)")]
    NotMapped,
    /// The same resource appears twice in one map call.
    #[error("the graphics resource (GL name {gl_name}) appears twice in one map call")]
    DuplicateResource {
        /// The GL name of the resource.
        gl_name: u32,
    },
    /// A buffer operation on an image, or an image operation on a buffer.
    #[error(
        "`{operation}` needs a resource of kind {wanted}, but resource {index} of the mapping is of kind {got}"
    )]
    WrongResourceKind {
        /// The operation asked for.
        operation: &'static str,
        /// The kind it needs.
        wanted: ResourceKind,
        /// The kind the resource is.
        got: ResourceKind,
        /// The resource's index in the mapping.
        index: usize,
    },
    /// A resource index past the end of a mapping.
    #[error("resource index {index} is out of range: the mapping holds {len}")]
    IndexOutOfRange {
        /// The index asked for.
        index: usize,
        /// The number of resources in the mapping.
        len: usize,
    },
    /// Resources registered in different CUDA contexts were mapped in one call, or a
    /// stream of another context was given.
    #[error("all resources of one map call and its stream must belong to one CUDA context")]
    ContextMismatch,
    /// A map call with no resources.
    #[error("a map call needs at least one resource")]
    NoResources,
    /// The resource cannot change its map flags while mapped.
    #[error("map flags cannot change while the resource (GL name {gl_name}) is mapped")]
    FlagsWhileMapped {
        /// The GL name of the resource.
        gl_name: u32,
    },
    /// A GL call raised a GL error (`glGetError` after it).
    #[error("{call} raised GL error {code:#06x} ({})", gl_error_name(*.code))]
    Gl {
        /// The GL function.
        call: &'static str,
        /// The `glGetError` code.
        code: u32,
    },
    /// The caller's GL loader returned no address for a function this crate needs.
    #[error("the GL loader has no `{0}` (this crate needs OpenGL 3.1 or later)")]
    GlFunctionMissing(&'static str),
    /// The current GL context runs on no CUDA device (`cuGLGetDevices` found none).
    #[error("the current GL context runs on no CUDA device (cuGLGetDevices found none)")]
    NoCudaDeviceForGl,
    /// An argument was out of range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Errors that destructors met on this thread (unregistering a resource, unmapping a
    /// dropped mapping, deleting a GL buffer); returned by the next call of this crate on
    /// the same thread, or by [`take_deferred_errors`].
    #[error("earlier errors while releasing GL interop resources: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Deferred(Vec<Error>),
}

impl Error {
    /// The driver's code when this is a CUDA driver error.
    ///
    /// ```
    /// assert_eq!(rucuda_gl::Error::NotMapped.code(), None);
    /// ```
    pub fn code(&self) -> Option<rucuda_driver_sys::CUresult> {
        match self {
            Error::Driver(e) => e.code(),
            _ => None,
        }
    }
}

impl From<rucuda_driver_sys::MissingFunction> for Error {
    fn from(e: rucuda_driver_sys::MissingFunction) -> Error {
        Error::Driver(e.into())
    }
}

/// The GL name of a `glGetError` code.
fn gl_error_name(code: u32) -> &'static str {
    match code {
        0x0500 => "GL_INVALID_ENUM",
        0x0501 => "GL_INVALID_VALUE",
        0x0502 => "GL_INVALID_OPERATION",
        0x0503 => "GL_STACK_OVERFLOW",
        0x0504 => "GL_STACK_UNDERFLOW",
        0x0505 => "GL_OUT_OF_MEMORY",
        0x0506 => "GL_INVALID_FRAMEBUFFER_OPERATION",
        0x0507 => "GL_CONTEXT_LOST",
        _ => "unknown GL error",
    }
}

thread_local! {
    /// Errors met by destructors on this thread, waiting for the next call to report them.
    static DEFERRED: RefCell<Vec<Error>> = const { RefCell::new(Vec::new()) };
}

/// Queues an error met in a destructor on this thread.
pub(crate) fn defer(e: Error) {
    let queued = DEFERRED.try_with(|d| match d.try_borrow_mut() {
        Ok(mut v) => {
            v.push(e.clone());
            true
        }
        Err(_) => false,
    });
    if !matches!(queued, Ok(true)) {
        // The thread is ending: nobody is left to report to.
        log::error!("rucuda-gl: releasing a resource failed: {e}");
    }
}

/// Returns (and clears) the errors that this crate's destructors met on this thread
/// since the last call; an empty `Ok` when there were none.
///
/// Every fallible call of this crate checks this queue first and fails with
/// [`Error::Deferred`] when it is not empty, so errors of `Drop` are never lost silently.
///
/// ```
/// rucuda_gl::take_deferred_errors()?;
/// # Ok::<(), rucuda_gl::Error>(())
/// ```
pub fn take_deferred_errors() -> Result<()> {
    let errors = DEFERRED
        .try_with(|d| d.try_borrow_mut().map(|mut v| std::mem::take(&mut *v)))
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or_default();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::Deferred(errors))
    }
}
