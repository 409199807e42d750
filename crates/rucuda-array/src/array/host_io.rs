//! Host round trips through slices: `to_vec` (views gathered) and `set` from the host.
//! The `ndarray` forms are in `ndarray_io.rs`.
//!
//! Views that are not row-major contiguous are gathered on the device first (the strided
//! copy kernel) and brought back contiguously; writes to such views upload contiguously
//! and scatter on the device.

use super::GpuArray;
use crate::device_copy;
use crate::dtype::Element;
use crate::error::{ArrayError, Result};

impl<T: Element> GpuArray<T> {
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
        crate::convert::contiguous_copy(self)?.to_vec()
    }

    /// The elements in the order they lie in memory, for an array whose elements lie
    /// densely from element 0 up (C- or F-contiguous, not reversed); else the row-major
    /// `to_vec`. (Used by the `ndarray` download in column-major order.)
    #[cfg(feature = "ndarray")]
    pub(crate) fn dense_to_vec(&self) -> Result<Vec<T>> {
        if self.is_empty() || !self.layout.is_dense_forward() {
            return self.to_vec();
        }
        let mut stored = vec![T::from_f64(0.0).to_storage(); self.len()];
        let elements = self.memory().elements(self.nbytes())?;
        device_copy::device_to_host(self.stream(), elements, &mut stored)?;
        Ok(T::vec_from_storage(stored))
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
}
