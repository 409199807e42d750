//! The operations of the built-in kernels, cumath and the fusion API, as NumPy names
//! them: [`BinaryOp`], [`UnaryOp`] and cumath's [`MathFn`].

/// Binary operations of the built-in kernels and the fusion API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b` (logical or on `bool`).
    Add,
    /// `a - b` (refused on `bool`, as in NumPy).
    Sub,
    /// `a * b` (logical and on `bool`).
    Mul,
    /// True division: integers and `bool` give `f64` (NumPy's `/`).
    Div,
    /// NumPy's `//`: floor division.
    FloorDiv,
    /// NumPy's `%`: the remainder with the sign of the divisor.
    Remainder,
    /// `a ** b`.
    Pow,
    /// Elementwise maximum, NaN propagating.
    Maximum,
    /// Elementwise minimum, NaN propagating.
    Minimum,
    /// `a == b`, to `bool`.
    Equal,
    /// `a != b`, to `bool`.
    NotEqual,
    /// `a < b`, to `bool`.
    Less,
    /// `a <= b`, to `bool`.
    LessEqual,
    /// `a > b`, to `bool`.
    Greater,
    /// `a >= b`, to `bool`.
    GreaterEqual,
    /// Both nonzero, to `bool`.
    LogicalAnd,
    /// Either nonzero, to `bool`.
    LogicalOr,
    /// Exactly one nonzero, to `bool`.
    LogicalXor,
    /// Bitwise and (integers and `bool`).
    BitAnd,
    /// Bitwise or (integers and `bool`).
    BitOr,
    /// Bitwise exclusive or (integers and `bool`).
    BitXor,
    /// C's `fmod` (remainder with the sign of the dividend; real floats).
    Fmod,
}

impl BinaryOp {
    /// The operation's name, as NumPy spells the ufunc.
    pub fn name(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "add",
            Sub => "subtract",
            Mul => "multiply",
            Div => "true_divide",
            FloorDiv => "floor_divide",
            Remainder => "remainder",
            Pow => "power",
            Maximum => "maximum",
            Minimum => "minimum",
            Equal => "equal",
            NotEqual => "not_equal",
            Less => "less",
            LessEqual => "less_equal",
            Greater => "greater",
            GreaterEqual => "greater_equal",
            LogicalAnd => "logical_and",
            LogicalOr => "logical_or",
            LogicalXor => "logical_xor",
            BitAnd => "bitwise_and",
            BitOr => "bitwise_or",
            BitXor => "bitwise_xor",
            Fmod => "fmod",
        }
    }

    pub(crate) fn is_comparison(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual
        )
    }
}

/// One-operand operations: arithmetic ones and the cumath functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-a` (wraps for integers; refused on `bool`).
    Neg,
    /// `|a|` (complex gives its real type).
    Abs,
    /// `a == 0`, to `bool`.
    LogicalNot,
    /// Bitwise not (`!` on `bool`).
    BitNot,
    /// Complex conjugate (identity on real types).
    Conj,
    /// The real part (identity on real types).
    Real,
    /// The imaginary part (zero on real types).
    Imag,
    /// A cumath function.
    Math(MathFn),
}

/// The one-argument functions of cumath.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MathFn {
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Tangent.
    Tan,
    /// Arc sine.
    Asin,
    /// Arc cosine.
    Acos,
    /// Arc tangent.
    Atan,
    /// Hyperbolic sine.
    Sinh,
    /// Hyperbolic cosine.
    Cosh,
    /// Hyperbolic tangent.
    Tanh,
    /// `e^x`.
    Exp,
    /// Natural logarithm.
    Log,
    /// Base-10 logarithm.
    Log10,
    /// Square root.
    Sqrt,
    /// Absolute value of a real float.
    Fabs,
    /// Round up.
    Ceil,
    /// Round down.
    Floor,
}

impl MathFn {
    /// Every function, in declaration order.
    pub const ALL: [MathFn; 16] = [
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Asin,
        MathFn::Acos,
        MathFn::Atan,
        MathFn::Sinh,
        MathFn::Cosh,
        MathFn::Tanh,
        MathFn::Exp,
        MathFn::Log,
        MathFn::Log10,
        MathFn::Sqrt,
        MathFn::Fabs,
        MathFn::Ceil,
        MathFn::Floor,
    ];

    /// The C name of the double-precision function (`sin`, `log10`, ...).
    pub fn c_name(self) -> &'static str {
        use MathFn::*;
        match self {
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Exp => "exp",
            Log => "log",
            Log10 => "log10",
            Sqrt => "sqrt",
            Fabs => "fabs",
            Ceil => "ceil",
            Floor => "floor",
        }
    }

    /// True when the function is defined here for complex arguments too.
    pub fn supports_complex(self) -> bool {
        use MathFn::*;
        matches!(
            self,
            Sin | Cos | Tan | Sinh | Cosh | Tanh | Exp | Log | Log10 | Sqrt
        )
    }
}
