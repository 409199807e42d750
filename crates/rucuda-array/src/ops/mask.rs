//! Boolean masks and the indices of nonzero elements: `masked` (NumPy's `a[mask]`),
//! `compress`, `nonzero` (and `where` with one argument), `count_nonzero`.
//!
//! Compaction is a scan: one kernel writes a 0/1 `i64` flag per element (any layout, in
//! row-major order), the library's `cumsum` scan turns the flags into output positions in
//! place, the host reads the last one (the count: the result's size, so these calls wait
//! for the stream, as NumPy's and CuPy's do), and one kernel moves each selected element
//! (or its coordinates) to its position. "Nonzero" is NumPy's truth: `x != 0`, NaN
//! counting as nonzero, a complex number when either part is nonzero.

use super::engine::{run, Arg};
use super::indexing_key::{IndexingKey, TakeMode};
use super::key::OpKey;
use crate::dtype::Element;
use crate::elementwise::ScalarValue;
use crate::error::{ArrayError, Result};
use crate::layout::{LayoutError, SliceArg};
use crate::ordering::{after_on, before_on};
use crate::scan::cumsum_kernel;
use crate::GpuArray;

/// The inclusive running count of nonzero elements of `a` in row-major order (a
/// contiguous `i64` array shaped like `a`, on `a`'s stream) and the total count.
/// Waits for the stream to read the total.
fn positions<T: Element>(a: &GpuArray<T>) -> Result<(GpuArray<i64>, GpuArray<u8>, usize)> {
    let stream = a.stream();
    let pos = GpuArray::<i64>::empty(stream, a.shape())?;
    let flags = GpuArray::<u8>::empty(stream, a.shape())?;
    if a.is_empty() {
        return Ok((pos, flags, 0));
    }
    {
        let (src, dst, f) = (a.as_ref(), pos.as_ref(), flags.as_ref());
        run(
            stream,
            OpKey::Indexing(IndexingKey::Flags { dtype: T::DTYPE }),
            a.shape(),
            &[src.as_in(), dst.as_out(), f.as_out()],
        )?;
    }
    let n = a.len();
    let mut flat = pos.reshape(&[n as isize])?;
    cumsum_kernel(crate::DType::I64)?.call_in_place(stream, &mut flat)?;
    let last = flat.slice(&[SliceArg::range(n as isize - 1, n as isize)])?;
    let count = last.to_vec()?.first().copied().unwrap_or(0);
    let count = usize::try_from(count)
        .map_err(|_| ArrayError::InvalidArgument(format!("nonzero count {count} is not a size")))?;
    Ok((pos, flags, count))
}

