//! Host round trips: from `ndarray` arrays of any layout, to `ndarray`/`Vec` (views
//! gathered), and `set` from the host.
//!
//! Views that are not row-major contiguous are gathered on the device first (the strided
//! copy kernel) and brought back contiguously; writes to such views upload contiguously
//! and scatter on the device.

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};
use rucuda_driver::Stream;

use super::GpuArray;
use crate::device_copy;
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

    /// The elements in row-major order.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        if self.is_empty() {
            return Ok(Vec::new());
        }
        if self.is_c_contiguous() {
            let mut stored = vec![T::from_f64(0.0).to_storage(); self.len()];
            let elements = self.memory().elements(self.nbytes())?;
            device_copy::device_to_host(self.stream(), elements, &mut stored)?;
            return Ok(T::vec_from_storage(stored));
        }
        self.copy()?.to_vec()
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

    /// Overwrites the elements with `data` given in row-major order (PyCUDA's `set`).
    /// Works on views too; a broadcast view (stride 0 over a longer axis) is refused.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, SliceArg};
    /// let a = GpuArray::<i64>::zeros(&stream, &[2, 3])?;
    /// a.slice(&[SliceArg::All, SliceArg::index(0)])?.set(&[7, 8])?;
    /// assert_eq!(a.to_vec()?, vec![7, 0, 0, 8, 0, 0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn set(&self, data: &[T]) -> Result<()> {
        if data.len() != self.len() {
            return Err(ArrayError::LengthMismatch {
                device: self.len(),
                host: data.len(),
            });
        }
        if self.is_empty() {
            return Ok(());
        }
        if self.layout.has_broadcast_axes() {
            return Err(ArrayError::WriteToBroadcast {
                shape: self.shape().to_vec(),
                strides: self.strides().to_vec(),
            });
        }
        if self.is_c_contiguous() {
            let stored = T::slice_to_storage(data);
            let elements = self.memory().elements(self.nbytes())?;
            return device_copy::host_to_device(self.stream(), elements, &stored);
        }
        let staged = Self::from_shape_slice(self.stream(), self.shape(), data)?;
        self.copy_from(&staged)
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
