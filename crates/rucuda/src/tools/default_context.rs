//! The default device and context: PyCUDA's `make_default_context`, `autoinit` and
//! `autoprimaryctx`.
//!
//! The rules that choose the device live in one function, `choose_device`, over what the
//! caller hands it: the value of `CUDA_DEVICE`, the home folder, the device count and a
//! closure that tries one device. The public functions hand it the process's environment
//! (`dirs::home_dir()`) and the driver; the unit tests hand it fakes, so every rule is
//! tested without a GPU and without touching the process's environment.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rucuda_driver::sys::CUresult;
use rucuda_driver::{Context, ContextFlags, Device, DriverError, Error, ErrorKind, Result};

/// The environment variable naming the default device.
const CUDA_DEVICE_VAR: &str = "CUDA_DEVICE";
/// The file in the home folder naming the default device, as PyCUDA documents it.
const DEVICE_FILE: &str = ".cuda-device";
/// The name PyCUDA's code actually reads (`$HOME/.cuda_device`); read when
/// [`DEVICE_FILE`] does not exist.
const DEVICE_FILE_PYCUDA: &str = ".cuda_device";

/// The device and context chosen once per process (PyCUDA's `autoinit.device` and
/// `autoinit.context`).
///
/// ```no_run
/// let auto = rucuda::tools::autoprimaryctx()?;
/// println!("device {} ({})", auto.device.ordinal(), auto.device.name()?);
/// let ctx: &rucuda::driver::Context = auto; // through Deref
/// # let _ = ctx;
/// # Ok::<(), rucuda::driver::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct AutoContext {
    /// The device used.
    pub device: Device,
    /// Its context.
    pub context: Context,
}

impl std::ops::Deref for AutoContext {
    type Target = Context;
    fn deref(&self) -> &Context {
        &self.context
    }
}

/// Where a requested device number came from.
///
/// ```
/// use rucuda::tools::DeviceOrigin;
/// assert_eq!(DeviceOrigin::EnvVar.to_string(), "the environment variable CUDA_DEVICE");
/// let file = DeviceOrigin::File("/home/me/.cuda-device".into());
/// assert_eq!(file.to_string(), "the file /home/me/.cuda-device");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DeviceOrigin {
    /// The environment variable `CUDA_DEVICE`.
    EnvVar,
    /// A file in the home folder: `~/.cuda-device`, or `~/.cuda_device` when that one is
    /// absent.
    File(PathBuf),
}

impl fmt::Display for DeviceOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceOrigin::EnvVar => write!(f, "the environment variable {CUDA_DEVICE_VAR}"),
            DeviceOrigin::File(path) => write!(f, "the file {}", path.display()),
        }
    }
}

/// Why [`make_default_context`], [`autoinit`], [`autoprimaryctx`] or
/// [`get_default_device`] could not choose a device or get a context from it.
///
/// Converts into [`rucuda::driver::Error`](rucuda_driver::Error) (so `?` works in
/// functions returning the driver's error): [`Driver`](Self::Driver) and
/// [`DeviceFailed`](Self::DeviceFailed) become the driver's error itself (its code and
/// kind kept), [`NoDevice`](Self::NoDevice) becomes `CUDA_ERROR_NO_DEVICE`, the others an
/// [`Error::InvalidArgument`](rucuda_driver::Error::InvalidArgument) with this error's
/// text.
///
/// ```no_run
/// use rucuda::tools::{make_default_context, DefaultContextError};
/// match make_default_context() {
///     Ok(ctx) => println!("device {}", ctx.device().ordinal()),
///     Err(DefaultContextError::NoSuchDevice { origin, device, count }) => {
///         eprintln!("{origin} asks for device {device}; there are {count}")
///     }
///     Err(e) => eprintln!("no context: {e}"),
/// }
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum DefaultContextError {
    /// `CUDA_DEVICE` or the file holds something other than a device number (a
    /// non-negative integer, white space around it allowed).
    #[error("{origin} holds {value:?}, which is not a device number (a non-negative integer)")]
    NotADeviceNumber {
        /// The variable or file.
        origin: DeviceOrigin,
        /// What it holds, as read.
        value: String,
    },
    /// `CUDA_DEVICE` or the file names a device that does not exist.
    #[error("{origin} names device {device}, but {}", visible(*count))]
    NoSuchDevice {
        /// The variable or file.
        origin: DeviceOrigin,
        /// The device number it names.
        device: usize,
        /// How many devices are visible.
        count: usize,
    },
    /// The device file exists but cannot be read (a folder, no permission).
    #[error("{} exists but cannot be read: {message}", path.display())]
    UnreadableFile {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        message: String,
    },
    /// The device `CUDA_DEVICE` or the file names exists but gave no context (no other
    /// device is tried).
    #[error("device {device}, named by {origin}, gave no context: {error}")]
    DeviceFailed {
        /// The device number.
        device: usize,
        /// The variable or file that named it.
        origin: DeviceOrigin,
        /// The driver's error.
        error: Error,
    },
    /// The driver sees no device.
    #[error("no CUDA device is visible")]
    NoDevice,
    /// Neither `CUDA_DEVICE` nor the file says, and no device gave a context.
    #[error(
        "no device gave a context: {}",
        failures.iter().map(|(n, e)| format!("device {n}: {e}")).collect::<Vec<_>>().join("; ")
    )]
    NoDeviceGaveAContext {
        /// Each device tried, in order, with its error.
        failures: Vec<(usize, Error)>,
    },
    /// The driver could not be asked (no driver, `cuInit` or counting the devices failed),
    /// or making the chosen context current failed.
    #[error(transparent)]
    Driver(#[from] Error),
}

