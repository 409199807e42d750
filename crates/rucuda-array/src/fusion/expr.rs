//! [`Expr`]: a lazy expression over arrays and scalars, built with operators and
//! methods (infallibly; type errors are reported by `eval`).

use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Rem, Sub};

use half::{bf16, f16};
use num_complex::Complex;

use super::source::NodeKind;
use crate::dtype::{DType, Element};
use crate::elementwise::ScalarValue;
use crate::ops::operand::ArrayRef;
use crate::ops::operations::BinaryOp;
use crate::ops::operations::MathFn;
use crate::ops::operations::UnaryOp;
use crate::GpuArray;

/// A node with its result type; `weak` when only scalars are below it (NEP 50).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Node {
    pub(crate) kind: NodeKind,
    pub(crate) dtype: DType,
    pub(crate) weak: bool,
}

/// A leaf: an array (borrowed) or a scalar value.
#[derive(Debug, Clone)]
pub(crate) enum Leaf<'a> {
    Array(ArrayRef<'a>),
    Scalar(ScalarValue),
    /// An array of this type to be named later: only for [`Expr::spec`].
    Symbol(DType),
}

/// A lazy elementwise expression over arrays and scalars: building it runs nothing;
/// [`Expr::eval`] compiles the whole expression into one kernel (memoized by the
/// expression's structure and types, not by its scalars' values, which are kernel
/// arguments) and runs it in one pass over memory.
///
/// Operators (`+ - * / % & | ^`, unary `-` and `!`) combine an `Expr` (or `&Expr`)
/// with another `Expr`, a `&GpuArray` of any element type, or a scalar of any element
/// type, on either side. Types follow NumPy's promotion, scalars are weak (NEP 50), and
/// every node computes exactly as the single operation does, so a fused result is
/// bit-identical to the unfused one.
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// use rucuda_array::{fusion::Expr, GpuArray};
/// let x = GpuArray::from_slice(&stream, &[1.0f32, 2.0])?;
/// let y = GpuArray::from_slice(&stream, &[10.0f32, 20.0])?;
/// let z: GpuArray<f32> = (Expr::from(&x) * 2.0 + &y).eval()?;
/// assert_eq!(z.to_vec()?, vec![12.0, 24.0]);
/// let r: GpuArray<f32> = Expr::from(&x).sin().maximum(0.5).eval()?;
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Expr<'a> {
    pub(crate) nodes: Vec<Node>,
    pub(crate) leaves: Vec<Leaf<'a>>,
    /// The first type error met while building (reported by `eval`).
    pub(crate) error: Option<(&'static str, DType)>,
}

impl<'a, T: Element> From<&'a GpuArray<T>> for Expr<'a> {
    fn from(a: &'a GpuArray<T>) -> Self {
        Expr {
            nodes: vec![Node {
                kind: NodeKind::Leaf(0),
                dtype: T::DTYPE,
                weak: false,
            }],
            leaves: vec![Leaf::Array(a.as_ref())],
            error: None,
        }
    }
}

impl<S: Element> From<S> for Expr<'_> {
    fn from(v: S) -> Self {
        Expr::scalar(ScalarValue::new(v))
    }
}

impl<'a> From<&Expr<'a>> for Expr<'a> {
    fn from(e: &Expr<'a>) -> Self {
        e.clone()
    }
}

impl<'a> Expr<'a> {
    /// A scalar leaf (a kernel argument; its value is not part of the kernel's identity).
    pub fn scalar(v: ScalarValue) -> Self {
        Expr {
            nodes: vec![Node {
                kind: NodeKind::Leaf(0),
                dtype: v.dtype(),
                weak: true,
            }],
            leaves: vec![Leaf::Scalar(v)],
            error: None,
        }
    }

