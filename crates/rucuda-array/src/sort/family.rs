//! NumPy's `searchsorted`, `unique` (with first indices, inverse and counts) and
//! run-length encoding (CUB's `DeviceRunLengthEncode::Encode`), over keys in the sort
//! order (NaNs last and all alike) comparing values as NumPy does: `-0.0` and `+0.0` are
//! one value here (the sort itself puts `-0.0` first).

use rucuda_driver::{Access, ArgBuffer, LaunchConfig, Stream};

use super::engine::{kernels, push_array, push_range};
use super::keys::KeyBits;
use super::render::{SortKernelSpec, SortModule};
use super::SortOrder;
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::layout::SliceArg;
use crate::scan::cumsum_kernel;
use crate::GpuArray;

const THREADS: u32 = 256;

/// Which side [`GpuArray::searchsorted`] returns for equal keys (NumPy's `side`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Side {
    /// The first position not below the query.
    #[default]
    Left,
    /// The first position above the query.
    Right,
}

/// NumPy's `unique(..., return_index, return_inverse, return_counts)`, all at once.
#[derive(Debug)]
pub struct Unique<T: Element> {
    /// The distinct values, ascending (NaNs collapsed into one, last).
    pub values: GpuArray<T>,
    /// The position of each value's first occurrence in the flattened input.
    pub first_indices: GpuArray<i64>,
    /// For each input element (flattened), the index of its value in `values`.
    pub inverse: GpuArray<i64>,
    /// How many times each value occurs.
    pub counts: GpuArray<i64>,
}

fn family(
    stream: &Stream,
    dtype: crate::DType,
) -> Result<std::sync::Arc<Vec<rucuda_driver::Function>>> {
    kernels(
        stream,
        SortKernelSpec {
            key: dtype,
            descending: false,
            value_size: 0,
            threads: THREADS,
            items: 1,
            module: SortModule::Family,
            peer_match: super::PeerMatch::MatchAny,
            min_blocks: 0,
        },
    )
}

fn grid(n: usize) -> u32 {
    n.div_ceil(THREADS as usize).clamp(1, 65_535 * 16) as u32
}

/// A C-contiguous 1-D view (or copy) of `a`'s elements in row-major order.
fn flat<T: Element>(a: &GpuArray<T>) -> Result<GpuArray<T>> {
    let f = a.ravel()?;
    if f.is_c_contiguous() {
        Ok(f)
    } else {
        f.copy()
    }
}

/// The runs of equal keys of contiguous `keys`: their values, starts (positions in
/// `keys`), counts; with `perm` (the positions of a sort), first indices and the inverse.
struct Runs<T: Element> {
    values: GpuArray<T>,
    counts: GpuArray<i64>,
    first: Option<GpuArray<i64>>,
    inverse: Option<GpuArray<i64>>,
}

fn runs<T: Element>(keys: &GpuArray<T>, perm: Option<&GpuArray<i64>>) -> Result<Runs<T>> {
    let stream = keys.stream().clone();
    let n = keys.len();
    let k = family(&stream, T::DTYPE)?;
    let mut run = GpuArray::<i64>::empty(&stream, &[n])?;
    let kr = keys.memory().elements(keys.nbytes())?;
    if n > 0 {
        {
            let mut buf = ArgBuffer::new();
            push_range(&mut buf, kr, &stream, Access::Read)?;
            buf.push(n as i64);
            push_array(&mut buf, &run, &stream, Access::Write)?;
            // SAFETY: reads n keys, writes n flags, both arrays of n elements.
            unsafe { k[1].launch_args(LaunchConfig::linear(grid(n), THREADS), &stream, &buf)? };
        }
        cumsum_kernel(crate::DType::I64)?.call_in_place(&stream, &mut run)?;
    }
    let total = if n == 0 {
        0
    } else {
        run.slice(&[SliceArg::range(n as isize - 1, n as isize)])?
            .to_vec()?
            .first()
            .copied()
            .unwrap_or(0)
    };
    let total =
        usize::try_from(total).map_err(|_| ArrayError::InvalidArgument("run count".into()))?;
    let values = GpuArray::<T>::empty(&stream, &[total])?;
    let starts = GpuArray::<i64>::empty(&stream, &[total])?;
    let counts = GpuArray::<i64>::empty(&stream, &[total])?;
    let first = match perm {
        Some(_) => Some(GpuArray::<i64>::empty(&stream, &[total])?),
        None => None,
    };
    let inverse = match perm {
        Some(_) => Some(GpuArray::<i64>::empty(&stream, &[n])?),
        None => None,
    };
    if n > 0 {
        let mut buf = ArgBuffer::new();
        push_range(&mut buf, kr, &stream, Access::Read)?;
        buf.push(n as i64);
        push_array(&mut buf, &run, &stream, Access::Read)?;
        match perm {
            Some(p) => push_range(
                &mut buf,
                p.memory().elements(p.nbytes())?,
                &stream,
                Access::Read,
            )?,
            None => {
                buf.push(0u64);
            }
        }
        buf.push(total as i64);
        push_array(&mut buf, &values, &stream, Access::Write)?;
        push_array(&mut buf, &starts, &stream, Access::Write)?;
        for out in [&first, &inverse] {
            match out {
                Some(o) => push_range(
                    &mut buf,
                    o.memory().elements(o.nbytes())?,
                    &stream,
                    Access::Write,
                )?,
                None => {
                    buf.push(0u64);
                }
            }
        }
        // SAFETY: reads n keys, n run numbers and (given) n positions; writes run r's
        // entries only for 0 ≤ r < total (the arrays of `total` elements) and the inverse
        // only at positions below n (an array of n elements).
        unsafe { k[2].launch_args(LaunchConfig::linear(grid(n), THREADS), &stream, &buf)? };
        let mut buf = ArgBuffer::new();
        push_array(&mut buf, &starts, &stream, Access::Read)?;
        buf.push(total as i64);
        buf.push(n as i64);
        push_array(&mut buf, &counts, &stream, Access::Write)?;
        // SAFETY: reads and writes `total` elements of arrays of `total` elements.
        unsafe { k[3].launch_args(LaunchConfig::linear(grid(total), THREADS), &stream, &buf)? };
    }
    Ok(Runs {
        values,
        counts,
        first,
        inverse,
    })
}

