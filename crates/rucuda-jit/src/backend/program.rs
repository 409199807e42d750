//! One NVRTC program: create, add name expressions, compile, read the log, the output
//! and the lowered names, destroy.

use std::ffi::{c_char, c_int, CStr, CString};

use super::nvrtc_call::check;
use crate::error::{Error, Result};
use crate::nvrtc::bindings::{nvrtcProgram, nvrtcResult};
use crate::nvrtc::Nvrtc;

/// An `nvrtcProgram` and the strings it was made from; destroyed on drop.
pub(crate) struct Program {
    nvrtc: &'static Nvrtc,
    raw: nvrtcProgram,
}

fn c_string(what: &str, text: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::InvalidInput(format!("{what} contains a NUL byte")))
}

impl Program {
    /// `nvrtcCreateProgram` with in-memory `headers`: each `(name, text)` is what an
    /// `#include` of `name` reads (NVRTC copies them).
    pub(crate) fn new(
        nvrtc: &'static Nvrtc,
        source: &str,
        name: &str,
        headers: &[(&str, &str)],
    ) -> Result<Program> {
        let create = nvrtc.nvrtcCreateProgram()?;
        let source = c_string("the source", source)?;
        let name = c_string("the program name", name)?;
        let header_names: Vec<CString> = headers
            .iter()
            .map(|(n, _)| c_string("a header name", n))
            .collect::<Result<_>>()?;
        let header_texts: Vec<CString> = headers
            .iter()
            .map(|(_, t)| c_string("a header", t))
            .collect::<Result<_>>()?;
        let name_ptrs: Vec<*const c_char> = header_names.iter().map(|n| n.as_ptr()).collect();
        let text_ptrs: Vec<*const c_char> = header_texts.iter().map(|t| t.as_ptr()).collect();
        let count = c_int::try_from(headers.len())
            .map_err(|_| Error::InvalidInput("too many headers".into()))?;
        let (names_arg, texts_arg) = if headers.is_empty() {
            (std::ptr::null(), std::ptr::null())
        } else {
            (name_ptrs.as_ptr(), text_ptrs.as_ptr())
        };
        let mut raw: nvrtcProgram = std::ptr::null_mut();
        // SAFETY: every string is NUL-terminated and outlives the call (NVRTC copies
        // them); the two header arrays hold `count` pointers each, or are null with a
        // count of zero.
        let code = unsafe {
            create(
                &mut raw,
                source.as_ptr(),
                name.as_ptr(),
                count,
                texts_arg,
                names_arg,
            )
        };
        check(nvrtc, code, "nvrtcCreateProgram")?;
        Ok(Program { nvrtc, raw })
    }

    /// `nvrtcAddNameExpression`: asks for the lowered (mangled) name of `expression`.
    pub(crate) fn add_name_expression(&mut self, expression: &str) -> Result<()> {
        let add = self.nvrtc.nvrtcAddNameExpression()?;
        let expression = c_string("a name expression", expression)?;
        // SAFETY: `raw` is a live program; the string is NUL-terminated and copied.
        let code = unsafe { add(self.raw, expression.as_ptr()) };
        check(self.nvrtc, code, "nvrtcAddNameExpression")
    }

    /// `nvrtcCompileProgram`: returns NVRTC's result code (a failed compile is not an
    /// `Err` here: the caller reads the log and builds a `CompileError`).
    pub(crate) fn compile(&mut self, options: &[String]) -> Result<nvrtcResult> {
        let compile = self.nvrtc.nvrtcCompileProgram()?;
        let owned: Vec<CString> = options
            .iter()
            .map(|o| c_string("a compile option", o))
            .collect::<Result<_>>()?;
        let pointers: Vec<*const c_char> = owned.iter().map(|o| o.as_ptr()).collect();
        let count = c_int::try_from(pointers.len())
            .map_err(|_| Error::InvalidInput("too many compile options".into()))?;
        // SAFETY: `raw` is live; `pointers` holds `count` NUL-terminated strings that
        // outlive the call.
        Ok(unsafe { compile(self.raw, count, pointers.as_ptr()) })
    }