    /// A placeholder for an array of type `dtype`, for inspecting the generated kernel
    /// with [`Expr::spec`] without a device; evaluating it is refused.
    ///
    /// ```
    /// use rucuda_array::{fusion::Expr, DType};
    /// let e = Expr::symbol(DType::F32) * 2.0 + Expr::symbol(DType::F32);
    /// let spec = e.spec(DType::F32).unwrap();
    /// assert_eq!(spec.args().len(), 4); // two arrays, the scalar, the output
    /// ```
    pub fn symbol(dtype: DType) -> Expr<'static> {
        Expr {
            nodes: vec![Node {
                kind: NodeKind::Leaf(0),
                dtype,
                weak: false,
            }],
            leaves: vec![Leaf::Symbol(dtype)],
            error: None,
        }
    }

    /// The element type the expression produces (NumPy's promotion; `F64` as a
    /// placeholder where building met a type error, which `eval` reports).
    pub fn dtype(&self) -> DType {
        self.root().dtype
    }

    pub(crate) fn root(&self) -> Node {
        self.nodes.last().copied().unwrap_or(Node {
            kind: NodeKind::Leaf(0),
            dtype: DType::F64,
            weak: true,
        })
    }

    fn root_index(&self) -> u32 {
        self.nodes.len().saturating_sub(1) as u32
    }

    /// Appends `other`'s nodes and leaves after this expression's; returns `other`'s
    /// root index in the result.
    fn absorb(&mut self, other: Expr<'a>) -> u32 {
        let (node_base, leaf_base) = (self.nodes.len() as u32, self.leaves.len() as u32);
        for n in other.nodes {
            let kind = match n.kind {
                NodeKind::Leaf(k) => NodeKind::Leaf(k + leaf_base),
                NodeKind::Binary(op, a, b) => NodeKind::Binary(op, a + node_base, b + node_base),
                NodeKind::Unary(op, a) => NodeKind::Unary(op, a + node_base),
                NodeKind::Where {
                    cond,
                    a,
                    b,
                    positive,
                } => NodeKind::Where {
                    cond: cond + node_base,
                    a: a + node_base,
                    b: b + node_base,
                    positive,
                },
                NodeKind::Cast(a) => NodeKind::Cast(a + node_base),
            };
            self.nodes.push(Node { kind, ..n });
        }
        self.leaves.extend(other.leaves);
        if self.error.is_none() {
            self.error = other.error;
        }
        self.nodes.len() as u32 - 1
    }

    fn push(&mut self, kind: NodeKind, typed: Result<(DType, bool), (&'static str, DType)>) {
        let (dtype, weak) = match typed {
            Ok(t) => t,
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(e);
                }
                (DType::F64, false)
            }
        };
        self.nodes.push(Node { kind, dtype, weak });
    }

    /// `op(self, other)` as a new expression (`self` is left as it is: methods borrow,
    /// so `x.sin() + x.cos()` works with `x` an `&Expr` from [`fuse!`](crate::fuse)).
    pub fn binary(&self, op: BinaryOp, other: impl Into<Expr<'a>>) -> Expr<'a> {
        self.clone().apply_binary(op, other)
    }

    pub(crate) fn apply_binary(mut self, op: BinaryOp, other: impl Into<Expr<'a>>) -> Expr<'a> {
        let l = self.root_index();
        let ln = self.root();
        let r = self.absorb(other.into());
        let rn = self.nodes[r as usize];
        let typed = crate::ops::typing::binary_types(op, ln.dtype, rn.dtype, ln.weak, rn.weak)
            .map(|(_, out)| (out, ln.weak && rn.weak))
            .map_err(|_| (op.name(), ln.dtype.promote(rn.dtype)));
        self.push(NodeKind::Binary(op, l, r), typed);
        self
    }

    /// `op(self)` as a new expression.
    pub fn unary(&self, op: UnaryOp) -> Expr<'a> {
        self.clone().apply_unary(op)
    }

    pub(crate) fn apply_unary(mut self, op: UnaryOp) -> Expr<'a> {
        let a = self.root_index();
        let an = self.root();
        let typed = crate::ops::typing::unary_types(op, an.dtype)
            .map(|(_, out)| (out, an.weak))
            .map_err(|_| ("unary operation", an.dtype));
        self.push(NodeKind::Unary(op, a), typed);
        self
    }

    /// The expression converted to `dtype` (NumPy's `astype`, C cast rules).
    pub fn cast_to(&self, dtype: DType) -> Expr<'a> {
        let mut e = self.clone();
        let a = e.root_index();
        e.push(NodeKind::Cast(a), Ok((dtype, false)));
        e
    }

    /// The expression converted to `T`.
    pub fn cast<T: Element>(&self) -> Expr<'a> {
        self.cast_to(T::DTYPE)
    }

    fn select(
        cond: impl Into<Expr<'a>>,
        a: impl Into<Expr<'a>>,
        b: impl Into<Expr<'a>>,
        positive: bool,
    ) -> Expr<'a> {
        let mut e: Expr<'a> = cond.into();
        let c = e.root_index();
        let cn = e.root();
        let ai = e.absorb(a.into());
        let bi = e.absorb(b.into());
        let (an, bn) = (e.nodes[ai as usize], e.nodes[bi as usize]);
        let mut typed =
            crate::ops::typing::binary_types(BinaryOp::Add, an.dtype, bn.dtype, an.weak, bn.weak)
                .map(|(_, out)| (out, an.weak && bn.weak))
                .map_err(|_| ("where", an.dtype));
        if positive && cn.dtype.is_complex() {
            typed = Err(("if_positive", cn.dtype));
        }
        e.push(
            NodeKind::Where {
                cond: c,
                a: ai,
                b: bi,
                positive,
            },
            typed,
        );
        e
    }

    /// NumPy's `where(cond, a, b)` inside an expression.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{fusion::Expr, GpuArray};
    /// let x = GpuArray::from_slice(&stream, &[-1.0f64, 4.0])?;
    /// let e = Expr::from(&x);
    /// let relu_sqrt: GpuArray<f64> = Expr::where_(e.clone().greater(0), e.sqrt(), 0.0).eval()?;
    /// assert_eq!(relu_sqrt.to_vec()?, vec![0.0, 2.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn where_(
        cond: impl Into<Expr<'a>>,
        a: impl Into<Expr<'a>>,
        b: impl Into<Expr<'a>>,
    ) -> Expr<'a> {
        Expr::select(cond, a, b, false)
    }

    /// PyCUDA's `if_positive(criterion, a, b)` inside an expression.
    pub fn if_positive(
        criterion: impl Into<Expr<'a>>,
        a: impl Into<Expr<'a>>,
        b: impl Into<Expr<'a>>,
    ) -> Expr<'a> {
        Expr::select(criterion, a, b, true)
    }
}

