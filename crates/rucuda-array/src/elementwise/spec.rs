//! [`ElementwiseSpec`]: everything that defines an elementwise kernel (name, typed
//! arguments, the operation and its optional snippets), validated, plus its builder.

use crate::codegen::{
    parse_arguments, validate_arguments, ArgSpec, CodegenError, OperationAnalysis,
};
use crate::dtype::{DType, Element};
use crate::error::Result;

/// The definition of an elementwise kernel (PyCUDA's `ElementwiseKernel` arguments).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ElementwiseSpec {
    pub(crate) name: String,
    pub(crate) args: Vec<ArgSpec>,
    pub(crate) operation: String,
    pub(crate) preamble: String,
    pub(crate) loop_prep: String,
    pub(crate) after_loop: String,
}

impl ElementwiseSpec {
    /// A spec from PyCUDA's three strings (argument list, operation, name).
    ///
    /// ```
    /// use rucuda_array::elementwise::ElementwiseSpec;
    /// let s = ElementwiseSpec::parse("float a, float *x", "x[i] *= a", "scale").unwrap();
    /// assert_eq!(s.args().len(), 2);
    /// assert!(ElementwiseSpec::parse("float n, float *x", "x[i] = n", "k").is_err());
    /// ```
    pub fn parse(arguments: &str, operation: &str, name: &str) -> Result<ElementwiseSpec> {
        ElementwiseSpec::builder(name)
            .args(parse_arguments(arguments)?)
            .operation(operation)
            .build()
    }

    /// Starts a spec named `name` (the kernel's entry point; variants add suffixes).
    pub fn builder(name: impl Into<String>) -> ElementwiseBuilder {
        ElementwiseBuilder {
            spec: ElementwiseSpec {
                name: name.into(),
                args: Vec::new(),
                operation: String::new(),
                preamble: String::new(),
                loop_prep: String::new(),
                after_loop: String::new(),
            },
        }
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The arguments, in order.
    pub fn args(&self) -> &[ArgSpec] {
        &self.args
    }

    /// The operation, run once per element with `i` its index.
    pub fn operation(&self) -> &str {
        &self.operation
    }

    /// The element types the kernel's source mentions.
    pub(crate) fn dtypes(&self) -> impl Iterator<Item = DType> + '_ {
        self.args.iter().map(ArgSpec::dtype)
    }

    /// True when the operation (and the code after the loop) uses the index `i` only as
    /// a subscript `x[i]`: then the elements may be visited in any order that is the same
    /// for every array (the built-in operations' fast path over F-ordered arrays).
    pub(crate) fn index_only_in_subscripts(&self) -> bool {
        crate::codegen::index_only_in_subscripts(&self.operation)
            && crate::codegen::index_only_in_subscripts(&self.after_loop)
    }

    /// How the operation uses each array argument.
    pub(crate) fn analysis(&self) -> OperationAnalysis {
        OperationAnalysis::of_arrays(&self.operation, &self.args)
    }
}

/// Builds an [`ElementwiseSpec`] with typed arguments (the Rust-first interface).
///
/// ```
/// use rucuda_array::elementwise::ElementwiseSpec;
/// let spec = ElementwiseSpec::builder("saxpy")
///     .scalar::<f32>("a")
///     .input::<f32>("x")
///     .input::<f32>("y")
///     .output::<f32>("z")
///     .operation("z[i] = a * x[i] + y[i]")
///     .build()
///     .unwrap();
/// assert_eq!(spec.args()[1].declarator(), "const float *x");
/// ```
#[derive(Debug, Clone)]
pub struct ElementwiseBuilder {
    spec: ElementwiseSpec,
}

impl ElementwiseBuilder {
    /// Appends an argument.
    pub fn arg(mut self, arg: ArgSpec) -> Self {
        self.spec.args.push(arg);
        self
    }

    /// Appends several arguments.
    pub fn args(mut self, args: impl IntoIterator<Item = ArgSpec>) -> Self {
        self.spec.args.extend(args);
        self
    }

    /// Appends a scalar argument of type `T`.
    pub fn scalar<T: Element>(self, name: &str) -> Self {
        self.arg(ArgSpec::scalar_of::<T>(name))
    }

    /// Appends a read-only array argument of type `T` (`const T *name`).
    pub fn input<T: Element>(self, name: &str) -> Self {
        self.arg(ArgSpec::const_vector_of::<T>(name))
    }

    /// Appends a writable array argument of type `T` (`T *name`).
    pub fn output<T: Element>(self, name: &str) -> Self {
        self.arg(ArgSpec::vector_of::<T>(name))
    }

    /// The operation, C statements run for each index `i` (e.g. `z[i] = x[i] + y[i]`).
    pub fn operation(mut self, operation: impl Into<String>) -> Self {
        self.spec.operation = operation.into();
        self
    }

    /// C/C++ code placed before the kernel (helper functions, macros).
    pub fn preamble(mut self, preamble: impl Into<String>) -> Self {
        self.spec.preamble = preamble.into();
        self
    }

    /// Statements run once per thread before the loop.
    pub fn loop_prep(mut self, loop_prep: impl Into<String>) -> Self {
        self.spec.loop_prep = loop_prep.into();
        self
    }

    /// Statements run once per thread after the loop.
    pub fn after_loop(mut self, after_loop: impl Into<String>) -> Self {
        self.spec.after_loop = after_loop.into();
        self
    }

    /// Checks names (C identifiers, not reserved, distinct) and that some argument is an
    /// array.
    pub fn build(self) -> Result<ElementwiseSpec> {
        let s = self.spec;
        if !crate::codegen::is_identifier(&s.name) || s.name.starts_with("rucuda_") {
            return Err(CodegenError::BadKernelName(s.name).into());
        }
        validate_arguments(&s.args)?;
        if !s.args.iter().any(ArgSpec::is_vector) {
            return Err(CodegenError::NoVectorArgument(s.name).into());
        }
        Ok(s)
    }
}
