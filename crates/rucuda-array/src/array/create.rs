//! Creating arrays: empty, zeros, ones, full, arange, linspace, the `*_like` forms, and
//! from host slices.

use rucuda_driver::{DeviceBuffer, Stream};

use super::GpuArray;
use crate::device_copy;
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::layout::{Layout, Order};

impl<T: Element> GpuArray<T> {
    /// An array of `shape` with unspecified contents (any bits are a valid value),
    /// allocated stream-ordered on `stream`, row-major ([`GpuArray::empty_order`] for
    /// column-major).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::<f32>::empty(&stream, &[1024, 1024])?;
    /// assert_eq!(a.len(), 1 << 20);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn empty(stream: &Stream, shape: &[usize]) -> Result<Self> {
        Self::with_dense_layout(stream, Layout::c_contiguous(shape)?)
    }

    /// An uninitialised array with `layout`, which must be dense at offset 0 (made by
    /// [`Layout::contiguous`] or [`Layout::dense_like`]).
    pub(crate) fn with_dense_layout(stream: &Stream, layout: Layout) -> Result<Self> {
        let buffer = DeviceBuffer::<T::Storage>::uninit_async(stream, layout.len())?;
        Ok(GpuArray::from_buffer(buffer, stream, layout))
    }

    /// An array of zeros (all bits zero: `0`, `0.0`, `false`, `0+0i`).
    pub fn zeros(stream: &Stream, shape: &[usize]) -> Result<Self> {
        Self::zeros_with_layout(stream, Layout::c_contiguous(shape)?)
    }

    /// Zeros with a dense layout at offset 0.
    pub(crate) fn zeros_with_layout(stream: &Stream, layout: Layout) -> Result<Self> {
        let a = Self::with_dense_layout(stream, layout)?;
        device_copy::fill_pattern(stream, a.buffer_elements(0, a.len())?, &[0])?;
        Ok(a)
    }

    /// An array of ones.
    pub fn ones(stream: &Stream, shape: &[usize]) -> Result<Self> {
        crate::dtype::require_number(T::DTYPE, "ones")?;
        Self::full(stream, shape, T::from_f64(1.0))
    }

    /// An array with every element `value`.
    ///
    /// Elements of 1, 2 or 4 bytes are filled by the driver's memset; 8- and 16-byte
    /// elements by the fill kernel ([`GpuArray::fill`]).
    pub fn full(stream: &Stream, shape: &[usize], value: T) -> Result<Self> {
        Self::full_with_layout(stream, Layout::c_contiguous(shape)?, value)
    }

    /// `value` everywhere, with a dense layout at offset 0.
    pub(crate) fn full_with_layout(stream: &Stream, layout: Layout, value: T) -> Result<Self> {
        let mut a = Self::with_dense_layout(stream, layout)?;
        a.fill_with_memset_or_upload(value)?;
        Ok(a)
    }

    /// Sets every element of this (contiguous, freshly made) array to `value`.
    fn fill_with_memset_or_upload(&mut self, value: T) -> Result<()> {
        let bits = value.to_storage();
        let pattern = bytemuck::bytes_of(&bits);
        let elements = self.memory().elements(self.nbytes())?;
        let done = device_copy::fill_pattern(self.stream(), elements, pattern)?;
        if !done {
            self.fill(value)?;
        }
        Ok(())
    }

    /// A new array with the same elements (PyCUDA's and NumPy's `copy`), in the same
    /// memory order ([`Order::K`]: an F-ordered array stays F-ordered, a view becomes
    /// dense), ordered on the home stream. [`GpuArray::copy_order`] picks the order.
    /// Contiguous arrays are copied by the driver; other views (strided, reversed,
    /// transposed, broadcast) by the strided copy kernel.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, Order};
    /// let f = GpuArray::<f32>::zeros_order(&stream, &[3, 4], Order::F)?;
    /// assert!(f.copy()?.is_f_contiguous());
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn copy(&self) -> Result<Self> {
        self.copy_order(Order::K)
    }

    /// An uninitialised array of `other`'s shape on `other`'s stream, in `other`'s
    /// memory order (NumPy's `empty_like`, whose default order is `K`); the element type
    /// may differ. [`GpuArray::empty_like_order`] picks the order.
    pub fn empty_like<U: Element>(other: &GpuArray<U>) -> Result<Self> {
        Self::empty_like_order(other, Order::K)
    }

    /// Zeros of `other`'s shape on `other`'s stream, in its memory order.
    pub fn zeros_like<U: Element>(other: &GpuArray<U>) -> Result<Self> {
        Self::zeros_like_order(other, Order::K)
    }

    /// Ones of `other`'s shape on `other`'s stream, in its memory order.
    pub fn ones_like<U: Element>(other: &GpuArray<U>) -> Result<Self> {
        Self::ones_like_order(other, Order::K)
    }

    /// `value` everywhere, in `other`'s shape on `other`'s stream, in its memory order.
    pub fn full_like<U: Element>(other: &GpuArray<U>, value: T) -> Result<Self> {
        Self::full_like_order(other, value, Order::K)
    }

    /// A 1-D array holding `data`.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[1u8, 2, 3])?;
    /// assert_eq!(a.to_vec()?, vec![1, 2, 3]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn from_slice(stream: &Stream, data: &[T]) -> Result<Self> {
        Self::from_shape_slice(stream, &[data.len()], data)
    }

    /// An array of `shape` holding `data` in row-major order.
    pub fn from_shape_slice(stream: &Stream, shape: &[usize], data: &[T]) -> Result<Self> {
        let a = Self::empty(stream, shape)?;
        if a.len() != data.len() {
            return Err(ArrayError::LengthMismatch {
                device: a.len(),
                host: data.len(),
            });
        }
        let stored = T::slice_to_storage(data);
        device_copy::host_to_device(stream, a.memory().elements(a.nbytes())?, &stored)?;
        Ok(a)
    }

    /// NumPy's `arange`: `start, start + step, ...` while below `stop` (above, for a
    /// negative step), converted to `T` as a C cast would. Computed in `f64`, so integers
    /// are exact up to 2^53.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::<i32>::arange(&stream, 10.0, 0.0, -3.0)?;
    /// assert_eq!(a.to_vec()?, vec![10, 7, 4, 1]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn arange(stream: &Stream, start: f64, stop: f64, step: f64) -> Result<Self> {
        crate::dtype::require_number(T::DTYPE, "arange")?;
        let values = arange_values(start, stop, step)?;
        let data: Vec<T> = values.into_iter().map(T::from_f64).collect();
        Self::from_slice(stream, &data)
    }

    /// NumPy's `linspace`: `num` evenly spaced values from `start` to `stop` (included
    /// when `endpoint`).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::<f64>::linspace(&stream, 0.0, 1.0, 5, true)?;
    /// assert_eq!(a.to_vec()?, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn linspace(
        stream: &Stream,
        start: f64,
        stop: f64,
        num: usize,
        endpoint: bool,
    ) -> Result<Self> {
        crate::dtype::require_number(T::DTYPE, "linspace")?;
        let data: Vec<T> = linspace_values(start, stop, num, endpoint)?
            .into_iter()
            .map(T::from_f64)
            .collect();
        Self::from_slice(stream, &data)
    }
}

