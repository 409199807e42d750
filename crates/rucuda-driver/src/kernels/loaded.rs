//! A loaded module's handle, shared by the [`Module`](crate::Module) and every
//! [`Function`](crate::Function) taken from it: the module is unloaded when the last of
//! them is gone.

use rucuda_driver_sys::CUmodule;

use crate::context::Context;
use crate::error::call;

/// The module handle with its context and the use log of its globals.
pub(crate) struct ModuleInner {
    pub(crate) raw: CUmodule,
    pub(crate) ctx: Context,
    /// One log for the uses of all its globals by copies (kernels of the module touch
    /// them implicitly, under the unsafe launch's contract).
    pub(crate) globals: crate::memory::tracking::UseLog,
}

// SAFETY: a CUmodule may be used from any thread of its context's process.
unsafe impl Send for ModuleInner {}
// SAFETY: as above; immutable handle.
unsafe impl Sync for ModuleInner {}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        // Queued copies into or out of the module's globals finish first; where that
        // wait fails the module stays loaded (leaked) rather than unloaded under them.
        let r = self
            .globals
            .wait_on_host(crate::memory::tracking::Access::Write)
            .and_then(|()| self.ctx.make_current())
            .and_then(|()| {
                // SAFETY: loaded by us; every Function holds this Arc, so none is left;
                // no queued copy uses its globals any more (waited above).
                unsafe { call!(cuModuleUnload(self.raw)) }
            });
        if let Err(e) = r {
            self.ctx.defer_error(e);
        }
    }
}
