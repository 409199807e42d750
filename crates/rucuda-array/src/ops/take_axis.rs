//! Integer-array indexing of one axis: [`GpuArray::take_axis`] (NumPy's `take(a,
//! indices, axis)`, the same as `a[:, idx]` for axis 1) and [`GpuArray::put_axis`]
//! (`a[:, idx] = values`), with NumPy's index modes ([`TakeMode`]).
//!
//! `Raise` is checked on the device: the kernel clamps a bad index to element 0 (so no
//! access leaves the array), records the first one it meets in a two-word flag, and the
//! call reads the flag back (waiting for the stream) and returns
//! [`ArrayError::IndexOutOfBounds`]. `Wrap` and `Clip` do not wait.
//!
//! Several indices naming one element in a `put_axis`: one of the values lands there;
//! for elements wider than 8 bytes each aligned word comes from one of them (an element
//! may mix words of different values; so may one aligned to less than its size, as
//! `Complex<f32>`, two 4-byte words). The kernel writes with relaxed gpu-scope stores
//! of the element's aligned words (`cuda/scatter_store.cuh`), so the conflicting writes
//! are no data race (see [`GpuArray::put`] for the details).

use rucuda_driver::Stream;

use super::engine::{run, Arg};
use super::indexing_key::{IndexingKey, TakeMode};
use super::key::OpKey;
use crate::convert::{check_writable, contiguous_copy};
use crate::dtype::Element;
use crate::elementwise::ScalarValue;
use crate::error::{ArrayError, Result};
use crate::layout::{broadcast_shapes, LayoutError};
use crate::ordering::{after_on, before_on};
use crate::GpuArray;

/// A contiguous version of `a` (itself when already contiguous).
pub(crate) fn contiguous<T: Element>(a: &GpuArray<T>) -> Result<GpuArray<T>> {
    if a.is_c_contiguous() {
        Ok(a.view())
    } else {
        contiguous_copy(a)
    }
}

/// The device-side flags of a `Raise` launch: two zeroed words (flag, first bad index)
/// per checked index list.
pub(crate) struct RaiseFlag {
    words: Option<GpuArray<u64>>,
}

impl RaiseFlag {
    /// `lists` flags on `stream` when `mode` is `Raise`, else nothing.
    pub(crate) fn new(stream: &Stream, mode: TakeMode, lists: usize) -> Result<RaiseFlag> {
        Ok(RaiseFlag {
            words: match mode {
                TakeMode::Raise => Some(GpuArray::<u64>::zeros(stream, &[2 * lists])?),
                _ => None,
            },
        })
    }

    /// The kernel's last argument, if any.
    pub(crate) fn arg(&self) -> Option<Arg<'_>> {
        self.words
            .as_ref()
            .map(|w| Arg::WholeOut { mem: w.memory() })
    }

    /// Waits for the flags and returns the error the first raised one holds; `bounds`
    /// gives (axis, size) for each index list.
    pub(crate) fn check(&self, bounds: &[(usize, usize)]) -> Result<()> {
        let Some(w) = &self.words else {
            return Ok(());
        };
        let v = w.to_vec()?;
        for (pair, &(axis, size)) in v.chunks(2).zip(bounds) {
            if let [flag, bad] = pair {
                if *flag != 0 {
                    return Err(ArrayError::IndexOutOfBounds {
                        index: *bad as i64,
                        axis,
                        size,
                    });
                }
            }
        }
        Ok(())
    }
}

/// The shape `shape[..axis] + middle + shape[axis+1..]`.
pub(crate) fn splice_shape(shape: &[usize], axis: usize, middle: &[usize]) -> Vec<usize> {
    let mut s = shape[..axis].to_vec();
    s.extend_from_slice(middle);
    s.extend_from_slice(&shape[axis + 1..]);
    s
}

fn empty_axis_error(what: &str, axis: usize) -> ArrayError {
    ArrayError::InvalidArgument(format!(
        "cannot {what} a non-empty index list along axis {axis}, which is empty"
    ))
}

