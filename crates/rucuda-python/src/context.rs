//! `Context`: PyCUDA's context stack over rucuda's contexts.

use pyo3::prelude::*;

use crate::device::Device;
use rucuda_driver::sys::{CUfunc_cache, CUlimit};

use crate::errors::{cu, raise, OrRaise};

/// A CUDA context (PyCUDA's `Context`). Memory, modules and streams hold theirs, so the
/// context outlives them whatever order Python drops them in.
#[pyclass(module = "rucuda._native", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct Context {
    pub(crate) inner: rucuda_driver::Context,
}

impl Context {
    pub(crate) fn wrap(inner: rucuda_driver::Context) -> Context {
        Context { inner }
    }
}

/// The context current on this thread, or a `LogicError` saying there is none.
///
/// A library on the CUDA runtime API (CuPy, PyTorch) makes its device's primary context
/// current with `cudaSetDevice`, replacing the top of the thread's context stack; as in
/// PyCUDA, work then goes to the context the driver has current: rucuda adopts the
/// primary context (retains it, for the rest of the process). Another library's own
/// context is refused by name.
pub fn current() -> PyResult<rucuda_driver::Context> {
    if let Some(ctx) = rucuda_driver::Context::current().or_raise()? {
        return Ok(ctx);
    }
    adopt_primary()
}

/// The current context when it is a device's primary context that rucuda holds no
/// handle of (see [`current`]), retained and kept; else the `LogicError`.
#[cold]
fn adopt_primary() -> PyResult<rucuda_driver::Context> {
    static ADOPTED: std::sync::Mutex<Vec<rucuda_driver::Context>> =
        std::sync::Mutex::new(Vec::new());
    let raw = current_context_handle()?;
    if raw == 0 {
        return Err(raise(
            "LogicError",
            "no current context: import pycuda.autoinit or make one with \
             Device(0).make_context()"
                .to_string(),
        ));
    }
    let mut device: rucuda_driver::sys::CUdevice = 0;
    // SAFETY: writes one device handle; the current context is alive.
    unsafe { cu!(cuCtxGetDevice(&mut device)) }.or_raise()?;
    let ordinal = usize::try_from(device).map_err(|_| {
        raise(
            "LogicError",
            format!("the current context's device handle {device} is not an ordinal"),
        )
    })?;
    let primary = rucuda_driver::Device::get(ordinal)
        .and_then(|d| d.primary_context())
        .or_raise()?;
    if primary.raw() as usize != raw {
        return Err(raise(
            "LogicError",
            format!(
                "the current context ({raw:#x}) was made by another library and is not \
                 device {ordinal}'s primary context: rucuda cannot use it; push one of \
                 rucuda's contexts (Context.push) or make the primary context current"
            ),
        ));
    }
    if let Ok(mut adopted) = ADOPTED.lock() {
        if !adopted.iter().any(|c| c.raw() == primary.raw()) {
            adopted.push(primary.clone());
        }
    }
    Ok(primary)
}

#[pymethods]
impl Context {
    fn push(&self) -> PyResult<()> {
        self.inner.push().or_raise()
    }

    /// Pops the current context off this thread's stack.
    #[staticmethod]
    fn pop() -> PyResult<()> {
        rucuda_driver::Context::pop().or_raise()
    }

    /// Pops this context when it is current and lets it go.
    fn detach(&self) -> PyResult<()> {
        // The context's cached blocks go first (they would die with it anyway).
        crate::block_cache::flush(&self.inner);
        self.inner.clone().detach().or_raise()
    }

    /// Waits for the current context's work (GIL released).
    #[staticmethod]
    fn synchronize(py: Python<'_>) -> PyResult<()> {
        let ctx = current()?;
        py.allow_threads(|| ctx.synchronize()).or_raise()
    }

    #[staticmethod]
    fn get_device() -> PyResult<Device> {
        Ok(Device {
            inner: current()?.device(),
        })
    }

    /// The current context, or None.
    #[staticmethod]
    fn get_current() -> PyResult<Option<Context>> {
        Ok(rucuda_driver::Context::current()
            .or_raise()?
            .map(Context::wrap))
    }

    #[staticmethod]
    fn get_api_version() -> PyResult<u32> {
        current()?.api_version().or_raise()
    }