macro_rules! binary_methods {
    ($($(#[$doc:meta])* $name:ident => $op:ident),* $(,)?) => {
        impl<'a> Expr<'a> {$(
            $(#[$doc])*
            pub fn $name(&self, other: impl Into<Expr<'a>>) -> Expr<'a> {
                self.binary(BinaryOp::$op, other)
            }
        )*}
    };
}

binary_methods! {
    /// `self ** other`.
    pow => Pow,
    /// NumPy's `maximum` (NaN propagates).
    maximum => Maximum,
    /// NumPy's `minimum` (NaN propagates).
    minimum => Minimum,
    /// NumPy's `//`.
    floor_div => FloorDiv,
    /// NumPy's `%` (`remainder`).
    remainder => Remainder,
    /// C's `fmod`.
    fmod => Fmod,
    /// `self == other`, to `bool`.
    equal => Equal,
    /// `self != other`, to `bool`.
    not_equal => NotEqual,
    /// `self < other`, to `bool`.
    less => Less,
    /// `self <= other`, to `bool`.
    less_equal => LessEqual,
    /// `self > other`, to `bool`.
    greater => Greater,
    /// `self >= other`, to `bool`.
    greater_equal => GreaterEqual,
    /// Both nonzero, to `bool`.
    logical_and => LogicalAnd,
    /// Either nonzero, to `bool`.
    logical_or => LogicalOr,
    /// Exactly one nonzero, to `bool`.
    logical_xor => LogicalXor,
}

macro_rules! unary_methods {
    ($($(#[$doc:meta])* $name:ident => $op:expr),* $(,)?) => {
        impl<'a> Expr<'a> {$(
            $(#[$doc])*
            pub fn $name(&self) -> Expr<'a> {
                self.unary($op)
            }
        )*}
    };
}

unary_methods! {
    /// `|self|` (complex gives its real type).
    abs => UnaryOp::Abs,
    /// `self == 0`, to `bool`.
    logical_not => UnaryOp::LogicalNot,
    /// Complex conjugate.
    conj => UnaryOp::Conj,
    /// Real part.
    real => UnaryOp::Real,
    /// Imaginary part.
    imag => UnaryOp::Imag,
    /// Sine.
    sin => UnaryOp::Math(MathFn::Sin),
    /// Cosine.
    cos => UnaryOp::Math(MathFn::Cos),
    /// Tangent.
    tan => UnaryOp::Math(MathFn::Tan),
    /// Arc sine.
    asin => UnaryOp::Math(MathFn::Asin),
    /// Arc cosine.
    acos => UnaryOp::Math(MathFn::Acos),
    /// Arc tangent.
    atan => UnaryOp::Math(MathFn::Atan),
    /// Hyperbolic sine.
    sinh => UnaryOp::Math(MathFn::Sinh),
    /// Hyperbolic cosine.
    cosh => UnaryOp::Math(MathFn::Cosh),
    /// Hyperbolic tangent.
    tanh => UnaryOp::Math(MathFn::Tanh),
    /// `e^self`.
    exp => UnaryOp::Math(MathFn::Exp),
    /// Natural logarithm.
    log => UnaryOp::Math(MathFn::Log),
    /// Base-10 logarithm.
    log10 => UnaryOp::Math(MathFn::Log10),
    /// Square root.
    sqrt => UnaryOp::Math(MathFn::Sqrt),
    /// Absolute value of a real float.
    fabs => UnaryOp::Math(MathFn::Fabs),
    /// Round up.
    ceil => UnaryOp::Math(MathFn::Ceil),
    /// Round down.
    floor => UnaryOp::Math(MathFn::Floor),
}

macro_rules! expr_ops {
    ($Trait:ident, $method:ident, $op:ident) => {
        impl<'a, R: Into<Expr<'a>>> $Trait<R> for Expr<'a> {
            type Output = Expr<'a>;
            fn $method(self, rhs: R) -> Expr<'a> {
                self.apply_binary(BinaryOp::$op, rhs)
            }
        }
        impl<'a, R: Into<Expr<'a>>> $Trait<R> for &Expr<'a> {
            type Output = Expr<'a>;
            fn $method(self, rhs: R) -> Expr<'a> {
                self.binary(BinaryOp::$op, rhs)
            }
        }
        impl<'a, T: Element> $Trait<Expr<'a>> for &'a GpuArray<T> {
            type Output = Expr<'a>;
            fn $method(self, rhs: Expr<'a>) -> Expr<'a> {
                Expr::from(self).apply_binary(BinaryOp::$op, rhs)
            }
        }
        impl<'a, T: Element> $Trait<&Expr<'a>> for &'a GpuArray<T> {
            type Output = Expr<'a>;
            fn $method(self, rhs: &Expr<'a>) -> Expr<'a> {
                Expr::from(self).apply_binary(BinaryOp::$op, rhs.clone())
            }
        }
        expr_ops!(@scalars $Trait, $method, $op;
            bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64,
            Complex<f32>, Complex<f64>);
    };
    (@scalars $Trait:ident, $method:ident, $op:ident; $($s:ty),*) => {$(
        impl<'a> $Trait<Expr<'a>> for $s {
            type Output = Expr<'a>;
            fn $method(self, rhs: Expr<'a>) -> Expr<'a> {
                Expr::from(self).apply_binary(BinaryOp::$op, rhs)
            }
        }
        impl<'a> $Trait<&Expr<'a>> for $s {
            type Output = Expr<'a>;
            fn $method(self, rhs: &Expr<'a>) -> Expr<'a> {
                Expr::from(self).apply_binary(BinaryOp::$op, rhs.clone())
            }
        }
    )*};
}

expr_ops!(Add, add, Add);
expr_ops!(Sub, sub, Sub);
expr_ops!(Mul, mul, Mul);
expr_ops!(Div, div, Div);
expr_ops!(Rem, rem, Remainder);
expr_ops!(BitAnd, bitand, BitAnd);
expr_ops!(BitOr, bitor, BitOr);
expr_ops!(BitXor, bitxor, BitXor);

impl<'a> Neg for Expr<'a> {
    type Output = Expr<'a>;
    fn neg(self) -> Expr<'a> {
        self.apply_unary(UnaryOp::Neg)
    }
}

impl<'a> Neg for &Expr<'a> {
    type Output = Expr<'a>;
    fn neg(self) -> Expr<'a> {
        self.unary(UnaryOp::Neg)
    }
}

/// Logical not for `bool`, bitwise not for integers.
impl<'a> Not for Expr<'a> {
    type Output = Expr<'a>;
    fn not(self) -> Expr<'a> {
        self.apply_unary(UnaryOp::BitNot)
    }
}

impl<'a> Not for &Expr<'a> {
    type Output = Expr<'a>;
    fn not(self) -> Expr<'a> {
        self.unary(UnaryOp::BitNot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar_expr() -> Expr<'static> {
        Expr::from(2.0f32)
    }

    #[test]
    fn types_follow_promotion_and_weak_scalars() {
        let e = scalar_expr() * 3i32;
        // Two scalars: ordinary promotion, still weak.
        assert_eq!(e.dtype(), DType::F32.promote(DType::I32));
        assert!(e.root().weak);
        let e = Expr::from(1u8) + 2u8;
        assert_eq!(e.dtype(), DType::U8);
        let c = (Expr::from(1.0f64) * 2.0).greater(0.5);
        assert_eq!(c.dtype(), DType::Bool);
        let d = Expr::from(3i16) / 2i16;
        assert_eq!(d.dtype(), DType::F64);
        let m = Expr::from(Complex::new(1.0f32, 1.0)).abs();
        assert_eq!(m.dtype(), DType::F32);
        assert!(m.error.is_none());
        let bad = Expr::from(true) - true;
        assert_eq!(bad.error, Some(("subtract", DType::Bool)));
        let w = Expr::where_(Expr::from(true), 1u8, 2.5f32);
        assert_eq!(w.dtype(), DType::F32);
        assert_eq!((-Expr::from(1i8)).dtype(), DType::I8);
        assert_eq!(Expr::from(1i8).cast::<f16>().dtype(), DType::F16);
    }

    #[test]
    fn absorbing_renumbers_children() {
        let e = (scalar_expr() + 1.0f32) * (Expr::from(3.0f32) - 2.0f32);
        assert_eq!(e.leaves.len(), 4);
        assert_eq!(e.nodes.len(), 7);
        match e.root().kind {
            NodeKind::Binary(BinaryOp::Mul, l, r) => {
                assert_eq!(l, 2);
                assert_eq!(r, 5);
                assert_eq!(e.nodes[3].kind, NodeKind::Leaf(2));
            }
            other => panic!("{other:?}"),
        }
    }
}
