//! [`Error`]: one error for everything the facade re-exports, so that `?` works across
//! crates in a program, and its [`Result`] alias.
//!
//! Each rucuda crate keeps its own error type (a user of the driver alone never sees the
//! others); this enum converts from every one of them. An error that a higher crate only
//! passed through arrives as the variant of the crate it came from: a failed allocation in
//! `GpuArray::from_slice` is [`Error::Driver`], not `Error::Array(ArrayError::Driver(..))`,
//! so one `match` arm catches a driver failure wherever it happened.

use rucuda_array::ArrayError;

use crate::tools::DefaultContextError;

/// Result of a program or library that uses several rucuda crates.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every error of the rucuda crates, for `?` across crates.
///
/// Its [`Display`](std::fmt::Display) is the inner error's text (which names the failing
/// call and says what to do); [`source()`](std::error::Error::source) continues with the
/// inner error's own causes. Its `Debug` is that text too, followed by each cause on a
/// line of its own, so that a `main` returning [`rucuda::Result`](crate::Result) prints
/// something helpful when it fails; `{e:#?}` shows the structure, for debugging.
///
/// ```no_run
/// use rucuda::array::GpuArray;
/// use rucuda::driver::{Device, DeviceBuffer, Stream};
/// use rucuda::jit::{CompileOptions, SourceModule};
///
/// fn main() -> rucuda::Result<()> {
///     let ctx = Device::get(0)?.primary_context()?; // rucuda::driver::Error
///     ctx.bind()?;
///     let module = SourceModule::new("extern \"C\" __global__ void k() {}", &CompileOptions::new())?; // jit
///     let _k = module.function("k")?;
///     let x = GpuArray::from_slice(&Stream::null(&ctx), &[1.0f32, 2.0])?; // ArrayError
///     # #[cfg(feature = "rand")] {
///     use rucuda::rand::{Philox4x32_10, RandomGenerator};
///     let _r: GpuArray<f32> = Philox4x32_10::new(&ctx, 7)?.gen_uniform(&[4], &Stream::null(&ctx))?; // rand
///     # }
///     let raw = DeviceBuffer::from_slice(&ctx, &x.to_vec()?)?;
///     println!("{:?}", raw.to_vec()?);
///     Ok(())
/// }
/// ```
///
/// To handle an error rather than end the program with it, branch on the crate it came
/// from where that matters:
///
/// ```no_run
/// fn run() -> rucuda::Result<()> {
///     let _ctx = rucuda::tools::autoprimaryctx()?;
///     Ok(())
/// }
///
/// match run() {
///     Ok(()) => {}
///     Err(rucuda::Error::Driver(e)) => eprintln!("the driver said no ({:?}): {e}", e.kind()),
///     Err(e) => eprintln!("{} failed: {e}", e.subsystem()),
/// }
/// ```
///
/// Each variant holds its crate's error in a `Box`: the crates' errors are 64 to 112
/// bytes, and a `Result` of this type stays two words wide (clippy's `result_large_err`).
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The driver layer (`rucuda::driver`): a failed driver call, no driver, a refused
    /// launch. [`kind`](rucuda_driver::Error::kind) gives PyCUDA's class.
    #[error(transparent)]
    Driver(Box<rucuda_driver::Error>),
    /// Run-time compilation (`rucuda::jit`): a compiler that rejected the source (see
    /// [`as_compile_error`](rucuda_jit::Error::as_compile_error) for its log), no NVRTC
    /// or nvcc, the cache.
    #[error(transparent)]
    Jit(Box<rucuda_jit::Error>),
    /// Arrays and kernel generators (`rucuda::array`): shapes, argument lists, types.
    #[error(transparent)]
    Array(Box<ArrayError>),
    /// Random number generators (`rucuda::rand`).
    #[cfg(feature = "rand")]
    #[error(transparent)]
    Rand(Box<rucuda_rand::Error>),
    /// OpenGL interop (`rucuda::gl`).
    #[cfg(feature = "gl")]
    #[error(transparent)]
    Gl(Box<rucuda_gl::Error>),
    /// Collectives (`rucuda::nccl`).
    #[cfg(feature = "nccl")]
    #[error(transparent)]
    Nccl(Box<rucuda_nccl::Error>),
    /// No default context ([`autoinit`](crate::tools::autoinit) and friends): a bad
    /// `CUDA_DEVICE`, no device.
    #[error(transparent)]
    DefaultContext(Box<DefaultContextError>),
}

impl std::fmt::Debug for Error {
    /// The message and its causes (what `main` prints when it returns the error); with
    /// `{:#?}`, the variant and the inner error's own `Debug`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if f.alternate() {
            let inner: &dyn std::fmt::Debug = match self {
                Error::Driver(e) => e,
                Error::Jit(e) => e,
                Error::Array(e) => e,
                #[cfg(feature = "rand")]
                Error::Rand(e) => e,
                #[cfg(feature = "gl")]
                Error::Gl(e) => e,
                #[cfg(feature = "nccl")]
                Error::Nccl(e) => e,
                Error::DefaultContext(e) => e,
            };
            return f.debug_tuple(self.variant_name()).field(inner).finish();
        }
        write!(f, "{self}")?;
        let mut cause = std::error::Error::source(self);
        while let Some(e) = cause {
            write!(f, "\n  caused by: {e}")?;
            cause = e.source();
        }
        Ok(())
    }
}