impl<T: Element> GpuArray<T> {
    /// NumPy's boolean indexing `a[mask]`: the elements where `mask` is nonzero, in
    /// row-major order, as a new 1-D array. `mask` (any element type, any layout) must
    /// have exactly this array's shape ([`LayoutError::BroadcastTo`] otherwise). Waits
    /// for the stream (the result's size is the number of selected elements).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::GpuArray;
    /// let a = GpuArray::from_shape_slice(&stream, &[2, 3], &[1.0f32, -2.0, 3.0, -4.0, 5.0, -6.0])?;
    /// let positive = a.greater(0.0f32)?;
    /// assert_eq!(a.masked(&positive)?.to_vec()?, vec![1.0, 3.0, 5.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn masked<M: Element>(&self, mask: &GpuArray<M>) -> Result<GpuArray<T>> {
        if self.context() != mask.context() {
            return Err(ArrayError::ContextMismatch);
        }
        if mask.shape() != self.shape() {
            return Err(LayoutError::BroadcastTo {
                from: mask.shape().to_vec(),
                to: self.shape().to_vec(),
            }
            .into());
        }
        let stream = self.stream();
        // The positions are computed on the mask's stream (reading the count waits for
        // it); the compaction runs on ours.
        let (pos, flags, count) = positions(mask)?;
        before_on(stream, &[mask.stream()])?;
        let out = GpuArray::<T>::empty(stream, &[count])?;
        if count > 0 {
            let (a, f, p) = (self.as_ref(), flags.as_ref(), pos.as_ref());
            run(
                stream,
                OpKey::Indexing(IndexingKey::Compact {
                    dtype: T::DTYPE,
                    mask: M::DTYPE,
                }),
                self.shape(),
                &[
                    a.as_in(),
                    f.as_in(),
                    p.as_in(),
                    Arg::WholeOut { mem: out.memory() },
                ],
            )?;
        }
        after_on(stream, &[mask.stream(), pos.stream()])?;
        Ok(out)
    }

    /// NumPy's `compress(condition, a, axis)`: the slices along `axis` (the flattened
    /// array for `None`) where the 1-D `condition` is nonzero. A condition shorter than
    /// the axis selects nothing past its end; one longer is an
    /// [`ArrayError::IndexOutOfBounds`] when it selects past the axis (as NumPy).
    /// Waits for the stream.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::GpuArray;
    /// let a = GpuArray::from_shape_slice(&stream, &[2, 3], &[1i32, 2, 3, 4, 5, 6])?;
    /// let keep = GpuArray::from_slice(&stream, &[true, false, true])?;
    /// assert_eq!(a.compress(&keep, Some(1))?.to_vec()?, vec![1, 3, 4, 6]);
    /// assert_eq!(a.compress(&keep, None)?.to_vec()?, vec![1, 3]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn compress<C: Element>(
        &self,
        condition: &GpuArray<C>,
        axis: Option<isize>,
    ) -> Result<GpuArray<T>> {
        if condition.ndim() != 1 {
            return Err(ArrayError::InvalidArgument(format!(
                "compress needs a 1-D condition, not one of shape {:?}",
                condition.shape()
            )));
        }
        let (source, axis) = match axis {
            Some(ax) => (self.view(), ax),
            None => (self.reshape(&[-1])?, 0),
        };
        let chosen = condition.nonzero()?;
        let idx = chosen
            .into_iter()
            .next()
            .ok_or_else(|| ArrayError::InvalidArgument("compress: no index array".into()))?;
        source.take_axis(&idx, axis, TakeMode::Raise)
    }

    /// NumPy's `nonzero`: for each axis, the `i64` coordinates of the nonzero elements in
    /// row-major order (one 1-D array per axis, all of one length). A 0-d array is an
    /// error (NumPy deprecates it). Waits for the stream.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::GpuArray;
    /// let a = GpuArray::from_shape_slice(&stream, &[2, 3], &[0u8, 7, 0, 1, 0, 2])?;
    /// let [rows, cols] = <[_; 2]>::try_from(a.nonzero()?).unwrap();
    /// assert_eq!((rows.to_vec()?, cols.to_vec()?), (vec![0, 1, 1], vec![1, 0, 2]));
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn nonzero(&self) -> Result<Vec<GpuArray<i64>>> {
        let ndim = self.ndim();
        if ndim == 0 || ndim > 64 {
            return Err(ArrayError::InvalidArgument(format!(
                "nonzero of a {ndim}-d array (1 to 64 axes are supported; NumPy deprecates 0-d)"
            )));
        }
        let stream = self.stream();
        let (pos, flags, count) = positions(self)?;
        let coords = GpuArray::<i64>::empty(stream, &[ndim, count])?;
        if count > 0 {
            let (f, p) = (flags.as_ref(), pos.as_ref());
            let mut args = vec![
                f.as_in(),
                p.as_in(),
                Arg::Scalar(ScalarValue::new(count as i64)),
            ];
            args.extend(
                self.shape()[1..]
                    .iter()
                    .map(|&d| Arg::Scalar(ScalarValue::new(d as i64))),
            );
            args.push(Arg::WholeOut {
                mem: coords.memory(),
            });
            run(
                stream,
                OpKey::Indexing(IndexingKey::NonzeroCoords {
                    dtype: T::DTYPE,
                    ndim: ndim as u8,
                }),
                self.shape(),
                &args,
            )?;
        }
        (0..ndim)
            .map(|k| coords.slice(&[SliceArg::index(k as isize)]))
            .collect()
    }

    /// NumPy's `count_nonzero` of the whole array (NaN counts), as an `i64` device
    /// scalar. One cast to `bool` and one reduction; no wait.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[0.0f64, f64::NAN, -0.0, 2.0])?;
    /// assert_eq!(a.count_nonzero()?.to_scalar()?, 2);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn count_nonzero(&self) -> Result<GpuArray<i64>> {
        self.astype::<bool>()?.sum_as::<i64>()
    }

    /// NumPy's `count_nonzero(a, axis=axes, keepdims=...)`: the nonzero elements (NaN
    /// counts) along `axes` (negative counts from the end), as `i64`. One cast to `bool`
    /// and one axis reduction ([`GpuArray::sum_axes`]).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[0, 1, 2, 0, 0, 5])?.reshape(&[2, 3])?;
    /// assert_eq!(a.count_nonzero_axes(&[0], false)?.to_vec()?, vec![0, 1, 2]);
    /// assert_eq!(a.count_nonzero_axes(&[-1], true)?.shape(), &[2, 1]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn count_nonzero_axes(&self, axes: &[isize], keepdims: bool) -> Result<GpuArray<i64>> {
        self.astype::<bool>()?.sum_axes(axes, keepdims)
    }
}

/// NumPy's `nonzero(a)`: see [`GpuArray::nonzero`].
pub fn nonzero<T: Element>(a: &GpuArray<T>) -> Result<Vec<GpuArray<i64>>> {
    a.nonzero()
}

/// NumPy's `where(condition)` with one argument: the same as [`nonzero`] (the
/// three-argument form is [`super::where_`]).
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// let c = rucuda_array::GpuArray::from_slice(&stream, &[false, true, true])?;
/// assert_eq!(rucuda_array::ops::where_nonzero(&c)?[0].to_vec()?, vec![1, 2]);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn where_nonzero<T: Element>(condition: &GpuArray<T>) -> Result<Vec<GpuArray<i64>>> {
    condition.nonzero()
}

/// NumPy's `count_nonzero(a)`: see [`GpuArray::count_nonzero`].
pub fn count_nonzero<T: Element>(a: &GpuArray<T>) -> Result<GpuArray<i64>> {
    a.count_nonzero()
}
