//! Joining arrays: NumPy's `concatenate` (along an existing axis) and `stack` (along a
//! new axis). Each input is copied into its slice of the result by the strided copy
//! kernel (one launch per input), on the first input's home stream.

use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::layout::SliceArg;
use crate::GpuArray;

/// NumPy's `concatenate`: the arrays joined along `axis` (negative counts from the end);
/// every other axis must match.
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// use rucuda_array::{ops, GpuArray};
/// let a = GpuArray::from_shape_slice(&stream, &[2, 2], &[1, 2, 3, 4])?;
/// let b = GpuArray::from_shape_slice(&stream, &[2, 1], &[5, 6])?;
/// let c = ops::concatenate(&[&a, &b], 1)?;
/// assert_eq!(c.shape(), &[2, 3]);
/// assert_eq!(c.to_vec()?, vec![1, 2, 5, 3, 4, 6]);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn concatenate<T: Element>(arrays: &[&GpuArray<T>], axis: isize) -> Result<GpuArray<T>> {
    let Some(first) = arrays.first() else {
        return Err(ArrayError::InvalidArgument(
            "concatenate needs at least one array".into(),
        ));
    };
    let ndim = first.ndim();
    if ndim == 0 {
        return Err(ArrayError::InvalidArgument(
            "zero-dimensional arrays cannot be concatenated".into(),
        ));
    }
    let ax = first.layout().axis(axis)?;
    let mut shape = first.shape().to_vec();
    shape[ax] = 0;
    for a in arrays {
        if a.context() != first.context() {
            return Err(ArrayError::ContextMismatch);
        }
        let same_rest =
            a.ndim() == ndim && (0..ndim).all(|k| k == ax || a.shape()[k] == first.shape()[k]);
        if !same_rest {
            return Err(ArrayError::InvalidArgument(format!(
                "concatenate along axis {ax}: shape {:?} does not match shape {:?} on the other axes",
                a.shape(),
                first.shape()
            )));
        }
        shape[ax] += a.shape()[ax];
    }
    let out = GpuArray::<T>::empty(first.stream(), &shape)?;
    let mut at = 0usize;
    for a in arrays {
        let len = a.shape()[ax];
        if len > 0 {
            let mut args = vec![SliceArg::All; ndim];
            args[ax] = SliceArg::range(at as isize, (at + len) as isize);
            out.slice(&args)?.copy_from(a)?;
        }
        at += len;
    }
    Ok(out)
}

/// NumPy's `stack`: arrays of one shape joined along a new axis `axis` of the result
/// (negative counts from the end of the result).
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// use rucuda_array::{ops, GpuArray};
/// let a = GpuArray::from_slice(&stream, &[1.0f32, 2.0])?;
/// let b = GpuArray::from_slice(&stream, &[3.0f32, 4.0])?;
/// let s = ops::stack(&[&a, &b], -1)?;
/// assert_eq!(s.shape(), &[2, 2]);
/// assert_eq!(s.to_vec()?, vec![1.0, 3.0, 2.0, 4.0]);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn stack<T: Element>(arrays: &[&GpuArray<T>], axis: isize) -> Result<GpuArray<T>> {
    let Some(first) = arrays.first() else {
        return Err(ArrayError::InvalidArgument(
            "stack needs at least one array".into(),
        ));
    };
    for a in arrays {
        if a.shape() != first.shape() {
            return Err(ArrayError::InvalidArgument(format!(
                "stack needs arrays of one shape: {:?} and {:?}",
                a.shape(),
                first.shape()
            )));
        }
    }
    let expanded: Vec<GpuArray<T>> = arrays
        .iter()
        .map(|a| a.insert_axis(axis))
        .collect::<Result<_>>()?;
    let refs: Vec<&GpuArray<T>> = expanded.iter().collect();
    let ax = if axis < 0 {
        axis + first.ndim() as isize + 1
    } else {
        axis
    };
    concatenate(&refs, ax)
}
