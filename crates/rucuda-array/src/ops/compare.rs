//! Comparisons to `bool` arrays (NumPy's `equal`, `less`, ...) and the logical
//! operations (`logical_and`, `logical_or`, `logical_xor`, `logical_not`).
//!
//! Mixed types compare in their promoted type; NaN compares unequal to everything
//! (`not_equal` is true); complex numbers order lexicographically, as in NumPy.

use super::apply::{binary_new, unary_new};
use super::operand::{BinaryOperand, Operand};
use super::operations::{BinaryOp, UnaryOp};
use crate::dtype::Element;
use crate::error::Result;
use crate::GpuArray;

macro_rules! comparisons {
    ($($(#[$doc:meta])* $name:ident => $op:ident),* $(,)?) => {$(
        $(#[$doc])*
        pub fn $name<O: BinaryOperand<T>>(&self, other: O) -> Result<GpuArray<bool>> {
            binary_new(BinaryOp::$op, Operand::Array(self.as_ref()), other.as_operand())
        }
    )*};
}

impl<T: Element> GpuArray<T> {
    comparisons! {
        /// `self == other` elementwise, broadcasting.
        ///
        /// ```no_run
        /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
        /// let a = rucuda_array::GpuArray::from_slice(&stream, &[1.0f32, f32::NAN, 3.0])?;
        /// assert_eq!(a.equal(3)?.to_vec()?, vec![false, false, true]);
        /// assert_eq!(a.not_equal(&a)?.to_vec()?, vec![false, true, false]);
        /// # Ok::<(), rucuda_array::ArrayError>(())
        /// ```
        equal => Equal,
        /// `self != other` elementwise (true where either is NaN).
        not_equal => NotEqual,
        /// `self < other` elementwise.
        less => Less,
        /// `self <= other` elementwise.
        less_equal => LessEqual,
        /// `self > other` elementwise.
        greater => Greater,
        /// `self >= other` elementwise.
        greater_equal => GreaterEqual,
        /// Both nonzero (any types; NaN counts as nonzero).
        ///
        /// ```no_run
        /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
        /// let a = rucuda_array::GpuArray::from_slice(&stream, &[0i32, 2, 3])?;
        /// assert_eq!(a.logical_and(0.5)?.to_vec()?, vec![false, true, true]);
        /// assert_eq!(a.logical_not()?.to_vec()?, vec![true, false, false]);
        /// # Ok::<(), rucuda_array::ArrayError>(())
        /// ```
        logical_and => LogicalAnd,
        /// Either nonzero.
        logical_or => LogicalOr,
        /// Exactly one nonzero.
        logical_xor => LogicalXor,
    }

    /// `self == 0` elementwise, to `bool`.
    pub fn logical_not(&self) -> Result<GpuArray<bool>> {
        unary_new(UnaryOp::LogicalNot, self)
    }
}
