//! Memory order on arrays (NumPy's `order=`): creation in C or F order, the `*_like`
//! forms following another array (with another element type too), copies and casts that
//! keep or change the order, and reshapes and ravels that read in F order.

use rucuda_driver::Stream;

use super::GpuArray;
use crate::convert::cast_into;
use crate::dtype::Element;
use crate::error::Result;
use crate::layout::{Layout, LayoutError, Order};

impl<T: Element> GpuArray<T> {
    /// An uninitialised array of `shape` in `order` ([`Order::F`]: column-major; `A` and
    /// `K`, which follow an array, are `C` here), as NumPy's `empty(shape, order=...)`.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, Order};
    /// let a = GpuArray::<f64>::empty_order(&stream, &[3, 4], Order::F)?;
    /// assert_eq!(a.strides(), &[1, 3]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn empty_order(stream: &Stream, shape: &[usize], order: Order) -> Result<Self> {
        Self::with_dense_layout(stream, Layout::contiguous(shape, order)?)
    }

    /// Zeros of `shape` in `order`.
    pub fn zeros_order(stream: &Stream, shape: &[usize], order: Order) -> Result<Self> {
        Self::zeros_with_layout(stream, Layout::contiguous(shape, order)?)
    }

    /// Ones of `shape` in `order`.
    pub fn ones_order(stream: &Stream, shape: &[usize], order: Order) -> Result<Self> {
        Self::full_order(stream, shape, T::from_f64(1.0), order)
    }

    /// `value` everywhere, in `shape` and `order`.
    pub fn full_order(stream: &Stream, shape: &[usize], value: T, order: Order) -> Result<Self> {
        Self::full_with_layout(stream, Layout::contiguous(shape, order)?, value)
    }

    /// An uninitialised array of `other`'s shape (of any element type) on its stream, in
    /// `order` following `other` (`K`: its memory order; `A`: F when it is F-contiguous),
    /// as NumPy's `empty_like(other, dtype=T, order=...)`.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, Order};
    /// let f = GpuArray::<f32>::zeros_order(&stream, &[2, 5], Order::F)?;
    /// let i = GpuArray::<i64>::empty_like_order(&f, Order::K)?;
    /// assert!(i.is_f_contiguous() && !i.is_c_contiguous());
    /// assert!(GpuArray::<u8>::empty_like_order(&f, Order::C)?.is_c_contiguous());
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn empty_like_order<U: Element>(other: &GpuArray<U>, order: Order) -> Result<Self> {
        Self::with_dense_layout(other.stream(), other.layout().dense_like(order)?)
    }

    /// Zeros like `other` in `order` (see [`GpuArray::empty_like_order`]).
    pub fn zeros_like_order<U: Element>(other: &GpuArray<U>, order: Order) -> Result<Self> {
        Self::zeros_with_layout(other.stream(), other.layout().dense_like(order)?)
    }

    /// Ones like `other` in `order` (see [`GpuArray::empty_like_order`]).
    pub fn ones_like_order<U: Element>(other: &GpuArray<U>, order: Order) -> Result<Self> {
        Self::full_like_order(other, T::from_f64(1.0), order)
    }

    /// `value` everywhere, like `other` in `order` (see [`GpuArray::empty_like_order`]).
    pub fn full_like_order<U: Element>(
        other: &GpuArray<U>,
        value: T,
        order: Order,
    ) -> Result<Self> {
        Self::full_with_layout(other.stream(), other.layout().dense_like(order)?, value)
    }

    /// A new array with the same elements laid out in `order` (`C`, `F`, `A` as this
    /// array, or `K`: its memory order), as NumPy's `a.copy(order=...)`.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, Order};
    /// let a = GpuArray::<i32>::arange(&stream, 0.0, 6.0, 1.0)?.reshape(&[2, 3])?;
    /// let f = a.copy_order(Order::F)?;
    /// assert_eq!(f.strides(), &[1, 2]);
    /// assert_eq!(f.to_vec()?, a.to_vec()?); // the same elements, in row-major order
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn copy_order(&self, order: Order) -> Result<Self> {
        let out = Self::empty_like_order(self, order)?;
        cast_into(self, &out)?;
        Ok(out)
    }

    /// [`GpuArray::astype`] into a new array laid out in `order` (NumPy's
    /// `astype(dtype, order=...)`; `astype` itself keeps the memory order, `K`).
    pub fn astype_order<U: Element>(&self, order: Order) -> Result<GpuArray<U>> {
        let out = GpuArray::<U>::empty_like_order(self, order)?;
        cast_into(self, &out)?;
        Ok(out)
    }

    /// [`GpuArray::reshape`] reading and writing the elements in `order`: `C`
    /// (row-major), `F` (column-major: NumPy's `reshape(..., order='F')`) or `A` (F when
    /// this array is F-contiguous); `K` is refused. A view where strides can express it,
    /// else a copy (in that order).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, Order};
    /// let a = GpuArray::<i32>::arange(&stream, 0.0, 6.0, 1.0)?;
    /// let m = a.reshape_order(&[2, 3], Order::F)?; // a view: strides [1, 2]
    /// assert_eq!(m.to_vec()?, vec![0, 2, 4, 1, 3, 5]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn reshape_order(&self, shape: &[isize], order: Order) -> Result<Self> {
        match self.layout.reshape_order(shape, order) {
            Ok(l) => Ok(self.with_layout(l)),
            Err(LayoutError::NeedsCopy { .. }) => {
                let resolved = self.layout.resolve_order(order);
                self.copy_order(resolved)?
                    .reshape_view_order(shape, resolved)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// [`GpuArray::reshape_view`] in `order`: a view, or [`LayoutError::NeedsCopy`].
    pub fn reshape_view_order(&self, shape: &[isize], order: Order) -> Result<Self> {
        Ok(self.with_layout(self.layout.reshape_order(shape, order)?))
    }

    /// The elements on one axis read in `order` (NumPy's `ravel(order=...)`): `C`, `F`,
    /// `A` (F when this array is F-contiguous), or `K` (the order they lie in memory). A
    /// view where possible, else a copy.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, Order};
    /// let a = GpuArray::<i32>::arange(&stream, 0.0, 6.0, 1.0)?.reshape(&[2, 3])?;
    /// assert_eq!(a.ravel_order(Order::F)?.to_vec()?, vec![0, 3, 1, 4, 2, 5]);
    /// assert!(a.transpose().ravel_order(Order::K)?.shares_buffer_with(&a));
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn ravel_order(&self, order: Order) -> Result<Self> {
        match self.layout.ravel_order(order) {
            Ok(l) => Ok(self.with_layout(l)),
            Err(LayoutError::NeedsCopy { .. }) => {
                let resolved = self.layout.resolve_order(order);
                let copy = self.copy_order(resolved)?;
                Ok(copy.with_layout(copy.layout.ravel_order(resolved)?))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// A new uninitialised array for the result of an elementwise operation of shape
    /// `shape` over operands with `layouts`: F-ordered when the full-size operands are
    /// (see [`Layout::result_order`]), so that the operation keeps the fast path.
    pub(crate) fn empty_for_operands(
        stream: &Stream,
        shape: &[usize],
        layouts: &[&Layout],
    ) -> Result<Self> {
        let len = crate::layout::element_count(shape)?;
        Self::empty_order(stream, shape, Layout::result_order(layouts, len))
    }
}
