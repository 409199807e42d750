//! The default device and context: PyCUDA's `make_default_context`, `autoinit` and
//! `autoprimaryctx`.

use std::sync::OnceLock;

use rucuda_driver::{Context, ContextFlags, Device, Error, Result};

/// The device and context chosen once per process (PyCUDA's `autoinit.device` and
/// `autoinit.context`).
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

/// The device number the user asked for: `CUDA_DEVICE`, else the integer in
/// `~/.cuda-device`; `None` when neither says.
fn requested_device() -> Result<Option<usize>> {
    if let Ok(v) = std::env::var("CUDA_DEVICE") {
        return v.trim().parse().map(Some).map_err(|_| {
            Error::InvalidArgument(format!("CUDA_DEVICE={v:?} is not a device number"))
        });
    }
    let Some(home) = dirs::home_dir() else {
        return Ok(None);
    };
    let path = home.join(".cuda-device");
    match std::fs::read_to_string(&path) {
        Ok(text) => text.trim().parse().map(Some).map_err(|_| {
            Error::InvalidArgument(format!(
                "{} holds {text:?}, not a device number",
                path.display()
            ))
        }),
        Err(_) => Ok(None),
    }
}

/// Creates a new context on the device the rules choose (PyCUDA's
/// `make_default_context`): `CUDA_DEVICE`, else `~/.cuda-device`, else each device in
/// turn until one gives a context. The context is current on this thread.
///
/// ```no_run
/// let ctx = rucuda::tools::make_default_context()?;
/// # Ok::<(), rucuda::driver::Error>(())
/// ```
pub fn make_default_context() -> Result<Context> {
    make_with(|d| d.make_context(ContextFlags::empty()))
}

fn make_with(make: impl Fn(Device) -> Result<Context>) -> Result<Context> {
    if let Some(n) = requested_device()? {
        return make(Device::get(n)?);
    }
    let count = Device::count()?;
    let mut errors = Vec::new();
    for n in 0..count {
        match Device::get(n).and_then(&make) {
            Ok(ctx) => return Ok(ctx),
            Err(e) => errors.push(format!("device {n}: {e}")),
        }
    }
    Err(Error::InvalidArgument(if count == 0 {
        "no CUDA device is visible".to_string()
    } else {
        format!("no device gave a context: {}", errors.join("; "))
    }))
}

/// The device the rules choose, `default` when neither `CUDA_DEVICE` nor
/// `~/.cuda-device` says (PyCUDA's `get_default_device`).
#[deprecated(note = "use make_default_context (as PyCUDA advises)")]
pub fn get_default_device(default: usize) -> Result<Device> {
    Device::get(requested_device()?.unwrap_or(default))
}

/// PyCUDA's `pycuda.autoinit`: a context created by [`make_default_context`] on first
/// use, the same one afterwards (an error on first use is returned each time).
pub fn autoinit() -> Result<&'static AutoContext> {
    static AUTO: OnceLock<Result<AutoContext>> = OnceLock::new();
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

/// PyCUDA's `pycuda.autoprimaryctx`: the chosen device's primary context, retained on
/// first use (the context CUDA's runtime and its libraries share).
pub fn autoprimaryctx() -> Result<&'static AutoContext> {
    static AUTO: OnceLock<Result<AutoContext>> = OnceLock::new();
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
