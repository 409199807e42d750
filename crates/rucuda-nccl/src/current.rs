//! [`CurrentContextGuard`]: this thread's current context, put back after NCCL calls
//! that may switch devices.

use crate::error::Result;

/// Runs NCCL calls that may make another GPU current (group ends, communicator creation
/// and destruction) without changing which context is current on this thread: rucuda's
/// driver layer remembers the current context per thread, so NCCL's switches must not
/// outlive the call.
pub(crate) struct CurrentContextGuard {
    saved: Option<rucuda_driver_sys::CUcontext>,
}

impl CurrentContextGuard {
    pub(crate) fn new() -> Result<CurrentContextGuard> {
        let driver = rucuda_driver::driver()?;
        let get = driver
            .cuCtxGetCurrent()
            .map_err(rucuda_driver::Error::from)?;
        let mut saved: rucuda_driver_sys::CUcontext = std::ptr::null_mut();
        // SAFETY: writes one handle.
        let code = unsafe { get(&mut saved) };
        rucuda_driver::check(code, "cuCtxGetCurrent")?;
        Ok(CurrentContextGuard { saved: Some(saved) })
    }

    /// Makes `ctx` current until the guard drops, then puts back what was current, with
    /// plain driver calls: no queued errors of the context can stop a release or an abort.
    pub(crate) fn switch_to(ctx: &rucuda_driver::Context) -> Result<CurrentContextGuard> {
        let guard = CurrentContextGuard::new()?;
        if guard.saved != Some(ctx.raw()) {
            let set = rucuda_driver::driver()?
                .cuCtxSetCurrent()
                .map_err(rucuda_driver::Error::from)?;
            // SAFETY: the context is alive (the communicator holds it).
            rucuda_driver::check(unsafe { set(ctx.raw()) }, "cuCtxSetCurrent")?;
        }
        Ok(guard)
    }
}

impl Drop for CurrentContextGuard {
    fn drop(&mut self) {
        let Some(saved) = self.saved else { return };
        let Ok(driver) = rucuda_driver::driver() else {
            return;
        };
        let (Ok(get), Ok(set)) = (driver.cuCtxGetCurrent(), driver.cuCtxSetCurrent()) else {
            return;
        };
        let mut now: rucuda_driver_sys::CUcontext = std::ptr::null_mut();
        // SAFETY: writes one handle.
        unsafe { get(&mut now) };
        if now != saved {
            // SAFETY: `saved` was current when the guard was made, and is still alive:
            // every context rucuda hands out is held by the objects using it.
            unsafe { set(saved) };
        }
    }
}