fn visible(count: usize) -> String {
    match count {
        0 => "no device is visible".to_string(),
        1 => "only device 0 is visible".to_string(),
        n => format!("only devices 0 to {} are visible", n - 1),
    }
}

impl DefaultContextError {
    /// PyCUDA's class of this error: `Logic` for a bad `CUDA_DEVICE` or file, `NoDriver`
    /// when no device is visible, the driver error's kind otherwise (of the first device
    /// tried, for [`NoDeviceGaveAContext`](Self::NoDeviceGaveAContext)).
    ///
    /// ```
    /// use rucuda::driver::ErrorKind;
    /// use rucuda::tools::{DefaultContextError, DeviceOrigin};
    /// let e = DefaultContextError::NoSuchDevice { origin: DeviceOrigin::EnvVar, device: 3, count: 1 };
    /// assert_eq!(e.kind(), ErrorKind::Logic);
    /// assert_eq!(e.to_string(), "the environment variable CUDA_DEVICE names device 3, but only device 0 is visible");
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self {
            DefaultContextError::NotADeviceNumber { .. }
            | DefaultContextError::NoSuchDevice { .. }
            | DefaultContextError::UnreadableFile { .. } => ErrorKind::Logic,
            DefaultContextError::DeviceFailed { error, .. } => error.kind(),
            DefaultContextError::NoDevice => ErrorKind::NoDriver,
            DefaultContextError::NoDeviceGaveAContext { failures } => failures
                .first()
                .map_or(ErrorKind::NoDriver, |(_, e)| e.kind()),
            DefaultContextError::Driver(e) => e.kind(),
        }
    }
}

impl From<DefaultContextError> for Error {
    fn from(e: DefaultContextError) -> Error {
        match e {
            DefaultContextError::Driver(e) | DefaultContextError::DeviceFailed { error: e, .. } => {
                e
            }
            DefaultContextError::NoDevice => Error::Driver(DriverError {
                code: CUresult::CUDA_ERROR_NO_DEVICE,
                call: "cuDeviceGetCount",
                name: "CUDA_ERROR_NO_DEVICE",
                message: "no CUDA-capable device is detected".into(),
            }),
            other => Error::InvalidArgument(other.to_string()),
        }
    }
}

/// The text that names the requested device and where it came from: `CUDA_DEVICE` when
/// set (even empty), else the contents of `home/.cuda-device`, else of
/// `home/.cuda_device`; `None` when none of them exists (or there is no home folder).
fn requested_device(
    env: Option<&OsStr>,
    home: Option<&Path>,
) -> Result<Option<(String, DeviceOrigin)>, DefaultContextError> {
    if let Some(value) = env {
        return Ok(Some((
            value.to_string_lossy().into_owned(),
            DeviceOrigin::EnvVar,
        )));
    }
    let Some(home) = home else {
        return Ok(None);
    };
    for name in [DEVICE_FILE, DEVICE_FILE_PYCUDA] {
        let path = home.join(name);
        match std::fs::read(&path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                return Ok(Some((text, DeviceOrigin::File(path))));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(DefaultContextError::UnreadableFile {
                    path,
                    message: e.to_string(),
                })
            }
        }
    }
    Ok(None)
}

/// The device number `text` names (white space around it allowed), one of `count`.
fn parse_device(
    text: &str,
    origin: DeviceOrigin,
    count: usize,
) -> Result<(usize, DeviceOrigin), DefaultContextError> {
    let Ok(device) = text.trim().parse::<usize>() else {
        return Err(DefaultContextError::NotADeviceNumber {
            origin,
            value: text.to_string(),
        });
    };
    if device >= count {
        return Err(DefaultContextError::NoSuchDevice {
            origin,
            device,
            count,
        });
    }
    Ok((device, origin))
}

/// The device rules of PyCUDA's `make_default_context`, over what the caller hands in:
/// `env` is the value of `CUDA_DEVICE` (`None` when unset), `home` the home folder,
/// `count` the number of devices, `try_device(n)` what device `n` gives (a context).
///
/// 1. No device at all: [`DefaultContextError::NoDevice`].
/// 2. `CUDA_DEVICE` set: that device, and only that one.
/// 3. Else `home/.cuda-device` (or `home/.cuda_device`) exists: the device it names.
/// 4. Else each device in turn, the first for which `try_device` succeeds.
///
/// Returns the device number with what `try_device` gave.
fn choose_device<T>(
    env: Option<&OsStr>,
    home: Option<&Path>,
    count: usize,
    mut try_device: impl FnMut(usize) -> Result<T>,
) -> Result<(usize, T), DefaultContextError> {
    if count == 0 {
        return Err(DefaultContextError::NoDevice);
    }
    if let Some((text, origin)) = requested_device(env, home)? {
        let (device, origin) = parse_device(&text, origin, count)?;
        return match try_device(device) {
            Ok(got) => Ok((device, got)),
            Err(error) => Err(DefaultContextError::DeviceFailed {
                device,
                origin,
                error,
            }),
        };
    }
    let mut failures = Vec::new();
    for device in 0..count {
        match try_device(device) {
            Ok(got) => return Ok((device, got)),
            Err(e) => failures.push((device, e)),
        }
    }
    Err(DefaultContextError::NoDeviceGaveAContext { failures })
}

