//! Profiler control: PyCUDA's `start_profiler` / `stop_profiler` (`cuProfilerStart` /
//! `cuProfilerStop`), which mark the range an attached profiler records.
//!
//! Run the program under Nsight Systems with
//! `nsys profile --capture-range=cudaProfilerApi ./program`, or Nsight Compute with
//! `ncu --profile-from-start off ./program`, and only the work between
//! [`start_profiler`] and [`stop_profiler`] is recorded. Without a profiler attached both
//! calls succeed and do nothing.
//!
//! PyCUDA's `initialize_profiler(config_file, output_file, output_mode)` and its
//! `profiler_output_mode` constants (`KEY_VALUE_PAIR`, `CSV`) drove the old command-line
//! profiler through `cuProfilerInitialize`. CUDA 12 removed that function and that
//! profiler; the replacement is the capture range above, with the output format chosen
//! on the Nsight command line (`nsys stats --format csv`, `ncu --csv`). rucuda therefore
//! offers no `initialize_profiler`.
//!
//! ```no_run
//! use rucuda_driver::*;
//! let ctx = Device::get(0)?.primary_context()?;
//! ctx.bind()?;
//! start_profiler()?;
//! // ... the work to profile ...
//! stop_profiler()?;
//! # Ok::<(), Error>(())
//! ```

use std::ffi::c_void;
use std::sync::OnceLock;

use rucuda_driver_sys::{CUdriverProcAddressQueryResult, CUresult};

use crate::context::Context;
use crate::device::init;
use crate::error::{check, Error, Result};

type ProfilerFn = unsafe extern "C" fn() -> CUresult;

/// `cuProfilerStart`/`cuProfilerStop` live in `cudaProfiler.h`, which the bindings do not
/// cover; the driver hands them out through `cuGetProcAddress` (they exist since CUDA 4.0,
/// hence the version asked for). Looked up once per process.
fn profiler_fn(
    name: &'static str,
    cell: &'static OnceLock<Option<ProfilerFn>>,
) -> Result<ProfilerFn> {
    init()?;
    cell.get_or_init(|| lookup(name).ok().flatten())
        .ok_or_else(|| missing(name))
}

fn missing(name: &'static str) -> Error {
    Error::MissingFunction(rucuda_driver_sys::MissingFunction {
        name,
        library_version: crate::error::driver().map_or(0, |d| d.version()),
    })
}

fn lookup(name: &'static str) -> Result<Option<ProfilerFn>> {
    let get_proc = crate::error::driver()?.cuGetProcAddress_v2()?;
    let symbol = std::ffi::CString::new(name).map_err(|_| Error::invalid("symbol has NUL"))?;
    let mut pfn: *mut c_void = std::ptr::null_mut();
    let mut status = CUdriverProcAddressQueryResult::CU_GET_PROC_ADDRESS_SUCCESS;
    // SAFETY: a NUL-terminated name; writes one pointer and one status; flags 0 is
    // CU_GET_PROC_ADDRESS_DEFAULT.
    let code = unsafe { get_proc(symbol.as_ptr(), &mut pfn, 4000, 0, &mut status) };
    check(code, "cuGetProcAddress_v2")?;
    if status != CUdriverProcAddressQueryResult::CU_GET_PROC_ADDRESS_SUCCESS || pfn.is_null() {
        return Ok(None);
    }
    // SAFETY: `pfn` is the driver's non-null entry point for `name`, whose C signature
    // (cudaProfiler.h) is `CUresult name(void)`.
    Ok(Some(unsafe {
        std::mem::transmute::<*mut c_void, ProfilerFn>(pfn)
    }))
}

static START: OnceLock<Option<ProfilerFn>> = OnceLock::new();
static STOP: OnceLock<Option<ProfilerFn>> = OnceLock::new();

/// Starts profile collection by an attached profiler for the context current on this
/// thread (PyCUDA's `start_profiler`, `cuProfilerStart`). Already started: no effect.
/// Make a context current first ([`Context::bind`]) or use [`Context::start_profiler`].
pub fn start_profiler() -> Result<()> {
    let f = profiler_fn("cuProfilerStart", &START)?;
    // SAFETY: takes no arguments.
    check(unsafe { f() }, "cuProfilerStart")
}

/// Stops profile collection for the current context and flushes what was collected
/// (PyCUDA's `stop_profiler`, `cuProfilerStop`). Already stopped: no effect.
pub fn stop_profiler() -> Result<()> {
    let f = profiler_fn("cuProfilerStop", &STOP)?;
    // SAFETY: takes no arguments.
    check(unsafe { f() }, "cuProfilerStop")
}

impl Context {
    /// Makes this context current on the calling thread and calls [`start_profiler`].
    ///
    /// ```no_run
    /// let ctx = rucuda_driver::Device::get(0)?.primary_context()?;
    /// ctx.start_profiler()?;
    /// ctx.stop_profiler()?;
    /// # Ok::<(), rucuda_driver::Error>(())
    /// ```
    pub fn start_profiler(&self) -> Result<()> {
        self.bind()?;
        start_profiler()
    }

    /// Makes this context current on the calling thread and calls [`stop_profiler`].
    pub fn stop_profiler(&self) -> Result<()> {
        self.bind()?;
        stop_profiler()
    }
}
