//! [`ReductionSpec`]: everything that defines a reduction (name, output and accumulator
//! types, neutral element, reduce and map expressions, typed arguments, preamble),
//! validated, and its builder.

use crate::codegen::{
    parse_arguments, validate_arguments, ArgSpec, CodegenError, OperationAnalysis,
};
use crate::dtype::{DType, Element};
use crate::error::{ArrayError, Result};

/// The C type a reduction accumulates in or produces: an element type, or a struct of
/// your own defined in the preamble (PyCUDA's struct reductions).
///
/// ```
/// use rucuda_array::reduction::ReductionType;
/// use rucuda_array::DType;
/// assert_eq!(ReductionType::DType(DType::F64).c_type(), "double");
/// let s = ReductionType::structure("minmax", 8, 4);
/// assert_eq!((s.c_type(), s.size_bytes()), ("minmax", 8));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ReductionType {
    /// One of the array element types.
    DType(DType),
    /// A C struct (or any trivially copyable, default-constructible C++ type) that the
    /// preamble defines.
    Struct {
        /// Its C name.
        c_name: String,
        /// `sizeof` on the device.
        size: usize,
        /// `alignof` on the device.
        align: usize,
    },
}

impl ReductionType {
    /// A struct type named `c_name` of `size` bytes aligned to `align`.
    pub fn structure(c_name: impl Into<String>, size: usize, align: usize) -> ReductionType {
        ReductionType::Struct {
            c_name: c_name.into(),
            size,
            align,
        }
    }

    /// The C name used in the kernel.
    pub fn c_type(&self) -> &str {
        match self {
            ReductionType::DType(d) => d.c_type(),
            ReductionType::Struct { c_name, .. } => c_name,
        }
    }

    /// Bytes of one value on the device.
    pub fn size_bytes(&self) -> usize {
        match self {
            ReductionType::DType(d) => d.size_bytes(),
            ReductionType::Struct { size, .. } => *size,
        }
    }

    /// Alignment in bytes on the device.
    pub fn align_bytes(&self) -> usize {
        match self {
            ReductionType::DType(d) => d.align_bytes(),
            ReductionType::Struct { align, .. } => *align,
        }
    }

    /// The element type, for element-typed outputs.
    pub fn dtype(&self) -> Option<DType> {
        match self {
            ReductionType::DType(d) => Some(*d),
            ReductionType::Struct { .. } => None,
        }
    }

    /// For messages: the NumPy name or `struct NAME`.
    pub fn describe(&self) -> String {
        match self {
            ReductionType::DType(d) => d.name().to_string(),
            ReductionType::Struct { c_name, size, .. } => {
                format!("struct {c_name} ({size} bytes)")
            }
        }
    }
}

/// The definition of a reduction kernel (PyCUDA's `ReductionKernel` arguments).
///
/// The result is `reduce(... reduce(reduce(neutral, map(0)), map(1)) ..., map(n-1))` in
/// some order: `reduce_expr` (over `a` and `b`) must be associative and commutative, and
/// `neutral` its identity. `map_expr` is evaluated for every index `i` of the arrays
/// (`n` elements) and may use the arguments, `i` and `n`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReductionSpec {
    pub(crate) name: String,
    pub(crate) output: ReductionType,
    pub(crate) accumulator: ReductionType,
    pub(crate) neutral: String,
    pub(crate) reduce_expr: String,
    pub(crate) map_expr: String,
    pub(crate) args: Vec<ArgSpec>,
    pub(crate) preamble: String,
}

impl ReductionSpec {
    /// PyCUDA's form: output type, neutral, reduce expression, map expression, C argument
    /// list, name.
    ///
    /// ```
    /// use rucuda_array::reduction::ReductionSpec;
    /// use rucuda_array::DType;
    /// let dot = ReductionSpec::parse(DType::F32, "0", "a+b", "x[i]*y[i]",
    ///                                "const float *x, const float *y", "dot").unwrap();
    /// assert_eq!(dot.args().len(), 2);
    /// ```
    pub fn parse(
        dtype_out: DType,
        neutral: &str,
        reduce_expr: &str,
        map_expr: &str,
        arguments: &str,
        name: &str,
    ) -> Result<ReductionSpec> {
        ReductionSpec::builder(name)
            .output_dtype(dtype_out)
            .neutral(neutral)
            .reduce(reduce_expr)
            .map(map_expr)
            .args(parse_arguments(arguments)?)
            .build()
    }

