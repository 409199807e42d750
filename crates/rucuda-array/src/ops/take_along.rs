//! Indexing along an axis with one index per element: [`GpuArray::take_along_axis`] and
//! [`GpuArray::put_along_axis`] (NumPy's `take_along_axis` / `put_along_axis`, the
//! companions of `argsort`, `argmax_axis` and `topk`), with the index modes of
//! [`GpuArray::take_axis`] ([`TakeMode`]; NumPy's own raise).
//!
//! The index array has the array's number of axes; along every axis but `axis` its length
//! is the array's or 1 (broadcast). NumPy also broadcasts the array against the indices
//! where the array's length is 1; that is refused here with a
//! [`LayoutError::BroadcastTo`] (broadcast the array first).

use super::indexing_key::TakeMode;
use super::take_axis::{gather, scatter};
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::layout::{broadcast_shapes, LayoutError};
use crate::GpuArray;

/// The iteration shape of an along-axis operation on an array of `shape` with indices of
/// `index_shape` along axis `ax`: the array's shape with the indices' length at `ax`.
/// The indices must have as many axes and broadcast to it.
fn along_shape(shape: &[usize], index_shape: &[usize], ax: usize) -> Result<Vec<usize>> {
    if index_shape.len() != shape.len() {
        return Err(ArrayError::InvalidArgument(format!(
            "indices along an axis need the array's {} axes, not {} (shape {index_shape:?})",
            shape.len(),
            index_shape.len()
        )));
    }
    let mut out = shape.to_vec();
    out[ax] = index_shape[ax];
    if broadcast_shapes(index_shape, &out)? != out {
        return Err(LayoutError::BroadcastTo {
            from: index_shape.to_vec(),
            to: out,
        }
        .into());
    }
    Ok(out)
}

impl<T: Element> GpuArray<T> {
    /// NumPy's `take_along_axis(a, indices, axis)`: `out[pre, j, post] = self[pre,
    /// indices[pre, j, post], post]`, shaped like this array with `indices`' length at
    /// `axis`. `indices` (any integer type and layout, negative ones counting from the
    /// end) has this array's number of axes, each of this array's length or 1 (broadcast)
    /// except `axis`. Sorting each row by its `argsort` is the classic use.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{ops::TakeMode, GpuArray};
    /// let a = GpuArray::from_shape_slice(&stream, &[2, 3], &[30i32, 10, 20, 6, 4, 5])?;
    /// let order = a.argsort()?;
    /// assert_eq!(a.take_along_axis(&order, 1, TakeMode::Raise)?.to_vec()?, vec![10, 20, 30, 4, 5, 6]);
    /// let first = GpuArray::from_shape_slice(&stream, &[1, 1], &[-1i64])?; // broadcast rows
    /// assert_eq!(a.take_along_axis(&first, 1, TakeMode::Raise)?.to_vec()?, vec![20, 5]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn take_along_axis<I: Element>(
        &self,
        indices: &GpuArray<I>,
        axis: isize,
        mode: TakeMode,
    ) -> Result<GpuArray<T>> {
        if self.context() != indices.context() {
            return Err(ArrayError::ContextMismatch);
        }
        let ax = self.layout().axis(axis)?;
        let out_shape = along_shape(self.shape(), indices.shape(), ax)?;
        gather(self, indices, ax, &out_shape, out_shape[ax], true, mode)
    }

    /// NumPy's `put_along_axis(a, indices, values, axis)`: `self[pre, indices[pre, j,
    /// post], post] = values[pre, j, post]`, `indices` as in
    /// [`GpuArray::take_along_axis`] and `values` broadcast to the same shape. When
    /// several indices name one element, one of the values lands there, which one is
    /// unspecified (see [`GpuArray::put_axis`]). In `Raise` mode the error comes after the
    /// kernel ran: the valid indices' elements were written.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{ops::TakeMode, GpuArray};
    /// let a = GpuArray::<f32>::zeros(&stream, &[2, 3])?;
    /// let at = GpuArray::from_shape_slice(&stream, &[2, 1], &[2i32, 0])?;
    /// let v = GpuArray::from_slice(&stream, &[7.0f32])?.reshape(&[1, 1])?;
    /// a.put_along_axis(&at, &v, 1, TakeMode::Raise)?;
    /// assert_eq!(a.to_vec()?, vec![0.0, 0.0, 7.0, 7.0, 0.0, 0.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn put_along_axis<I: Element>(
        &self,
        indices: &GpuArray<I>,
        values: &GpuArray<T>,
        axis: isize,
        mode: TakeMode,
    ) -> Result<()> {
        if self.context() != indices.context() || self.context() != values.context() {
            return Err(ArrayError::ContextMismatch);
        }
        let ax = self.layout().axis(axis)?;
        let vshape = along_shape(self.shape(), indices.shape(), ax)?;
        scatter(self, indices, values, ax, &vshape, vshape[ax], true, mode)
    }
}

#[cfg(test)]
mod tests {
    use super::along_shape;

    #[test]
    fn the_indices_broadcast_to_the_array_except_along_the_axis() {
        assert_eq!(
            along_shape(&[4, 5, 6], &[4, 2, 6], 1).unwrap(),
            vec![4, 2, 6]
        );
        assert_eq!(
            along_shape(&[4, 5, 6], &[1, 9, 1], 1).unwrap(),
            vec![4, 9, 6]
        );
        assert_eq!(along_shape(&[4, 5], &[1, 5], 0).unwrap(), vec![1, 5]);
        assert_eq!(along_shape(&[4, 5], &[4, 1], 0).unwrap(), vec![4, 5]);
        // The array is not broadcast against the indices; other axis counts are refused.
        assert!(along_shape(&[1, 5], &[3, 2], 1).is_err());
        assert!(along_shape(&[4, 5], &[4, 2, 1], 1).is_err());
        assert!(along_shape(&[4, 5, 6], &[4, 2, 5], 1).is_err());
    }
}