impl<T: Element> GpuArray<T> {
    /// NumPy's `np.searchsorted(a, v, side)`: for each query in `queries` (any shape and
    /// layout), the position in this sorted 1-D array where it would be inserted to keep
    /// the order (`i64`, of `queries`' shape). The array must be sorted ascending in the
    /// sort order of [`GpuArray::sort`] (NaNs last); it is not checked.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, sort::Side};
    /// let a = GpuArray::from_slice(&stream, &[1.0f32, 2.0, 2.0, 3.0])?;
    /// let q = GpuArray::from_slice(&stream, &[2.0f32, 0.0, 9.0])?;
    /// assert_eq!(a.searchsorted(&q, Side::Left)?.to_vec()?, vec![1, 0, 4]);
    /// assert_eq!(a.searchsorted(&q, Side::Right)?.to_vec()?, vec![3, 0, 4]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn searchsorted(&self, queries: &GpuArray<T>, side: Side) -> Result<GpuArray<i64>> {
        KeyBits::of(T::DTYPE)?;
        if self.ndim() != 1 {
            return Err(ArrayError::InvalidArgument(format!(
                "searchsorted needs a 1-D sorted array, not one of shape {:?}",
                self.shape()
            )));
        }
        if self.context() != queries.context() {
            return Err(ArrayError::ContextMismatch);
        }
        let stream = self.stream().clone();
        let sorted = flat(self)?;
        // A copy of the queries is made on their stream: wait for it.
        let q = flat(queries)?;
        crate::ordering::before_on(&stream, &[q.stream()])?;
        let out = GpuArray::<i64>::empty(&stream, queries.shape())?;
        let m = q.len();
        if m > 0 {
            let k = family(&stream, T::DTYPE)?;
            let mut buf = ArgBuffer::new();
            push_array(&mut buf, &sorted, &stream, Access::Read)?;
            buf.push(sorted.len() as i64);
            push_array(&mut buf, &q, &stream, Access::Read)?;
            buf.push(m as i64);
            push_array(&mut buf, &out, &stream, Access::Write)?;
            buf.push(i32::from(side == Side::Right));
            // SAFETY: reads positions below n of the n sorted keys and m queries; writes
            // m results into an array of m elements.
            unsafe { k[0].launch_args(LaunchConfig::linear(grid(m), THREADS), &stream, &buf)? };
        }
        crate::ordering::after_on(&stream, &[queries.stream(), q.stream()])?;
        Ok(out)
    }

    /// NumPy's `np.unique(a)`: the distinct values of the flattened array, ascending
    /// (NaNs collapsed into one, last). Waits for the stream (the result's size).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[3i32, 1, 3, 2, 1])?;
    /// assert_eq!(a.unique()?.to_vec()?, vec![1, 2, 3]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn unique(&self) -> Result<GpuArray<T>> {
        KeyBits::of(T::DTYPE)?;
        let sorted = flat(self)?.sort()?;
        Ok(runs(&sorted, None)?.values)
    }

    /// NumPy's `np.unique(a, return_index=True, return_inverse=True,
    /// return_counts=True)` on the flattened array. Waits for the stream.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[3i32, 1, 3, 2, 1])?;
    /// let u = a.unique_all()?;
    /// assert_eq!(u.values.to_vec()?, vec![1, 2, 3]);
    /// assert_eq!(u.first_indices.to_vec()?, vec![1, 3, 0]);
    /// assert_eq!(u.inverse.to_vec()?, vec![2, 0, 2, 1, 0]);
    /// assert_eq!(u.counts.to_vec()?, vec![2, 1, 2]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn unique_all(&self) -> Result<Unique<T>> {
        KeyBits::of(T::DTYPE)?;
        let (sorted, perm) = flat(self)?.sort_with_positions(-1, SortOrder::Ascending)?;
        let r = runs(&sorted, Some(&perm))?;
        let missing = || ArrayError::InvalidArgument("unique: missing output".into());
        Ok(Unique {
            values: r.values,
            first_indices: r.first.ok_or_else(missing)?,
            inverse: r.inverse.ok_or_else(missing)?,
            counts: r.counts,
        })
    }

    /// Run-length encoding of the flattened array (CUB's `DeviceRunLengthEncode`): the
    /// value of each run of equal consecutive elements and its length (NaNs alike).
    /// Waits for the stream.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[7u8, 7, 1, 7, 7, 7])?;
    /// let (v, n) = a.run_length_encode()?;
    /// assert_eq!((v.to_vec()?, n.to_vec()?), (vec![7, 1, 7], vec![2, 1, 3]));
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn run_length_encode(&self) -> Result<(GpuArray<T>, GpuArray<i64>)> {
        KeyBits::of(T::DTYPE)?;
        let r = runs(&flat(self)?, None)?;
        Ok((r.values, r.counts))
    }
}