    /// Starts a spec named `name` (the kernel's entry point; variants add suffixes).
    pub fn builder(name: impl Into<String>) -> ReductionBuilder {
        ReductionBuilder {
            name: name.into(),
            output: None,
            accumulator: None,
            neutral: String::new(),
            reduce_expr: String::new(),
            map_expr: String::new(),
            args: Vec::new(),
            preamble: String::new(),
        }
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The type of the result.
    pub fn output(&self) -> &ReductionType {
        &self.output
    }

    /// The type partial results are kept in (the output type unless set).
    pub fn accumulator(&self) -> &ReductionType {
        &self.accumulator
    }

    /// The neutral element (a C expression).
    pub fn neutral(&self) -> &str {
        &self.neutral
    }

    /// The reduce expression over `a` and `b`.
    pub fn reduce_expr(&self) -> &str {
        &self.reduce_expr
    }

    /// The map expression over `i` and the arguments.
    pub fn map_expr(&self) -> &str {
        &self.map_expr
    }

    /// The arguments, in order.
    pub fn args(&self) -> &[ArgSpec] {
        &self.args
    }

    /// The preamble.
    pub fn preamble(&self) -> &str {
        &self.preamble
    }

    /// How the map expression uses each array argument.
    pub(crate) fn analysis(&self) -> OperationAnalysis {
        OperationAnalysis::of_arrays(&self.map_expr, &self.args)
    }

    /// The element types the kernel's source mentions.
    pub(crate) fn dtypes(&self) -> Vec<DType> {
        let mut d: Vec<DType> = self.args.iter().map(ArgSpec::dtype).collect();
        d.extend(self.output.dtype());
        d.extend(self.accumulator.dtype());
        d
    }
}

/// Builds a [`ReductionSpec`] with typed arguments (the Rust-first interface).
///
/// ```
/// use rucuda_array::reduction::ReductionSpec;
/// let spec = ReductionSpec::builder("sum_sq")
///     .output::<f64>()
///     .neutral("0")
///     .reduce("a + b")
///     .map("(double)x[i] * x[i]")
///     .input::<f32>("x")
///     .build()
///     .unwrap();
/// assert_eq!(spec.args()[0].declarator(), "const float *x");
/// ```
#[derive(Debug, Clone)]
pub struct ReductionBuilder {
    name: String,
    output: Option<ReductionType>,
    accumulator: Option<ReductionType>,
    neutral: String,
    reduce_expr: String,
    map_expr: String,
    args: Vec<ArgSpec>,
    preamble: String,
}

impl ReductionBuilder {
    /// The result's element type is `T`.
    pub fn output<T: Element>(self) -> Self {
        self.output_dtype(T::DTYPE)
    }

    /// The result's element type.
    pub fn output_dtype(mut self, dtype: DType) -> Self {
        self.output = Some(ReductionType::DType(dtype));
        self
    }

    /// The result is a struct the preamble defines, laid out like `S` (use a `#[repr(C)]`
    /// Rust struct with the same fields to read it back).
    pub fn output_struct<S>(mut self, c_name: impl Into<String>) -> Self {
        self.output = Some(ReductionType::structure(
            c_name,
            std::mem::size_of::<S>(),
            std::mem::align_of::<S>(),
        ));
        self
    }

    /// Any output type.
    pub fn output_type(mut self, ty: ReductionType) -> Self {
        self.output = Some(ty);
        self
    }

    /// Accumulate in another type than the output (e.g. `float` for a `half` sum); the
    /// final value is converted with a C cast.
    pub fn accumulator(mut self, ty: ReductionType) -> Self {
        self.accumulator = Some(ty);
        self
    }

    /// The neutral element, a C expression of the accumulator type (`"0"`,
    /// `"minmax_collector()"`).
    pub fn neutral(mut self, neutral: impl Into<String>) -> Self {
        self.neutral = neutral.into();
        self
    }

    /// The reduce expression over `a` and `b` (`"a + b"`, `"max(a, b)"`).
    pub fn reduce(mut self, reduce_expr: impl Into<String>) -> Self {
        self.reduce_expr = reduce_expr.into();
        self
    }

    /// The map expression over `i` and the arguments (`"x[i] * y[i]"`); defaults to
    /// `x[i]` when there is exactly one array argument `x`.
    pub fn map(mut self, map_expr: impl Into<String>) -> Self {
        self.map_expr = map_expr.into();
        self
    }

    /// Appends an argument.
    pub fn arg(mut self, arg: ArgSpec) -> Self {
        self.args.push(arg);
        self
    }

