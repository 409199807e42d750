//! The array methods: `sort`, `argsort`, `sort_by_key` along an axis, ascending or
//! descending, stable.

use super::engine::{SortJob, Values};
use super::keys::KeyBits;
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::layout::resolve_axis;
use crate::ordering::{after_on, before_on};
use crate::{GpuArray, Order};

/// The order of a sort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SortOrder {
    /// Smallest first (NumPy's only order), NaNs last.
    #[default]
    Ascending,
    /// Largest first, NaNs still last; equal keys keep their order (stable).
    Descending,
}

impl SortOrder {
    pub(crate) fn descending(self) -> bool {
        self == SortOrder::Descending
    }
}

/// `a` with `axis` moved last, C-contiguous (a view when it already is), and the axis.
pub(crate) fn axis_last<T: Element>(a: &GpuArray<T>, axis: isize) -> Result<(GpuArray<T>, usize)> {
    if a.ndim() == 0 {
        return Err(ArrayError::InvalidArgument(
            "sorting: a 0-d array has no axis to sort along".into(),
        ));
    }
    let ax = resolve_axis(axis, a.ndim())?;
    let last = a.ndim() - 1;
    let moved = if ax == last {
        a.view()
    } else {
        a.swap_axes(ax, last)?
    };
    let c = if moved.is_c_contiguous() {
        moved
    } else {
        moved.copy_order(Order::C)?
    };
    Ok((c, ax))
}

/// The inverse of [`axis_last`] on a result: the axis put back, C-contiguous.
pub(crate) fn axis_back<U: Element>(r: GpuArray<U>, ax: usize) -> Result<GpuArray<U>> {
    let last = r.ndim() - 1;
    if ax == last {
        Ok(r)
    } else {
        r.swap_axes(ax, last)?.copy_order(Order::C)
    }
}

/// Rows and row length of a C-contiguous array sorted along its last axis.
pub(crate) fn rows_of<T: Element>(a: &GpuArray<T>) -> (usize, usize) {
    let len = a.shape().last().copied().unwrap_or(1);
    (a.len().checked_div(len).unwrap_or(0), len)
}