impl<T: Element> GpuArray<T> {
    /// NumPy's `take(a, indices, axis)`: `out[pre, j.., post] = self[pre, indices[j..],
    /// post]`, shaped `shape[..axis] + indices.shape + shape[axis+1..]`. This is also
    /// integer-array indexing of one axis (`a[:, idx]` is `a.take_axis(&idx, 1,
    /// TakeMode::Raise)`). `axis` may be negative; indices may be any integer type and
    /// layout, negative ones counting from the end.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{ops::TakeMode, ArrayError, GpuArray};
    /// let a = GpuArray::from_shape_slice(&stream, &[2, 3], &[1i32, 2, 3, 4, 5, 6])?;
    /// let idx = GpuArray::from_slice(&stream, &[2i64, -3])?;
    /// assert_eq!(a.take_axis(&idx, -1, TakeMode::Raise)?.to_vec()?, vec![3, 1, 6, 4]);
    /// let bad = GpuArray::from_slice(&stream, &[5i64])?;
    /// assert!(matches!(a.take_axis(&bad, 1, TakeMode::Raise),
    ///                  Err(ArrayError::IndexOutOfBounds { index: 5, axis: 1, size: 3 })));
    /// assert_eq!(a.take_axis(&bad, 1, TakeMode::Clip)?.to_vec()?, vec![3, 6]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn take_axis<I: Element>(
        &self,
        indices: &GpuArray<I>,
        axis: isize,
        mode: TakeMode,
    ) -> Result<GpuArray<T>> {
        if self.context() != indices.context() {
            return Err(ArrayError::ContextMismatch);
        }
        let ax = self.layout().axis(axis)?;
        let out_shape = splice_shape(self.shape(), ax, indices.shape());
        gather(self, indices, ax, &out_shape, indices.len(), false, mode)
    }

    /// Integer-array assignment along one axis, NumPy's `a[:, idx] = values` (for axis
    /// 1): `self[pre, indices[j..], post] = values[pre, j.., post]`, `values` broadcast
    /// to `shape[..axis] + indices.shape + shape[axis+1..]`. Indices as in
    /// [`GpuArray::take_axis`]. When several indices name one element, one of the values
    /// lands there, which one is unspecified (NumPy: the last); for elements wider than
    /// 8 bytes (or aligned to less than their size) each aligned word comes from one of
    /// them (see [`GpuArray::put`]). In `Raise` mode the error comes after the kernel
    /// ran: the valid indices' elements were written.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{ops::TakeMode, GpuArray};
    /// let a = GpuArray::<f32>::zeros(&stream, &[2, 3])?;
    /// let idx = GpuArray::from_slice(&stream, &[-1i32, 0])?;
    /// let v = GpuArray::from_shape_slice(&stream, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
    /// a.put_axis(&idx, &v, 1, TakeMode::Raise)?;
    /// assert_eq!(a.to_vec()?, vec![2.0, 0.0, 1.0, 4.0, 0.0, 3.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn put_axis<I: Element>(
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
        let vshape = splice_shape(self.shape(), ax, indices.shape());
        scatter(
            self,
            indices,
            values,
            ax,
            &vshape,
            indices.len(),
            false,
            mode,
        )
    }
}

