//! Host round trips with `ndarray` (feature `ndarray`, on by default): from arrays of any
//! layout (contiguous ones, F-ordered included, keep their strides), to `ArrayD` in C or F
//! order (views gathered), and `set` from an array of the same shape.

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn, ShapeBuilder};
use rucuda_driver::Stream;

use super::GpuArray;
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::layout::{Layout, Order};

impl<T: Element> GpuArray<T> {
    /// A device copy of an `ndarray` array of any layout and dimension. Arrays laid out
    /// contiguously in memory (row-major, column-major, any axis order, reversed axes)
    /// are uploaded as they lie and keep their strides; other views are gathered first.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use ndarray::{array, s};
    /// let h = array![[1, 2, 3], [4, 5, 6]];
    /// let f = rucuda_array::GpuArray::from_ndarray(&stream, &h.t())?;
    /// assert_eq!(f.strides(), &[1, 3]);
    /// let g = rucuda_array::GpuArray::from_ndarray(&stream, &h.slice(s![.., ..;2]))?;
    /// assert_eq!(g.to_vec()?, vec![1, 3, 4, 6]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn from_ndarray<S, D>(stream: &Stream, array: &ArrayBase<S, D>) -> Result<Self>
    where
        S: Data<Elem = T>,
        D: Dimension,
    {
        let shape = array.shape().to_vec();
        if let Some(data) = array.as_slice() {
            return Self::from_shape_slice(stream, &shape, data);
        }
        if let Some(memory) = array.as_slice_memory_order() {
            let size = std::mem::size_of::<T>().max(1);
            let first = array.as_ptr() as usize;
            let base = memory.as_ptr() as usize;
            let offset = first.saturating_sub(base) / size;
            let strides = array.strides().to_vec();
            let layout = Layout::from_parts(shape, strides, offset, memory.len())?;
            let flat = Self::from_slice(stream, memory)?;
            return Ok(flat.with_layout(layout));
        }
        let gathered: Vec<T> = array.iter().copied().collect();
        Self::from_shape_slice(stream, &shape, &gathered)
    }

    /// The array as an `ndarray` array of the same shape: column-major when this array is
    /// F-contiguous (downloaded as it lies, no transpose), else row-major (views
    /// gathered). [`GpuArray::to_ndarray_order`] picks the order.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let h = ndarray::Array3::<f64>::zeros((2, 3, 4)).into_dyn();
    /// let a = rucuda_array::GpuArray::from_ndarray(&stream, &h)?;
    /// assert_eq!(a.to_ndarray()?, h);
    /// let f = a.copy_order(rucuda_array::Order::F)?.to_ndarray()?;
    /// assert!(f.t().is_standard_layout() && f == h);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn to_ndarray(&self) -> Result<ArrayD<T>> {
        self.to_ndarray_order(Order::K)
    }

    /// The array as an `ndarray` array laid out in `order`: `C` (row-major), `F`
    /// (column-major), `A` or `K` (column-major when this array is F-contiguous, else
    /// row-major). An array already in that order is downloaded as it lies; others are
    /// reordered on the device first.
    pub fn to_ndarray_order(&self, order: Order) -> Result<ArrayD<T>> {
        let fortran = match order {
            Order::C => false,
            Order::F => true,
            Order::A | Order::K => self.is_f_contiguous() && !self.is_c_contiguous(),
        };
        let built = if fortran {
            let dense;
            let f = if self.is_f_contiguous() {
                self
            } else {
                dense = self.copy_order(Order::F)?;
                &dense
            };
            ArrayD::from_shape_vec(IxDyn(self.shape()).f(), f.dense_to_vec()?)
        } else {
            ArrayD::from_shape_vec(IxDyn(self.shape()), self.to_vec()?)
        };
        built.map_err(|e| {
            ArrayError::InvalidArgument(format!("building the host array failed: {e}"))
        })
    }

    /// Overwrites the elements with an `ndarray` array of the same shape.
    pub fn set_ndarray<S, D>(&self, array: &ArrayBase<S, D>) -> Result<()>
    where
        S: Data<Elem = T>,
        D: Dimension,
    {
        if array.shape() != self.shape() {
            return Err(crate::layout::LayoutError::BroadcastTo {
                from: array.shape().to_vec(),
                to: self.shape().to_vec(),
            }
            .into());
        }
        match array.as_slice() {
            Some(s) => self.set(s),
            None => self.set(&array.iter().copied().collect::<Vec<T>>()),
        }
    }
}
