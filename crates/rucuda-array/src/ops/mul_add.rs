//! The rest of PyCUDA's `GPUArray` surface that is one kernel each: `mul_add`
//! (`selffac * self + otherfac * other`) and `multi_take_put` (gathers from several
//! arrays scattered into several others, by two index lists).

use super::engine::{run, Arg};
use super::indexing_key::{IndexingKey, TakeMode};
use super::key::OpKey;
use super::take_axis::{contiguous, RaiseFlag};
use crate::dtype::Element;
use crate::elementwise::ScalarValue;
use crate::error::{ArrayError, Result};
use crate::layout::broadcast_shapes;
use crate::ordering::{after_on, before_on};
use crate::GpuArray;

/// Arrays per launch of `multi_take_put`.
const GROUP: usize = 8;

impl<T: Element> GpuArray<T> {
    /// PyCUDA's `mul_add`: `selffac * self + otherfac * other` in one kernel, the shapes
    /// broadcast (NumPy's rules), any layouts. Each product and the sum round as NumPy's
    /// would (no fused multiply-add); `f16`/`bf16` compute in `f32`; integers wrap;
    /// `bool` is refused.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::GpuArray;
    /// let x = GpuArray::from_slice(&stream, &[1.0f32, 2.0, 3.0])?;
    /// let y = GpuArray::from_slice(&stream, &[10.0f32, 20.0, 30.0])?;
    /// assert_eq!(x.mul_add(2.0, &y, 0.5)?.to_vec()?, vec![7.0, 14.0, 21.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn mul_add(&self, selffac: T, other: &GpuArray<T>, otherfac: T) -> Result<GpuArray<T>> {
        if self.context() != other.context() {
            return Err(ArrayError::ContextMismatch);
        }
        let shape = broadcast_shapes(self.shape(), other.shape())?;
        let stream = self.stream();
        let out = GpuArray::<T>::empty(stream, &shape)?;
        let homes = [other.stream()];
        before_on(stream, &homes)?;
        {
            let (a, b, o) = (self.as_ref(), other.as_ref(), out.as_ref());
            run(
                stream,
                OpKey::Indexing(IndexingKey::MulAdd { dtype: T::DTYPE }),
                &shape,
                &[
                    Arg::Scalar(ScalarValue::new(selffac)),
                    a.as_in(),
                    Arg::Scalar(ScalarValue::new(otherfac)),
                    b.as_in(),
                    o.as_out(),
                ],
            )?;
        }
        after_on(stream, &homes)?;
        Ok(out)
    }
}

/// PyCUDA's `multi_take_put`: for every array `k` and every `j`,
/// `out_k.flat[dest_indices[j]] = arrays_k.flat[src_offsets[k] + src_indices[j]]`, into
/// new arrays of shape `dest_shape` whose other elements are left uninitialized (as
/// PyCUDA's are). See [`multi_take_put_into`].
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// use rucuda_array::{ops::{multi_take_put, TakeMode}, GpuArray};
/// let a = GpuArray::from_slice(&stream, &[10i32, 11, 12, 13])?;
/// let b = GpuArray::from_slice(&stream, &[20i32, 21, 22, 23])?;
/// let dest = GpuArray::from_slice(&stream, &[1i64, 0])?;
/// let src = GpuArray::from_slice(&stream, &[0i64, 2])?;
/// let out = multi_take_put(&[&a, &b], &dest, &src, &[2], Some(&[1, 0]), TakeMode::Raise)?;
/// assert_eq!(out[0].to_vec()?, vec![13, 11]);
/// assert_eq!(out[1].to_vec()?, vec![22, 20]);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn multi_take_put<T: Element, I: Element>(
    arrays: &[&GpuArray<T>],
    dest_indices: &GpuArray<I>,
    src_indices: &GpuArray<I>,
    dest_shape: &[usize],
    src_offsets: Option<&[i64]>,
    mode: TakeMode,
) -> Result<Vec<GpuArray<T>>> {
    let outs: Vec<GpuArray<T>> = arrays
        .iter()
        .map(|_| GpuArray::<T>::empty(src_indices.stream(), dest_shape))
        .collect::<Result<_>>()?;
    let refs: Vec<&GpuArray<T>> = outs.iter().collect();
    multi_take_put_into(arrays, dest_indices, src_indices, &refs, src_offsets, mode)?;
    Ok(outs)
}