impl Error {
    fn variant_name(&self) -> &'static str {
        match self {
            Error::Driver(_) => "Driver",
            Error::Jit(_) => "Jit",
            Error::Array(_) => "Array",
            #[cfg(feature = "rand")]
            Error::Rand(_) => "Rand",
            #[cfg(feature = "gl")]
            Error::Gl(_) => "Gl",
            #[cfg(feature = "nccl")]
            Error::Nccl(_) => "Nccl",
            Error::DefaultContext(_) => "DefaultContext",
        }
    }

    /// The subsystem the error comes from: `"driver"`, `"jit"`, `"array"`, `"rand"`,
    /// `"gl"`, `"nccl"` or `"tools"`.
    ///
    /// ```
    /// let e = rucuda::Error::from(rucuda::driver::Error::InvalidArgument("n".into()));
    /// assert_eq!(e.subsystem(), "driver");
    /// ```
    pub fn subsystem(&self) -> &'static str {
        match self {
            Error::Driver(_) => "driver",
            Error::Jit(_) => "jit",
            Error::Array(_) => "array",
            #[cfg(feature = "rand")]
            Error::Rand(_) => "rand",
            #[cfg(feature = "gl")]
            Error::Gl(_) => "gl",
            #[cfg(feature = "nccl")]
            Error::Nccl(_) => "nccl",
            Error::DefaultContext(_) => "tools",
        }
    }

    /// The driver error, when this is one.
    ///
    /// ```
    /// use rucuda::driver::{Error as DriverLayerError, ErrorKind};
    /// let e = rucuda::Error::from(DriverLayerError::InvalidArgument("n".into()));
    /// assert_eq!(e.as_driver_error().map(|d| d.kind()), Some(ErrorKind::Logic));
    /// ```
    pub fn as_driver_error(&self) -> Option<&rucuda_driver::Error> {
        match self {
            Error::Driver(e) => Some(&**e),
            _ => None,
        }
    }
}

impl From<rucuda_driver::Error> for Error {
    fn from(e: rucuda_driver::Error) -> Error {
        Error::Driver(Box::new(e))
    }
}

impl From<rucuda_driver::DriverError> for Error {
    fn from(e: rucuda_driver::DriverError) -> Error {
        Error::Driver(Box::new(rucuda_driver::Error::Driver(e)))
    }
}

impl From<rucuda_driver_sys::LoadError> for Error {
    fn from(e: rucuda_driver_sys::LoadError) -> Error {
        Error::Driver(Box::new(e.into()))
    }
}

impl From<rucuda_driver_sys::MissingFunction> for Error {
    fn from(e: rucuda_driver_sys::MissingFunction) -> Error {
        Error::Driver(Box::new(e.into()))
    }
}

impl From<rucuda_jit::Error> for Error {
    fn from(e: rucuda_jit::Error) -> Error {
        match e {
            rucuda_jit::Error::Driver(e) => Error::Driver(Box::new(e)),
            other => Error::Jit(Box::new(other)),
        }
    }
}

impl From<rucuda_jit::CompileError> for Error {
    fn from(e: rucuda_jit::CompileError) -> Error {
        Error::Jit(Box::new(e.into()))
    }
}

impl From<rucuda_jit::nvrtc::NvrtcLoadError> for Error {
    fn from(e: rucuda_jit::nvrtc::NvrtcLoadError) -> Error {
        Error::Jit(Box::new(e.into()))
    }
}

impl From<ArrayError> for Error {
    fn from(e: ArrayError) -> Error {
        match e {
            ArrayError::Driver(e) => Error::Driver(Box::new(e)),
            ArrayError::Jit(e) => e.into(),
            other => Error::Array(Box::new(other)),
        }
    }
}

impl From<rucuda_array::LayoutError> for Error {
    fn from(e: rucuda_array::LayoutError) -> Error {
        Error::Array(Box::new(e.into()))
    }
}

impl From<rucuda_array::codegen::ArgParseError> for Error {
    fn from(e: rucuda_array::codegen::ArgParseError) -> Error {
        Error::Array(Box::new(e.into()))
    }
}

impl From<rucuda_array::codegen::CodegenError> for Error {
    fn from(e: rucuda_array::codegen::CodegenError) -> Error {
        Error::Array(Box::new(e.into()))
    }
}

#[cfg(feature = "rand")]
impl From<rucuda_rand::Error> for Error {
    fn from(e: rucuda_rand::Error) -> Error {
        match e {
            rucuda_rand::Error::Driver(e) => Error::Driver(Box::new(e)),
            rucuda_rand::Error::Jit(e) => e.into(),
            rucuda_rand::Error::Array(e) => e.into(),
            other => Error::Rand(Box::new(other)),
        }
    }
}