/// [`choose_device`] over this process's `CUDA_DEVICE`, home folder and driver; `make`
/// turns the chosen device into a context.
fn make_with(make: impl Fn(Device) -> Result<Context>) -> Result<Context, DefaultContextError> {
    let count = Device::count()?;
    let env = std::env::var_os(CUDA_DEVICE_VAR);
    let home = dirs::home_dir();
    let (_, context) = choose_device(env.as_deref(), home.as_deref(), count, |n| {
        Device::get(n).and_then(&make)
    })?;
    Ok(context)
}

/// Creates a new context on the device the rules choose (PyCUDA's
/// `make_default_context`); it is current on this thread.
///
/// The rules, in order:
///
/// 1. `CUDA_DEVICE` set: the device it names, and only that one;
/// 2. else the file `~/.cuda-device` exists (or, when it does not, `~/.cuda_device`, the
///    name PyCUDA's code reads): the device it names, and only that one;
/// 3. else each device in turn, from 0, the first that gives a context.
///
/// A value that is not a device number (a non-negative integer; white space around it is
/// allowed, an empty value is not) is [`DefaultContextError::NotADeviceNumber`], a device
/// number past the last device is [`DefaultContextError::NoSuchDevice`]; both name the
/// variable or file and what it holds, and no other device is tried. A file that exists
/// but cannot be read is [`DefaultContextError::UnreadableFile`]. When no device gives a
/// context, [`DefaultContextError::NoDeviceGaveAContext`] lists each device's error.
///
/// ```no_run
/// let ctx = rucuda::tools::make_default_context()?;
/// println!("a new context on device {}", ctx.device().ordinal());
/// # Ok::<(), rucuda::driver::Error>(())
/// ```
pub fn make_default_context() -> Result<Context, DefaultContextError> {
    make_with(|d| d.make_context(ContextFlags::empty()))
}

/// The device the rules of [`make_default_context`] name, `default` when neither
/// `CUDA_DEVICE` nor `~/.cuda-device` says (PyCUDA's `get_default_device`).
///
/// ```no_run
/// #[allow(deprecated)]
/// let device = rucuda::tools::get_default_device(0)?;
/// # Ok::<(), rucuda::driver::Error>(())
/// ```
#[deprecated(note = "use make_default_context (as PyCUDA advises)")]
pub fn get_default_device(default: usize) -> Result<Device, DefaultContextError> {
    let count = Device::count()?;
    let env = std::env::var_os(CUDA_DEVICE_VAR);
    let home = dirs::home_dir();
    let n = match requested_device(env.as_deref(), home.as_deref())? {
        Some((text, origin)) => parse_device(&text, origin, count)?.0,
        None => default,
    };
    Ok(Device::get(n)?)
}

/// PyCUDA's `pycuda.autoinit`: a context created by [`make_default_context`] on first
/// use, the same one afterwards (an error on first use is returned each time).
///
/// ```no_run
/// let auto = rucuda::tools::autoinit()?;
/// assert!(!auto.context.is_primary());
/// # Ok::<(), rucuda::driver::Error>(())
/// ```
pub fn autoinit() -> Result<&'static AutoContext, DefaultContextError> {
    static AUTO: OnceLock<Result<AutoContext, DefaultContextError>> = OnceLock::new();
    AUTO.get_or_init(|| {
        let context = make_default_context()?;
        Ok(AutoContext {
            device: context.device(),
            context,
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// PyCUDA's `pycuda.autoprimaryctx`: the primary context of the device the rules of
/// [`make_default_context`] choose (the context CUDA's runtime and its libraries share),
/// retained on first use and made current on the thread that first calls it. The same
/// one afterwards; an error on first use is returned each time.
///
/// ```no_run
/// let auto = rucuda::tools::autoprimaryctx()?;
/// assert!(auto.context.is_primary());
/// # Ok::<(), rucuda::driver::Error>(())
/// ```
pub fn autoprimaryctx() -> Result<&'static AutoContext, DefaultContextError> {
    static AUTO: OnceLock<Result<AutoContext, DefaultContextError>> = OnceLock::new();
    AUTO.get_or_init(|| {
        let context = make_with(Device::primary_context)?;
        context.bind()?;
        Ok(AutoContext {
            device: context.device(),
            context,
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

#[cfg(test)]
#[path = "default_context_tests.rs"]
mod tests;