    /// Reads a size then the bytes, for the log and every output kind.
    fn read(
        &self,
        size_fn: unsafe extern "C" fn(nvrtcProgram, *mut usize) -> nvrtcResult,
        data_fn: unsafe extern "C" fn(nvrtcProgram, *mut c_char) -> nvrtcResult,
        what: [&'static str; 2],
    ) -> Result<Vec<u8>> {
        let mut size = 0usize;
        // SAFETY: `raw` is live; one usize written through a valid pointer.
        let code = unsafe { size_fn(self.raw, &mut size) };
        check(self.nvrtc, code, what[0])?;
        let mut bytes = vec![0u8; size];
        if size > 0 {
            // SAFETY: the buffer holds the `size` bytes NVRTC said it would write.
            let code = unsafe { data_fn(self.raw, bytes.as_mut_ptr().cast()) };
            check(self.nvrtc, code, what[1])?;
        }
        Ok(bytes)
    }

    /// The compile log (warnings and errors), without its trailing NUL.
    pub(crate) fn log(&self) -> Result<String> {
        let n = self.nvrtc;
        let mut bytes = self.read(
            n.nvrtcGetProgramLogSize()?,
            n.nvrtcGetProgramLog()?,
            ["nvrtcGetProgramLogSize", "nvrtcGetProgramLog"],
        )?;
        strip_nul(&mut bytes);
        Ok(String::from_utf8_lossy(&bytes).trim_end().to_string())
    }

    /// The PTX text, with its trailing NUL (what `cuModuleLoadData` wants).
    pub(crate) fn ptx(&self) -> Result<Vec<u8>> {
        let n = self.nvrtc;
        self.read(
            n.nvrtcGetPTXSize()?,
            n.nvrtcGetPTX()?,
            ["nvrtcGetPTXSize", "nvrtcGetPTX"],
        )
    }

    /// The cubin (only when compiled for a real `sm_XY` architecture).
    pub(crate) fn cubin(&self) -> Result<Vec<u8>> {
        let n = self.nvrtc;
        self.read(
            n.nvrtcGetCUBINSize()?,
            n.nvrtcGetCUBIN()?,
            ["nvrtcGetCUBINSize", "nvrtcGetCUBIN"],
        )
    }

    /// The LTO-IR (only when compiled with `-dlto`).
    pub(crate) fn lto_ir(&self) -> Result<Vec<u8>> {
        let n = self.nvrtc;
        self.read(
            n.nvrtcGetLTOIRSize()?,
            n.nvrtcGetLTOIR()?,
            ["nvrtcGetLTOIRSize", "nvrtcGetLTOIR"],
        )
    }

    /// `nvrtcGetLoweredName` of an expression added before compiling.
    pub(crate) fn lowered_name(&self, expression: &str) -> Result<String> {
        let get = self.nvrtc.nvrtcGetLoweredName()?;
        let expression = c_string("a name expression", expression)?;
        let mut lowered: *const c_char = std::ptr::null();
        // SAFETY: `raw` is live and compiled; NVRTC writes a pointer to a string it owns
        // (valid until the program is destroyed), which we copy at once.
        let code = unsafe { get(self.raw, expression.as_ptr(), &mut lowered) };
        check(self.nvrtc, code, "nvrtcGetLoweredName")?;
        if lowered.is_null() {
            return Err(Error::InvalidInput(format!(
                "NVRTC gave no lowered name for {expression:?}"
            )));
        }
        // SAFETY: non-null, NUL-terminated, owned by the live program.
        Ok(unsafe { CStr::from_ptr(lowered) }
            .to_string_lossy()
            .into_owned())
    }
}

/// Drops trailing NUL bytes.
fn strip_nul(bytes: &mut Vec<u8>) {
    while bytes.last() == Some(&0) {
        bytes.pop();
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        if let Ok(destroy) = self.nvrtc.nvrtcDestroyProgram() {
            // SAFETY: `raw` came from nvrtcCreateProgram and is destroyed once, here.
            // A failure cannot be reported from drop; NVRTC frees nothing more then.
            let _ = unsafe { destroy(&mut self.raw) };
        }
    }
}
