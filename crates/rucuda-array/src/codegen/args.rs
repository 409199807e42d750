//! [`ArgSpec`]: one typed kernel argument (a scalar value or an array, const or not) and
//! the names generated kernels reserve.

use crate::dtype::{DType, Element};

use super::CodegenError;

/// Names an operation may use that the generated skeleton defines: the element index
/// `i`, the element count `n`, the global thread index `tid` and the thread count
/// `total_threads` (PyCUDA's set). Arguments may not take them, nor names starting
/// with `rucuda_` (the generator's own).
pub const RESERVED_NAMES: [&str; 4] = ["i", "n", "tid", "total_threads"];

const C_KEYWORDS: &[&str] = &[
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "class",
    "namespace",
    "template",
    "this",
    "true",
    "false",
    "new",
    "delete",
    "operator",
    "private",
    "public",
    "protected",
    "virtual",
    "__restrict__",
    "__global__",
    "__device__",
    "__shared__",
    "__constant__",
];

/// Whether an argument is a value or an array, and whether the array is read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// Passed by value (`float a`).
    Scalar,
    /// A pointer to the array's elements (`float *x`); `is_const` for `const float *x`,
    /// which the kernel only reads.
    Vector {
        /// Declared `const`: read only.
        is_const: bool,
    },
}

/// One kernel argument: name, element type and kind (PyCUDA's `ScalarArg`/`VectorArg`).
///
/// ```
/// use rucuda_array::codegen::ArgSpec;
/// use rucuda_array::DType;
/// let x = ArgSpec::const_vector("x", DType::F32);
/// assert_eq!(x.declarator(), "const float *x");
/// assert_eq!(ArgSpec::scalar_of::<u64>("k").declarator(), "unsigned long long k");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArgSpec {
    name: String,
    dtype: DType,
    kind: ArgKind,
}

impl ArgSpec {
    /// A scalar passed by value.
    pub fn scalar(name: impl Into<String>, dtype: DType) -> ArgSpec {
        ArgSpec {
            name: name.into(),
            dtype,
            kind: ArgKind::Scalar,
        }
    }

    /// An array the kernel may read and write.
    pub fn vector(name: impl Into<String>, dtype: DType) -> ArgSpec {
        ArgSpec {
            name: name.into(),
            dtype,
            kind: ArgKind::Vector { is_const: false },
        }
    }

    /// An array the kernel only reads.
    pub fn const_vector(name: impl Into<String>, dtype: DType) -> ArgSpec {
        ArgSpec {
            name: name.into(),
            dtype,
            kind: ArgKind::Vector { is_const: true },
        }
    }

    /// [`ArgSpec::scalar`] with the type of `T`.
    pub fn scalar_of<T: Element>(name: impl Into<String>) -> ArgSpec {
        ArgSpec::scalar(name, T::DTYPE)
    }

    /// [`ArgSpec::vector`] with the type of `T`.
    pub fn vector_of<T: Element>(name: impl Into<String>) -> ArgSpec {
        ArgSpec::vector(name, T::DTYPE)
    }

    /// [`ArgSpec::const_vector`] with the type of `T`.
    pub fn const_vector_of<T: Element>(name: impl Into<String>) -> ArgSpec {
        ArgSpec::const_vector(name, T::DTYPE)
    }

    /// The argument's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Scalar or vector.
    pub fn kind(&self) -> ArgKind {
        self.kind
    }

    /// True for arrays.
    pub fn is_vector(&self) -> bool {
        matches!(self.kind, ArgKind::Vector { .. })
    }

    /// True for read-only arrays.
    pub fn is_const(&self) -> bool {
        matches!(self.kind, ArgKind::Vector { is_const: true })
    }

    /// The C declaration, as in the kernel's parameter list (without `__restrict__`).
    pub fn declarator(&self) -> String {
        match self.kind {
            ArgKind::Scalar => format!("{} {}", self.dtype.c_type(), self.name),
            ArgKind::Vector { is_const } => format!(
                "{}{} *{}",
                if is_const { "const " } else { "" },
                self.dtype.c_type(),
                self.name
            ),
        }
    }

    /// The C declaration with `__restrict__` on an array's pointer, for kernels whose
    /// arrays never alias.
    pub(crate) fn restrict_declarator(&self) -> String {
        match self.kind {
            ArgKind::Scalar => self.declarator(),
            ArgKind::Vector { is_const } => format!(
                "{}{} *__restrict__ {}",
                if is_const { "const " } else { "" },
                self.dtype.c_type(),
                self.name
            ),
        }
    }

    /// Bytes of its kernel parameter: the value's size, or 8 for a pointer.
    pub fn param_size(&self) -> usize {
        match self.kind {
            ArgKind::Scalar => self.dtype.size_bytes(),
            ArgKind::Vector { .. } => 8,
        }
    }

    /// Checks the name: a C identifier, not a keyword, not reserved.
    pub fn validate_name(&self) -> Result<(), CodegenError> {
        check_identifier(&self.name)
    }
}

/// True for a C identifier (`[A-Za-z_][A-Za-z0-9_]*`).
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn check_identifier(name: &str) -> Result<(), CodegenError> {
    let bad = |problem| CodegenError::BadName {
        name: name.to_string(),
        problem,
    };
    if !is_identifier(name) {
        return Err(bad("is not a C identifier"));
    }
    if C_KEYWORDS.contains(&name) {
        return Err(bad("is a C/C++ keyword"));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(bad(
            "is reserved (i, n, tid and total_threads are defined by the kernel)",
        ));
    }
    if name.starts_with("rucuda_") {
        return Err(bad("starts with `rucuda_`, which generated code reserves"));
    }
    Ok(())
}

/// Checks a whole argument list: valid, distinct names.
pub(crate) fn validate_arguments(args: &[ArgSpec]) -> Result<(), CodegenError> {
    for (k, a) in args.iter().enumerate() {
        a.validate_name()?;
        if args[..k].iter().any(|b| b.name == a.name) {
            return Err(CodegenError::DuplicateName(a.name.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarators_and_sizes() {
        assert_eq!(ArgSpec::scalar("a", DType::F64).declarator(), "double a");
        assert_eq!(
            ArgSpec::vector("z", DType::C64).declarator(),
            "rucuda_complex64 *z"
        );
        assert_eq!(
            ArgSpec::const_vector_of::<bool>("m").declarator(),
            "const bool *m"
        );
        assert_eq!(ArgSpec::scalar("a", DType::C128).param_size(), 16);
        assert_eq!(ArgSpec::vector("a", DType::I8).param_size(), 8);
        assert!(ArgSpec::const_vector("a", DType::I8).is_const());
        assert!(!ArgSpec::vector("a", DType::I8).is_const());
    }

    #[test]
    fn names_are_checked() {
        for bad in [
            "i",
            "n",
            "tid",
            "total_threads",
            "float",
            "2x",
            "a-b",
            "",
            "rucuda_x",
        ] {
            assert!(
                ArgSpec::scalar(bad, DType::F32).validate_name().is_err(),
                "{bad}"
            );
        }
        assert!(ArgSpec::scalar("x_1", DType::F32).validate_name().is_ok());
        let dup = [
            ArgSpec::scalar("x", DType::F32),
            ArgSpec::vector("x", DType::F32),
        ];
        assert_eq!(
            validate_arguments(&dup),
            Err(CodegenError::DuplicateName("x".into()))
        );
    }
}
