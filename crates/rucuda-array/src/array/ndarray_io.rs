//! Host round trips with `ndarray` (feature `ndarray`, on by default): from arrays of any
//! layout (contiguous ones keep their strides), to `ArrayD` (views gathered), and `set`
//! from an array of the same shape.

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};
use rucuda_driver::Stream;

use super::GpuArray;
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::layout::Layout;

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

    /// The array as an `ndarray` array of the same shape (row-major; views gathered).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let h = ndarray::Array3::<f64>::zeros((2, 3, 4)).into_dyn();
    /// let a = rucuda_array::GpuArray::from_ndarray(&stream, &h)?;
    /// assert_eq!(a.to_ndarray()?, h);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn to_ndarray(&self) -> Result<ArrayD<T>> {
        let v = self.to_vec()?;
        ArrayD::from_shape_vec(IxDyn(self.shape()), v).map_err(|e| {
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
