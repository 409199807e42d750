//! [`ScanSpec`]: everything that defines a scan (element type, operator, neutral
//! element, inclusive or exclusive, preamble, name), validated, and its builder.

use crate::codegen::CodegenError;
use crate::dtype::{DType, Element};
use crate::error::{ArrayError, Result};

/// Inclusive (`out[i] = x[0] ⊕ … ⊕ x[i]`) or exclusive (`out[i] = neutral ⊕ x[0] ⊕ … ⊕
/// x[i-1]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScanKind {
    /// Each output includes its own element.
    Inclusive,
    /// Each output stops before its own element; the first is the neutral element.
    Exclusive,
}

/// The definition of a scan kernel (PyCUDA's `InclusiveScanKernel` and
/// `ExclusiveScanKernel` arguments).
///
/// `scan_expr` over `a` (the earlier part) and `b` (the later part) must be
/// associative; it need not be commutative (the order of elements is kept everywhere).
/// `neutral` must be its identity on both sides (`0` for `a+b`, the lowest value for
/// `max`): it fills the end of the last tile and starts the look-back. Inclusive scans
/// need none, as PyCUDA's `InclusiveScanKernel` does not: without one, every partial
/// value carries a flag saying whether it holds an element yet, and the operator is
/// applied only to values that do (a max-scan of floats needs no `-inf`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScanSpec {
    pub(crate) name: String,
    pub(crate) dtype: DType,
    pub(crate) scan_expr: String,
    pub(crate) neutral: String,
    pub(crate) preamble: String,
    pub(crate) kind: ScanKind,
}

impl ScanSpec {
    /// Starts a spec over `dtype` (name `scan`, inclusive until told otherwise).
    ///
    /// ```
    /// use rucuda_array::scan::{ScanKind, ScanSpec};
    /// use rucuda_array::DType;
    /// let s = ScanSpec::builder(DType::I32).scan("a > b ? a : b").neutral("-2147483647 - 1")
    ///     .name("running_max").build().unwrap();
    /// assert_eq!(s.kind(), ScanKind::Inclusive);
    /// ```
    pub fn builder(dtype: DType) -> ScanBuilder {
        ScanBuilder {
            spec: ScanSpec {
                name: "scan".into(),
                dtype,
                scan_expr: String::new(),
                neutral: String::new(),
                preamble: String::new(),
                kind: ScanKind::Inclusive,
            },
        }
    }

    /// The kernel's name (entry points add suffixes).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The element type of input and output.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The operator over `a` and `b`.
    pub fn scan_expr(&self) -> &str {
        &self.scan_expr
    }

    /// The neutral element (a C expression; empty when the scan has none).
    pub fn neutral(&self) -> &str {
        &self.neutral
    }

    /// True when a neutral element was given (always for exclusive scans).
    pub fn has_neutral(&self) -> bool {
        !self.neutral.trim().is_empty()
    }

    /// The preamble.
    pub fn preamble(&self) -> &str {
        &self.preamble
    }

    /// Inclusive or exclusive.
    pub fn kind(&self) -> ScanKind {
        self.kind
    }
}

/// Builds a [`ScanSpec`].
///
/// ```
/// use rucuda_array::scan::ScanSpec;
/// let s = ScanSpec::builder(rucuda_array::DType::F64).scan("a + b").neutral("0")
///     .exclusive().build().unwrap();
/// assert_eq!(s.name(), "scan");
/// ```
#[derive(Debug, Clone)]
pub struct ScanBuilder {
    spec: ScanSpec,
}

impl ScanBuilder {
    /// Over `T` instead of the type given to [`ScanSpec::builder`].
    pub fn dtype_of<T: Element>(mut self) -> Self {
        self.spec.dtype = T::DTYPE;
        self
    }

    /// The operator over `a` and `b` (`"a + b"`, `"max(a, b)"`).
    pub fn scan(mut self, scan_expr: impl Into<String>) -> Self {
        self.spec.scan_expr = scan_expr.into();
        self
    }

    /// Its identity, a C expression of the element type (needed by exclusive scans
    /// only; an empty string means none).
    pub fn neutral(mut self, neutral: impl Into<String>) -> Self {
        self.spec.neutral = neutral.into();
        self
    }

    /// C/C++ code placed before the kernel.
    pub fn preamble(mut self, preamble: impl Into<String>) -> Self {
        self.spec.preamble = preamble.into();
        self
    }

    /// The kernel's name (PyCUDA's `name_prefix`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.spec.name = name.into();
        self
    }

    /// Inclusive or exclusive.
    pub fn kind(mut self, kind: ScanKind) -> Self {
        self.spec.kind = kind;
        self
    }

    /// An inclusive scan.
    pub fn inclusive(self) -> Self {
        self.kind(ScanKind::Inclusive)
    }

    /// An exclusive scan.
    pub fn exclusive(self) -> Self {
        self.kind(ScanKind::Exclusive)
    }

    /// Checks the name and that the operator and neutral element are given.
    pub fn build(self) -> Result<ScanSpec> {
        let s = self.spec;
        if !crate::codegen::is_identifier(&s.name) || s.name.starts_with("rucuda_") {
            return Err(CodegenError::BadKernelName(s.name).into());
        }
        if s.scan_expr.trim().is_empty() {
            return Err(ArrayError::InvalidArgument(format!(
                "scan `{}` has no scan expression",
                s.name
            )));
        }
        if s.neutral.trim().is_empty() && s.kind == ScanKind::Exclusive {
            return Err(ArrayError::InvalidArgument(format!(
                "exclusive scan `{}` has no neutral element (the identity of its operator, \
                 its first output)",
                s.name
            )));
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_checks() {
        let b = || ScanSpec::builder(DType::I32).scan("a+b").neutral("0");
        assert!(b().build().is_ok());
        assert!(b().scan("").build().is_err());
        assert!(b().neutral(" ").exclusive().build().is_err());
        let free = b().neutral("").build().unwrap();
        assert!(!free.has_neutral() && b().build().unwrap().has_neutral());
        assert!(b().name("2x").build().is_err());
        assert!(b().name("rucuda_scan").build().is_err());
        let s = b()
            .dtype_of::<u8>()
            .exclusive()
            .name("bytes")
            .build()
            .unwrap();
        assert_eq!(
            (s.dtype(), s.kind(), s.name()),
            (DType::U8, ScanKind::Exclusive, "bytes")
        );
    }
}