    /// Appends several arguments (e.g. from [`crate::codegen::parse_arguments`]).
    pub fn args(mut self, args: impl IntoIterator<Item = ArgSpec>) -> Self {
        self.args.extend(args);
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

    /// C/C++ code placed before the kernel (structs, helper functions).
    pub fn preamble(mut self, preamble: impl Into<String>) -> Self {
        self.preamble = preamble.into();
        self
    }

    /// Checks names, that an output type, a neutral element and a reduce expression are
    /// given, and that some argument is an array.
    pub fn build(self) -> Result<ReductionSpec> {
        let name = self.name;
        if !crate::codegen::is_identifier(&name) || name.starts_with("rucuda_") {
            return Err(CodegenError::BadKernelName(name).into());
        }
        validate_arguments(&self.args)?;
        let vectors: Vec<&ArgSpec> = self.args.iter().filter(|a| a.is_vector()).collect();
        if vectors.is_empty() {
            return Err(CodegenError::NoVectorArgument(name).into());
        }
        let missing =
            |what: &str| ArrayError::InvalidArgument(format!("reduction `{name}` has no {what}"));
        let output = self.output.ok_or_else(|| missing("output type"))?;
        if self.neutral.trim().is_empty() {
            return Err(missing("neutral element"));
        }
        if self.reduce_expr.trim().is_empty() {
            return Err(missing("reduce expression"));
        }
        let map_expr = if self.map_expr.trim().is_empty() {
            match vectors.as_slice() {
                [only] => format!("{}[i]", only.name()),
                _ => return Err(missing("map expression (needed with several arrays)")),
            }
        } else {
            self.map_expr
        };
        for ty in [Some(&output), self.accumulator.as_ref()]
            .into_iter()
            .flatten()
        {
            if let ReductionType::Struct {
                c_name,
                size,
                align,
            } = ty
            {
                if !crate::codegen::is_identifier(c_name) || *size == 0 || *align == 0 {
                    return Err(ArrayError::InvalidArgument(format!(
                        "reduction `{name}`: bad struct type `{c_name}` ({size} bytes, alignment {align})"
                    )));
                }
                if !align.is_power_of_two() || *align > 16 || size % align != 0 {
                    return Err(ArrayError::InvalidArgument(format!(
                        "reduction `{name}`: struct `{c_name}` needs a power-of-two alignment of at most 16 dividing its size ({size} bytes, alignment {align})"
                    )));
                }
            }
        }
        let accumulator = self.accumulator.unwrap_or_else(|| output.clone());
        Ok(ReductionSpec {
            name,
            output,
            accumulator,
            neutral: self.neutral,
            reduce_expr: self.reduce_expr,
            map_expr,
            args: self.args,
            preamble: self.preamble,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_checks_what_is_missing() {
        let b = || {
            ReductionSpec::builder("r")
                .output::<f32>()
                .neutral("0")
                .reduce("a+b")
                .input::<f32>("x")
        };
        assert_eq!(b().build().unwrap().map_expr(), "x[i]");
        assert!(b().neutral("").build().is_err());
        assert!(b().reduce(" ").build().is_err());
        assert!(
            b().input::<f32>("y").build().is_err(),
            "two arrays need a map"
        );
        assert!(b().input::<f32>("y").map("x[i]*y[i]").build().is_ok());
        assert!(ReductionSpec::builder("r")
            .neutral("0")
            .reduce("a+b")
            .input::<f32>("x")
            .build()
            .is_err());
        assert!(b().arg(ArgSpec::scalar("i", DType::F32)).build().is_err());
        assert!(ReductionSpec::builder("rucuda_x")
            .output::<f32>()
            .neutral("0")
            .reduce("a+b")
            .input::<f32>("x")
            .build()
            .is_err());
        let no_array = ReductionSpec::builder("r")
            .output::<f32>()
            .neutral("0")
            .reduce("a+b")
            .scalar::<f32>("x")
            .build();
        assert!(matches!(
            no_array,
            Err(ArrayError::Codegen(CodegenError::NoVectorArgument(_)))
        ));
    }

    #[test]
    fn struct_types_are_checked() {
        let b = |ty| {
            ReductionSpec::builder("r")
                .output_type(ty)
                .neutral("s()")
                .reduce("f(a, b)")
                .map("s(x[i])")
                .input::<f32>("x")
                .build()
        };
        assert!(b(ReductionType::structure("s", 8, 4)).is_ok());
        assert!(b(ReductionType::structure("s", 8, 3)).is_err());
        assert!(b(ReductionType::structure("s", 12, 8)).is_err());
        assert!(b(ReductionType::structure("not a name", 8, 4)).is_err());
        assert!(b(ReductionType::structure("s", 64, 32)).is_err());
    }

    #[test]
    fn pycuda_string_form() {
        let s = ReductionSpec::parse(
            DType::F64,
            "0",
            "a+b",
            "x[i]*y[i]",
            "const double *x, double *y",
            "dot",
        )
        .unwrap();
        assert_eq!(s.output(), &ReductionType::DType(DType::F64));
        assert_eq!(s.accumulator(), s.output());
        assert!(
            ReductionSpec::parse(DType::F64, "0", "a+b", "x[i]", "double *x, flot *y", "k")
                .is_err()
        );
    }
}