    #[staticmethod]
    fn mem_get_info() -> PyResult<(usize, usize)> {
        current()?.mem_get_info().or_raise()
    }

    /// Sets a `limit` (its driver number) of the current context.
    #[staticmethod]
    fn set_limit(limit: u32, value: usize) -> PyResult<()> {
        current()?;
        // SAFETY: sets one limit of the current context.
        unsafe { cu!(cuCtxSetLimit(CUlimit(limit), value)) }.or_raise()
    }

    /// A `limit` (its driver number) of the current context.
    #[staticmethod]
    fn get_limit(limit: u32) -> PyResult<usize> {
        current()?;
        let mut value = 0usize;
        // SAFETY: writes one size.
        unsafe { cu!(cuCtxGetLimit(&mut value, CUlimit(limit))) }.or_raise()?;
        Ok(value)
    }

    /// Sets the current context's `func_cache` preference (its driver number).
    #[staticmethod]
    fn set_cache_config(config: u32) -> PyResult<()> {
        current()?;
        // SAFETY: sets the current context's preference.
        unsafe { cu!(cuCtxSetCacheConfig(CUfunc_cache(config))) }.or_raise()
    }

    /// The current context's `func_cache` preference.
    #[staticmethod]
    fn get_cache_config() -> PyResult<u32> {
        current()?;
        let mut config = CUfunc_cache(0);
        // SAFETY: writes one value.
        unsafe { cu!(cuCtxGetCacheConfig(&mut config)) }.or_raise()?;
        Ok(config.0)
    }

    #[getter]
    fn handle(&self) -> usize {
        self.inner.raw() as usize
    }

    fn __hash__(&self) -> usize {
        self.inner.raw() as usize
    }
}

/// `current_context_handle()`: the raw handle of this thread's current context (0 when
/// there is none): the key of the Python side's per-context caches, asked on every array
/// operation, so it makes no object.
#[pyfunction]
pub fn current_context_handle() -> PyResult<usize> {
    let mut ctx: rucuda_driver::sys::CUcontext = std::ptr::null_mut();
    // SAFETY: writes one handle.
    unsafe { cu!(cuCtxGetCurrent(&mut ctx)) }.or_raise()?;
    Ok(ctx as usize)
}

/// Runs `f` with `ctx` pushed on this thread's context stack, then pops it: how a
/// destructor or a free works in its own context without disturbing the caller's stack
/// (rucuda's own release paths make their context current, which on a PyCUDA-style
/// stack would replace whatever context is on top).
pub fn with_pushed<R>(ctx: &rucuda_driver::Context, f: impl FnOnce() -> R) -> R {
    // Already current (the common case: an array freed in the context it was made in):
    // nothing to push, and the stack stays as it is either way.
    let mut now: rucuda_driver::sys::CUcontext = std::ptr::null_mut();
    // SAFETY: writes one handle.
    if unsafe { cu!(cuCtxGetCurrent(&mut now)) }.is_ok() && now == ctx.raw() {
        return f();
    }
    let pushed = ctx.push().is_ok();
    let r = f();
    if pushed {
        // Nothing to report to from a destructor; a failed pop leaves the stack as the
        // driver has it.
        let _ = rucuda_driver::Context::pop();
    }
    r
}

/// A rucuda object whose release runs with its context pushed (see [`with_pushed`]):
/// what every Python object holding one wraps it in, so that Python may drop objects
/// in any order, whatever context is current then.
pub struct InContext<T> {
    ctx: rucuda_driver::Context,
    inner: std::mem::ManuallyDrop<T>,
}

impl<T> InContext<T> {
    /// Wraps `inner`, which belongs to `ctx`.
    pub fn new(ctx: rucuda_driver::Context, inner: T) -> InContext<T> {
        InContext {
            ctx,
            inner: std::mem::ManuallyDrop::new(inner),
        }
    }

    /// The context the object belongs to.
    pub fn context(&self) -> &rucuda_driver::Context {
        &self.ctx
    }
}

impl<T> std::ops::Deref for InContext<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> Drop for InContext<T> {
    fn drop(&mut self) {
        let inner = &mut self.inner;
        // SAFETY: `inner` is dropped here once and never used again (we are in drop).
        with_pushed(&self.ctx, || unsafe { std::mem::ManuallyDrop::drop(inner) });
    }
}