/// The gather along axis `ax` of `take_axis` (`along` false: `ni` indices, one per
/// position along the output's index axes, read as a contiguous list) and of
/// `take_along_axis` (`along`: one index per element of `out_shape`, read through the
/// index array's own layout, broadcast). `out_shape` is `a`'s shape with the indices'
/// axes (or their length) at `ax`; its other axes are `a`'s.
pub(crate) fn gather<T: Element, I: Element>(
    a: &GpuArray<T>,
    indices: &GpuArray<I>,
    ax: usize,
    out_shape: &[usize],
    ni: usize,
    along: bool,
    mode: TakeMode,
) -> Result<GpuArray<T>> {
    let size = a.shape()[ax];
    let inner: usize = a.shape()[ax + 1..].iter().product();
    let stream = a.stream();
    let out = GpuArray::<T>::empty(stream, out_shape)?;
    if out.is_empty() {
        return Ok(out);
    }
    if size == 0 {
        return Err(empty_axis_error("take", ax));
    }
    let src = contiguous(a)?;
    let idx = if along {
        indices.view()
    } else {
        contiguous(indices)?
    };
    let flag = RaiseFlag::new(stream, mode, 1)?;
    let homes = [src.stream(), idx.stream()];
    before_on(stream, &homes)?;
    {
        let (o, ix) = (out.as_ref(), idx.as_ref());
        let mut args = vec![
            Arg::Whole { mem: src.memory() },
            if along {
                ix.as_in()
            } else {
                Arg::Whole { mem: idx.memory() }
            },
            Arg::Scalar(ScalarValue::new(inner as i64)),
            Arg::Scalar(ScalarValue::new(ni as i64)),
            Arg::Scalar(ScalarValue::new(size as i64)),
            o.as_out(),
        ];
        args.extend(flag.arg());
        let (dtype, index) = (T::DTYPE, I::DTYPE);
        let key = if along {
            IndexingKey::TakeAlong { dtype, index, mode }
        } else {
            IndexingKey::TakeAxis { dtype, index, mode }
        };
        run(stream, OpKey::Indexing(key), out_shape, &args)?;
    }
    after_on(stream, &homes)?;
    flag.check(&[(ax, size)])?;
    Ok(out)
}

/// The scatter into `a` along axis `ax` of `put_axis` and `put_along_axis` (`along`, `ni`
/// as for [`gather`]): `values` broadcast to `vshape`, the iteration shape.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter<T: Element, I: Element>(
    a: &GpuArray<T>,
    indices: &GpuArray<I>,
    values: &GpuArray<T>,
    ax: usize,
    vshape: &[usize],
    ni: usize,
    along: bool,
    mode: TakeMode,
) -> Result<()> {
    if broadcast_shapes(values.shape(), vshape)? != vshape {
        return Err(LayoutError::BroadcastTo {
            from: values.shape().to_vec(),
            to: vshape.to_vec(),
        }
        .into());
    }
    check_writable(a.layout())?;
    if vshape.iter().product::<usize>() == 0 {
        return Ok(());
    }
    let size = a.shape()[ax];
    if size == 0 {
        return Err(empty_axis_error("put", ax));
    }
    let inner: usize = a.shape()[ax + 1..].iter().product();
    let stream = a.stream();
    let dst = contiguous(a)?;
    // Values or indices sharing memory with the destination are copied first.
    let vals = if values.shares_buffer_with(a) {
        contiguous_copy(values)?
    } else {
        values.view()
    };
    let idx = if indices.shares_buffer_with(a) {
        contiguous_copy(indices)?
    } else if along {
        indices.view()
    } else {
        contiguous(indices)?
    };
    let flag = RaiseFlag::new(stream, mode, 1)?;
    let homes = [vals.stream(), idx.stream(), dst.stream()];
    before_on(stream, &homes)?;
    {
        let (v, ix) = (vals.as_ref(), idx.as_ref());
        let mut args = vec![
            v.as_in(),
            if along {
                ix.as_in()
            } else {
                Arg::Whole { mem: idx.memory() }
            },
            Arg::Scalar(ScalarValue::new(inner as i64)),
            Arg::Scalar(ScalarValue::new(ni as i64)),
            Arg::Scalar(ScalarValue::new(size as i64)),
            Arg::WholeOut { mem: dst.memory() },
        ];
        args.extend(flag.arg());
        let (dtype, index) = (T::DTYPE, I::DTYPE);
        let key = if along {
            IndexingKey::PutAlong { dtype, index, mode }
        } else {
            IndexingKey::PutAxis { dtype, index, mode }
        };
        run(stream, OpKey::Indexing(key), vshape, &args)?;
    }
    after_on(stream, &homes)?;
    if !a.is_c_contiguous() {
        a.copy_from(&dst)?;
    }
    flag.check(&[(ax, size)])
}

#[cfg(test)]
mod tests {
    use super::splice_shape;

    #[test]
    fn spliced_shapes() {
        assert_eq!(splice_shape(&[2, 3, 4], 1, &[5, 6]), vec![2, 5, 6, 4]);
        assert_eq!(splice_shape(&[2, 3, 4], 0, &[]), vec![3, 4]);
        assert_eq!(splice_shape(&[7], 0, &[2]), vec![2]);
    }
}