/// The values of NumPy's `arange` in `f64`.
pub(crate) fn arange_values(start: f64, stop: f64, step: f64) -> Result<Vec<f64>> {
    if step == 0.0 || !step.is_finite() || !start.is_finite() || !stop.is_finite() {
        return Err(ArrayError::InvalidArgument(format!(
            "arange({start}, {stop}, {step}) needs finite bounds and a finite nonzero step"
        )));
    }
    let count = ((stop - start) / step).ceil().max(0.0);
    if count > (isize::MAX as f64) {
        return Err(ArrayError::InvalidArgument(format!(
            "arange({start}, {stop}, {step}) has too many elements"
        )));
    }
    Ok((0..count as usize)
        .map(|k| start + k as f64 * step)
        .collect())
}

/// The values of NumPy's `linspace` in `f64`.
pub(crate) fn linspace_values(
    start: f64,
    stop: f64,
    num: usize,
    endpoint: bool,
) -> Result<Vec<f64>> {
    if !start.is_finite() || !stop.is_finite() {
        return Err(ArrayError::InvalidArgument(format!(
            "linspace({start}, {stop}) needs finite bounds"
        )));
    }
    let div = if endpoint { num.saturating_sub(1) } else { num };
    let step = if div > 0 {
        (stop - start) / div as f64
    } else {
        0.0
    };
    let mut v: Vec<f64> = (0..num).map(|k| start + k as f64 * step).collect();
    if endpoint && num > 1 {
        if let Some(last) = v.last_mut() {
            *last = stop;
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arange_matches_numpy() {
        assert_eq!(
            arange_values(0.0, 5.0, 1.0).unwrap(),
            vec![0.0, 1.0, 2.0, 3.0, 4.0]
        );
        assert_eq!(
            arange_values(10.0, 0.0, -3.0).unwrap(),
            vec![10.0, 7.0, 4.0, 1.0]
        );
        assert_eq!(arange_values(0.0, 1.0, 0.3).unwrap().len(), 4);
        assert!(arange_values(5.0, 0.0, 1.0).unwrap().is_empty());
        assert!(arange_values(0.0, 1.0, 0.0).is_err());
        assert!(arange_values(0.0, f64::NAN, 1.0).is_err());
    }

    #[test]
    fn linspace_matches_numpy() {
        assert_eq!(
            linspace_values(0.0, 1.0, 5, true).unwrap(),
            vec![0.0, 0.25, 0.5, 0.75, 1.0]
        );
        assert_eq!(
            linspace_values(0.0, 1.0, 4, false).unwrap(),
            vec![0.0, 0.25, 0.5, 0.75]
        );
        assert_eq!(linspace_values(2.0, 3.0, 1, true).unwrap(), vec![2.0]);
        assert!(linspace_values(2.0, 3.0, 0, true).unwrap().is_empty());
        let v = linspace_values(0.1, 0.7, 7, true).unwrap();
        assert_eq!(v[6], 0.7);
    }
}