impl<T: Element> GpuArray<T> {
    /// NumPy's `np.sort(a)`: a sorted copy along the last axis (each row of a 2-D array
    /// sorted on its own), ascending, NaNs last, `-0.0` before `+0.0`, stable. Integers,
    /// `bool`, `f16`, `bf16`, `f32` and `f64` sort; complex types are an error.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::GpuArray;
    /// let a = GpuArray::from_shape_slice(&stream, &[2, 3], &[3.0f32, f32::NAN, 1.0, 2.0, -0.0, -5.0])?;
    /// let s = a.sort()?.to_vec()?;
    /// assert_eq!(&s[..2], &[1.0, 3.0]);
    /// assert!(s[2].is_nan());
    /// assert_eq!(&s[3..], &[-5.0, -0.0, 2.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn sort(&self) -> Result<GpuArray<T>> {
        self.sort_axis(-1, super::SortOrder::Ascending)
    }

    /// A sorted copy along `axis` (negative counts from the end) in `order`; see
    /// [`GpuArray::sort`]. The result is C-contiguous, of this array's shape.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, sort::SortOrder};
    /// let a = GpuArray::from_shape_slice(&stream, &[2, 2], &[1i32, 4, 3, 2])?;
    /// assert_eq!(a.sort_axis(0, SortOrder::Descending)?.to_vec()?, vec![3, 4, 1, 2]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn sort_axis(&self, axis: isize, order: super::SortOrder) -> Result<GpuArray<T>> {
        KeyBits::of(T::DTYPE)?;
        let (src, ax) = axis_last(self, axis)?;
        let out = GpuArray::<T>::empty(src.stream(), src.shape())?;
        let (rows, row_len) = rows_of(&src);
        if row_len == 1 {
            return axis_back(src.copy_order(Order::C)?, ax);
        }
        {
            let stream = src.stream();
            SortJob {
                key: T::DTYPE,
                descending: order.descending(),
                input: src.memory().elements(src.nbytes())?,
                output: out.memory().elements(out.nbytes())?,
                values: Values::None,
                rows,
                row_len,
            }
            .run(stream)?;
        }
        axis_back(out, ax)
    }

    /// NumPy's `np.argsort(a, kind="stable")`: the `i64` positions along the last axis
    /// that sort each row (ascending, NaNs last).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::GpuArray;
    /// let a = GpuArray::from_slice(&stream, &[3u8, 1, 2, 1])?;
    /// assert_eq!(a.argsort()?.to_vec()?, vec![1, 3, 2, 0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn argsort(&self) -> Result<GpuArray<i64>> {
        self.argsort_axis(-1, super::SortOrder::Ascending)
    }

    /// The `i64` positions along `axis` that sort the array in `order` (stable).
    pub fn argsort_axis(&self, axis: isize, order: super::SortOrder) -> Result<GpuArray<i64>> {
        Ok(self.sort_with_positions(axis, order)?.1)
    }

    /// The sorted copy and the positions that sort it, along `axis` (one sort).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, sort::SortOrder};
    /// let a = GpuArray::from_slice(&stream, &[0.5f64, 2.0, 1.0])?;
    /// let (s, i) = a.sort_with_positions(-1, SortOrder::Descending)?;
    /// assert_eq!((s.to_vec()?, i.to_vec()?), (vec![2.0, 1.0, 0.5], vec![1, 2, 0]));
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn sort_with_positions(
        &self,
        axis: isize,
        order: super::SortOrder,
    ) -> Result<(GpuArray<T>, GpuArray<i64>)> {
        KeyBits::of(T::DTYPE)?;
        let (src, ax) = axis_last(self, axis)?;
        let stream = src.stream().clone();
        let (rows, row_len) = rows_of(&src);
        let keys = GpuArray::<T>::empty(&stream, src.shape())?;
        let positions = if row_len <= u32::MAX as usize {
            let pos = GpuArray::<u32>::empty(&stream, src.shape())?;
            self.positions_job(&src, &keys, &pos, order, rows, row_len)?;
            pos.astype::<i64>()?
        } else {
            let pos = GpuArray::<u64>::empty(&stream, src.shape())?;
            self.positions_job(&src, &keys, &pos, order, rows, row_len)?;
            pos.reinterpret::<i64>()?
        };
        Ok((axis_back(keys, ax)?, axis_back(positions, ax)?))
    }

    fn positions_job<P: Element>(
        &self,
        src: &GpuArray<T>,
        keys: &GpuArray<T>,
        pos: &GpuArray<P>,
        order: super::SortOrder,
        rows: usize,
        row_len: usize,
    ) -> Result<()> {
        if rows == 0 {
            return Ok(());
        }
        SortJob {
            key: T::DTYPE,
            descending: order.descending(),
            input: src.memory().elements(src.nbytes())?,
            output: keys.memory().elements(keys.nbytes())?,
            values: Values::Positions {
                output: pos.memory().elements(pos.nbytes())?,
                size: P::DTYPE.size_bytes(),
            },
            rows,
            row_len: row_len.max(1),
        }
        .run(src.stream())
    }

    /// Sorts `values` by this array's keys along `axis` (Thrust's `sort_by_key`, CUB's
    /// `SortPairs`): the sorted keys and the values in the same order (stable). `values`
    /// must have this array's shape; values of 1, 2, 4 or 8 bytes move with the keys.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, sort::SortOrder};
    /// let keys = GpuArray::from_slice(&stream, &[2u32, 1, 2, 0])?;
    /// let vals = GpuArray::from_slice(&stream, &[10.0f32, 11.0, 12.0, 13.0])?;
    /// let (k, v) = keys.sort_by_key(&vals, -1, SortOrder::Ascending)?;
    /// assert_eq!((k.to_vec()?, v.to_vec()?), (vec![0, 1, 2, 2], vec![13.0, 11.0, 10.0, 12.0]));
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn sort_by_key<V: Element>(
        &self,
        values: &GpuArray<V>,
        axis: isize,
        order: super::SortOrder,
    ) -> Result<(GpuArray<T>, GpuArray<V>)> {
        KeyBits::of(T::DTYPE)?;
        if self.context() != values.context() {
            return Err(ArrayError::ContextMismatch);
        }
        if values.shape() != self.shape() {
            return Err(crate::layout::LayoutError::BroadcastTo {
                from: values.shape().to_vec(),
                to: self.shape().to_vec(),
            }
            .into());
        }
        super::keys::value_c_type(V::DTYPE.size_bytes())?;
        let (src, ax) = axis_last(self, axis)?;
        let (vsrc, _) = axis_last(values, axis)?;
        let stream = src.stream().clone();
        before_on(&stream, &[vsrc.stream()])?;
        let (rows, row_len) = rows_of(&src);
        let keys = GpuArray::<T>::empty(&stream, src.shape())?;
        let vals = GpuArray::<V>::empty(&stream, src.shape())?;
        if rows > 0 {
            SortJob {
                key: T::DTYPE,
                descending: order.descending(),
                input: src.memory().elements(src.nbytes())?,
                output: keys.memory().elements(keys.nbytes())?,
                values: Values::Given {
                    input: vsrc.memory().elements(vsrc.nbytes())?,
                    output: vals.memory().elements(vals.nbytes())?,
                    size: V::DTYPE.size_bytes(),
                },
                rows,
                row_len,
            }
            .run(&stream)?;
        }
        after_on(&stream, &[vsrc.stream()])?;
        Ok((axis_back(keys, ax)?, axis_back(vals, ax)?))
    }
}
