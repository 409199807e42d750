//! Operands of the operations: an array (any element type, any layout) or a Rust scalar,
//! with its static result type through [`BinaryOperand`].

use rucuda_driver::Stream;

use super::engine::Arg;
use super::promote::{Promote, PromoteWeak};
use crate::dtype::{DType, Element};
use crate::elementwise::ScalarValue;
use crate::error::{ArrayError, Result};
use crate::layout::Layout;
use crate::memory::ArrayMemory;
use crate::GpuArray;

/// A borrowed, type-erased array operand.
#[derive(Debug, Clone, Copy)]
pub struct ArrayRef<'a> {
    /// Its memory (the whole buffer and element 0's offset).
    pub(crate) mem: ArrayMemory<'a>,
    pub(crate) dtype: DType,
    pub(crate) layout: &'a Layout,
    pub(crate) stream: &'a Stream,
}

impl ArrayRef<'_> {
    /// True when the two arrays' buffers overlap.
    pub(crate) fn overlaps(&self, other: &ArrayRef<'_>) -> bool {
        self.mem.overlaps(&other.mem)
    }

    /// True when both see the same elements in the same order as the same type.
    pub(crate) fn same_elements(&self, other: &ArrayRef<'_>) -> bool {
        self.mem.same_start(&other.mem) && self.dtype == other.dtype && self.layout == other.layout
    }

    pub(crate) fn as_in(&self) -> Arg<'_> {
        Arg::In {
            mem: self.mem,
            layout: self.layout,
        }
    }

    pub(crate) fn as_out(&self) -> Arg<'_> {
        Arg::Out {
            mem: self.mem,
            layout: self.layout,
        }
    }
}

/// An operand: an array or a scalar.
#[derive(Debug, Clone)]
pub enum Operand<'a> {
    /// An array.
    Array(ArrayRef<'a>),
    /// A Rust scalar (a weak scalar, NEP 50).
    Scalar(ScalarValue),
}

impl<'a> Operand<'a> {
    pub(crate) fn dtype(&self) -> DType {
        match self {
            Operand::Array(a) => a.dtype,
            Operand::Scalar(s) => s.dtype(),
        }
    }

    pub(crate) fn is_scalar(&self) -> bool {
        matches!(self, Operand::Scalar(_))
    }

    pub(crate) fn array(&self) -> Option<&ArrayRef<'a>> {
        match self {
            Operand::Array(a) => Some(a),
            Operand::Scalar(_) => None,
        }
    }

    pub(crate) fn as_in(&self) -> Arg<'_> {
        match self {
            Operand::Array(a) => a.as_in(),
            Operand::Scalar(s) => Arg::Scalar(s.clone()),
        }
    }
}

impl<T: Element> GpuArray<T> {
    /// This array as a type-erased operand.
    pub(crate) fn as_ref(&self) -> ArrayRef<'_> {
        ArrayRef {
            mem: self.memory(),
            dtype: T::DTYPE,
            layout: self.layout(),
            stream: self.stream(),
        }
    }
}

pub(crate) mod sealed {
    /// Gives the type-erased operand (sealed: only arrays and element scalars).
    pub trait AsOperand {
        /// The operand.
        fn as_operand(&self) -> super::Operand<'_>;
    }
}

/// Something an array can be combined with: another array (`&GpuArray<U>`, any element
/// type) or a Rust scalar of an element type. `Output` is the element type of the result
/// under NumPy's promotion (arrays: [`Promote`]; scalars: [`PromoteWeak`]).
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// use rucuda_array::GpuArray;
/// let a = GpuArray::from_slice(&stream, &[1i8, -2, 3])?;
/// let b = GpuArray::from_slice(&stream, &[200u8, 100, 0])?;
/// let m: GpuArray<i16> = a.maximum(&b)?; // int8 with uint8 gives int16
/// assert_eq!(m.to_vec()?, vec![200, 100, 3]);
/// let s: GpuArray<i8> = a.maximum(0i64)?; // a scalar keeps the array's type
/// assert_eq!(s.to_vec()?, vec![1, 0, 3]);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub trait BinaryOperand<T: Element>: sealed::AsOperand {
    /// The promoted element type of `T` with this operand.
    type Output: Element + crate::ops::promote::TrueDivide + crate::ops::promote::RealPart;
}

impl<U: Element> sealed::AsOperand for &GpuArray<U> {
    fn as_operand(&self) -> Operand<'_> {
        Operand::Array((*self).as_ref())
    }
}

impl<S: Element> sealed::AsOperand for S {
    fn as_operand(&self) -> Operand<'_> {
        Operand::Scalar(ScalarValue::new(*self))
    }
}

impl<T: Element + Promote<U>, U: Element> BinaryOperand<T> for &GpuArray<U> {
    type Output = <T as Promote<U>>::Output;
}

impl<T: Element + PromoteWeak<S>, S: Element> BinaryOperand<T> for S {
    type Output = <T as PromoteWeak<S>>::Output;
}

/// Checks that every array operand lives in `stream`'s context.
pub(crate) fn check_context(stream: &Stream, ops: &[&Operand<'_>]) -> Result<()> {
    for o in ops {
        if let Operand::Array(a) = o {
            if a.stream.context() != stream.context() {
                return Err(ArrayError::ContextMismatch);
            }
        }
    }
    Ok(())
}
