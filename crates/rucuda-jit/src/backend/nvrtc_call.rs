//! Calling NVRTC outside a program: its result codes as this crate's errors
//! ([`check`]) and the architectures it can compile for ([`Nvrtc::supported_archs`]).

use std::ffi::c_int;

use crate::error::{Error, Result};
use crate::nvrtc::bindings::nvrtcResult;
use crate::nvrtc::{result_name, Nvrtc};

/// Turns an NVRTC result into `Ok` or an [`Error::Nvrtc`] naming the call.
pub(crate) fn check(nvrtc: &Nvrtc, code: nvrtcResult, call: &'static str) -> Result<()> {
    if code == nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    let message = nvrtc
        .nvrtcGetErrorString()
        .ok()
        .map(|get| {
            // SAFETY: nvrtcGetErrorString returns a static NUL-terminated string (or null).
            let ptr = unsafe { get(code) };
            if ptr.is_null() {
                String::new()
            } else {
                // SAFETY: non-null, NUL-terminated and static, per NVRTC's documentation.
                unsafe { std::ffi::CStr::from_ptr(ptr) }
                    .to_string_lossy()
                    .into_owned()
            }
        })
        .unwrap_or_default();
    Err(Error::Nvrtc {
        call,
        code: code.0,
        name: result_name(code),
        message,
    })
}

impl Nvrtc {
    /// The architectures this NVRTC can compile for (`nvrtcGetSupportedArchs`), as
    /// numbers such as 75, 80, 90, 100.
    ///
    /// ```no_run
    /// let archs = rucuda_jit::nvrtc::Nvrtc::get()?.supported_archs()?;
    /// assert!(archs.contains(&90));
    /// # Ok::<(), rucuda_jit::Error>(())
    /// ```
    pub fn supported_archs(&self) -> Result<Vec<i32>> {
        let count_fn = self.nvrtcGetNumSupportedArchs()?;
        let list_fn = self.nvrtcGetSupportedArchs()?;
        let mut count: c_int = 0;
        // SAFETY: writes one int through a valid pointer.
        let code = unsafe { count_fn(&mut count) };
        check(self, code, "nvrtcGetNumSupportedArchs")?;
        let mut archs = vec![0 as c_int; usize::try_from(count).unwrap_or(0)];
        // SAFETY: the buffer holds the `count` ints NVRTC said it would write.
        let code = unsafe { list_fn(archs.as_mut_ptr()) };
        check(self, code, "nvrtcGetSupportedArchs")?;
        Ok(archs)
    }
}