#[cfg(feature = "gl")]
impl From<rucuda_gl::Error> for Error {
    fn from(e: rucuda_gl::Error) -> Error {
        match e {
            rucuda_gl::Error::Driver(e) => Error::Driver(Box::new(e)),
            other => Error::Gl(Box::new(other)),
        }
    }
}

#[cfg(feature = "nccl")]
impl From<rucuda_nccl::Error> for Error {
    fn from(e: rucuda_nccl::Error) -> Error {
        match e {
            rucuda_nccl::Error::Driver(e) => Error::Driver(Box::new(e)),
            other => Error::Nccl(Box::new(other)),
        }
    }
}

#[cfg(feature = "nccl")]
impl From<rucuda_nccl::NcclError> for Error {
    fn from(e: rucuda_nccl::NcclError) -> Error {
        Error::Nccl(Box::new(e.into()))
    }
}

#[cfg(feature = "nccl")]
impl From<rucuda_nccl::LoadError> for Error {
    fn from(e: rucuda_nccl::LoadError) -> Error {
        Error::Nccl(Box::new(e.into()))
    }
}

#[cfg(feature = "nccl")]
impl From<rucuda_nccl::MissingFunction> for Error {
    fn from(e: rucuda_nccl::MissingFunction) -> Error {
        Error::Nccl(Box::new(e.into()))
    }
}

impl From<DefaultContextError> for Error {
    fn from(e: DefaultContextError) -> Error {
        match e {
            DefaultContextError::Driver(e) => Error::Driver(Box::new(e)),
            other => Error::DefaultContext(Box::new(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn display_is_the_inner_text_and_passed_through_errors_keep_their_crate() {
        let driver = rucuda_driver::Error::InvalidArgument("block of 0 threads".into());
        let text = driver.to_string();
        let e = Error::from(ArrayError::Driver(driver));
        assert_eq!(e.subsystem(), "driver");
        assert_eq!(e.to_string(), text);
        assert!(e.as_driver_error().is_some());

        let e = Error::from(rucuda_jit::Error::NoArch);
        assert_eq!(e.subsystem(), "jit");
        assert_eq!(e.to_string(), rucuda_jit::Error::NoArch.to_string());
    }

    #[test]
    fn source_continues_with_the_inner_causes() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "no");
        let jit = rucuda_jit::Error::Io {
            context: "writing the cache".into(),
            source: io,
        };
        let e = Error::from(ArrayError::Jit(jit));
        assert_eq!(e.subsystem(), "jit");
        assert!(e.to_string().starts_with("writing the cache: "), "{e}");
        let cause = e.source().map(ToString::to_string);
        assert_eq!(cause.as_deref(), Some("no"));
        // Debug (what `main` prints): the message, then the causes; {:#?} the structure.
        assert_eq!(format!("{e:?}"), format!("{e}\n  caused by: no"), "{e:#?}");
        assert!(format!("{e:#?}").starts_with("Jit(\n    Io {"), "{e:#?}");
    }

    #[test]
    fn the_error_is_small() {
        assert!(std::mem::size_of::<Error>() <= 16);
    }

    #[test]
    fn every_error_is_a_std_error_that_crosses_threads() {
        fn check<E: std::error::Error + Send + Sync + 'static>() {}
        check::<Error>();
        check::<rucuda_driver::DriverError>();
        #[cfg(feature = "nccl")]
        check::<rucuda_nccl::NcclError>();
    }

    #[test]
    fn tools_errors_convert() {
        let e = Error::from(DefaultContextError::NoDevice);
        assert_eq!(e.subsystem(), "tools");
        assert_eq!(e.to_string(), "no CUDA device is visible");
    }

    #[cfg(feature = "rand")]
    #[test]
    fn rand_errors_convert() {
        let e = Error::from(rucuda_rand::Error::InvalidArgument("zero states".into()));
        assert_eq!(e.subsystem(), "rand");
        assert_eq!(e.to_string(), "invalid argument: zero states");
    }

    #[cfg(feature = "nccl")]
    #[test]
    fn nccl_errors_convert() {
        let e = Error::from(rucuda_nccl::Error::InvalidArgument("rank 3 of 2".into()));
        assert_eq!(e.subsystem(), "nccl");
    }

    #[cfg(feature = "gl")]
    #[test]
    fn gl_errors_convert() {
        let e = Error::from(rucuda_gl::Error::NotMapped);
        assert_eq!(e.subsystem(), "gl");
    }

    #[test]
    fn question_mark_works_across_crates() {
        fn layout() -> Result<()> {
            Err(rucuda_array::LayoutError::ZeroStep { axis: 1 })?;
            Ok(())
        }
        let e = layout().unwrap_err();
        assert_eq!(e.subsystem(), "array");
        assert_eq!(e.to_string(), "slice step cannot be zero (axis 1)");
    }
}
