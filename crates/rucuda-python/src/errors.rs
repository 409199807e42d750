//! rucuda's errors as PyCUDA's exception classes.
//!
//! The classes live in Python (`rucuda/_errors.py`), where PyCUDA's multiple inheritance
//! (`pycuda.driver.MemoryError` is both `Error` and the built-in `MemoryError`) is one
//! line; an error looks its class up there when it is raised.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyType;
use rucuda_driver::ErrorKind;

/// Builds an exception of the class `name` of `rucuda._errors` carrying `message`.
pub fn raise(name: &str, message: String) -> PyErr {
    Python::with_gil(|py| {
        let class = py
            .import("rucuda._errors")
            .and_then(|m| m.getattr(name))
            .and_then(|c| c.downcast_into::<PyType>().map_err(PyErr::from));
        match class {
            Ok(class) => PyErr::from_type(class, message),
            Err(_) => PyRuntimeError::new_err(message),
        }
    })
}

/// The class name of a driver error's kind.
pub fn class_of(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Memory => "MemoryError",
        ErrorKind::Logic => "LogicError",
        ErrorKind::Launch => "LaunchError",
        ErrorKind::Runtime => "RuntimeError",
        ErrorKind::NotSupported => "NotSupportedError",
        ErrorKind::NoDriver => "NoDriverError",
    }
}

/// A rucuda result turned into a Python one.
pub trait OrRaise<T> {
    /// The value, or the matching Python exception with rucuda's message.
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, rucuda_driver::Error> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(|e| raise(class_of(e.kind()), e.to_string()))
    }
}

impl<T> OrRaise<T> for Result<T, rucuda_jit::Error> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(|e| match e {
            rucuda_jit::Error::Driver(d) => raise(class_of(d.kind()), d.to_string()),
            rucuda_jit::Error::Compile(c) => raise("CompileError", c.to_string()),
            rucuda_jit::Error::NvrtcNotFound(_) | rucuda_jit::Error::NvccNotFound { .. } => {
                raise("CompilerNotFoundError", e.to_string())
            }
            rucuda_jit::Error::NoArch | rucuda_jit::Error::NoContext => {
                raise("LogicError", e.to_string())
            }
            other => raise("CompileError", other.to_string()),
        })
    }
}

/// Calls a driver function through rucuda's loaded table, as a rucuda result.
macro_rules! cu {
    ($f:ident ( $($arg:expr),* $(,)? )) => {{
        match rucuda_driver::driver().and_then(|d| d.$f().map_err(rucuda_driver::Error::from)) {
            Ok(f) => rucuda_driver::check(f($($arg),*), stringify!($f)),
            Err(e) => Err(e),
        }
    }};
}
pub(crate) use cu;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_class_of_rucuda_errors() {
        let kinds = [
            (ErrorKind::Memory, "MemoryError"),
            (ErrorKind::Logic, "LogicError"),
            (ErrorKind::Launch, "LaunchError"),
            (ErrorKind::Runtime, "RuntimeError"),
            (ErrorKind::NotSupported, "NotSupportedError"),
            (ErrorKind::NoDriver, "NoDriverError"),
        ];
        let python = include_str!("../python/rucuda/_errors.py");
        for (kind, name) in kinds {
            assert_eq!(class_of(kind), name);
            assert!(python.contains(&format!("class {name}(")), "{name}");
        }
    }
}