/// PyCUDA's `multi_take_put` with `out=`: `outs_k.flat[dest_indices[j]] =
/// arrays_k.flat[src_offsets[k] + src_indices[j]]`. Arrays are indexed flat in row-major
/// order; the index arrays are 1-D of one length and one integer type; the sources have
/// one length and the destinations another; `src_offsets` (default all 0) has one entry
/// per array. Out-of-range indices follow `mode` (`Raise`: the error names axis 0 and
/// the destination length for a bad destination index, the source length for a bad
/// source index plus offset). Runs on `src_indices`' home stream; non-contiguous
/// destinations are written through contiguous copies. Repeated destination indices:
/// one of the values lands (for elements wider than 8 bytes or aligned to less than
/// their size, each aligned word comes from one of them), with relaxed gpu-scope stores, so no data race (see
/// [`GpuArray::put`](crate::GpuArray::put)).
pub fn multi_take_put_into<T: Element, I: Element>(
    arrays: &[&GpuArray<T>],
    dest_indices: &GpuArray<I>,
    src_indices: &GpuArray<I>,
    outs: &[&GpuArray<T>],
    src_offsets: Option<&[i64]>,
    mode: TakeMode,
) -> Result<()> {
    if outs.len() != arrays.len() {
        return Err(ArrayError::InvalidArgument(format!(
            "multi_take_put got {} arrays and {} outputs",
            arrays.len(),
            outs.len()
        )));
    }
    if src_indices.ndim() != 1 || dest_indices.shape() != src_indices.shape() {
        return Err(ArrayError::InvalidArgument(format!(
            "multi_take_put needs 1-D index arrays of one shape, got {:?} and {:?}",
            dest_indices.shape(),
            src_indices.shape()
        )));
    }
    let zeros = vec![0i64; arrays.len()];
    let offsets = src_offsets.unwrap_or(&zeros);
    if offsets.len() != arrays.len() {
        return Err(ArrayError::LengthMismatch {
            device: arrays.len(),
            host: offsets.len(),
        });
    }
    let (Some(first), Some(first_out)) = (arrays.first(), outs.first()) else {
        return Ok(());
    };
    let (src_len, dst_len) = (first.len(), first_out.len());
    let ctx = src_indices.context();
    for (a, o) in arrays.iter().zip(outs) {
        if a.context() != ctx || o.context() != ctx || dest_indices.context() != ctx {
            return Err(ArrayError::ContextMismatch);
        }
        if a.len() != src_len {
            return Err(ArrayError::LengthMismatch {
                device: src_len,
                host: a.len(),
            });
        }
        if o.len() != dst_len {
            return Err(ArrayError::LengthMismatch {
                device: dst_len,
                host: o.len(),
            });
        }
        crate::convert::check_writable(o.layout())?;
    }
    let n = src_indices.len();
    if n == 0 {
        return Ok(());
    }
    if src_len == 0 || dst_len == 0 {
        return Err(ArrayError::InvalidArgument(
            "multi_take_put with a non-empty index list and empty arrays".into(),
        ));
    }
    let stream = src_indices.stream();
    let dsts: Vec<GpuArray<T>> = outs.iter().map(|o| contiguous(o)).collect::<Result<_>>()?;
    // Sources and indices sharing memory with a destination are copied first.
    let copy_if_shared = |a: &GpuArray<T>| -> Result<GpuArray<T>> {
        if outs.iter().any(|o| a.shares_buffer_with(o)) {
            crate::convert::contiguous_copy(a)
        } else {
            contiguous(a)
        }
    };
    let srcs: Vec<GpuArray<T>> = arrays
        .iter()
        .map(|a| copy_if_shared(a))
        .collect::<Result<_>>()?;
    let index_copy = |a: &GpuArray<I>| -> Result<GpuArray<I>> {
        if outs.iter().any(|o| a.shares_buffer_with(o)) {
            crate::convert::contiguous_copy(a)
        } else {
            Ok(a.view())
        }
    };
    let (didx, sidx) = (index_copy(dest_indices)?, index_copy(src_indices)?);
    let mut homes: Vec<&rucuda_driver::Stream> = srcs.iter().map(|s| s.stream()).collect();
    homes.extend(dsts.iter().map(|d| d.stream()));
    homes.push(didx.stream());
    let flag = RaiseFlag::new(stream, mode, 2)?;
    before_on(stream, &homes)?;
    for ((ss, ds), offs) in srcs
        .chunks(GROUP)
        .zip(dsts.chunks(GROUP))
        .zip(offsets.chunks(GROUP))
    {
        let key = IndexingKey::TakePut {
            dtype: T::DTYPE,
            index: I::DTYPE,
            mode,
            arrays: ss.len() as u8,
        };
        let (d, s) = (didx.as_ref(), sidx.as_ref());
        let mut args = vec![
            d.as_in(),
            s.as_in(),
            Arg::Scalar(ScalarValue::new(src_len as i64)),
            Arg::Scalar(ScalarValue::new(dst_len as i64)),
        ];
        args.extend(ss.iter().map(|a| Arg::Whole { mem: a.memory() }));
        args.extend(offs.iter().map(|&o| Arg::Scalar(ScalarValue::new(o))));
        args.extend(ds.iter().map(|a| Arg::WholeOut { mem: a.memory() }));
        args.extend(flag.arg());
        run(stream, OpKey::Indexing(key), src_indices.shape(), &args)?;
    }
    after_on(stream, &homes)?;
    for (d, o) in dsts.iter().zip(outs) {
        if !o.is_c_contiguous() {
            o.copy_from(d)?;
        }
    }
    flag.check(&[(0, dst_len), (0, src_len)])
}
