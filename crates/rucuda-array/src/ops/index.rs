//! Gathers and scatters by index arrays: PyCUDA's `take`, `multi_take` and `multi_put`,
//! and NumPy's `put`. Arrays are indexed flat, in row-major order; indices may be any
//! integer type and any layout. Out-of-range indices follow an [`IndexMode`] (clip by
//! default), so a kernel never touches memory outside the array.
//!
//! Several indices naming one destination element in a `put`: one of the values lands
//! there, which one is unspecified (NumPy: the last); for elements wider than 8 bytes
//! (`Complex<f64>`, 16-byte vectors, `Float3`, structs) each aligned word comes from one
//! of them, so such an element may mix words of different values. The same holds for
//! elements aligned to less than their size (`Complex<f32>`: two 4-byte words; `Short2`,
//! `Char3`, structs of bytes), whose aligned words are narrower. This is no data race:
//! every scatter kernel writes with relaxed gpu-scope stores (`st.relaxed.gpu`) of the
//! element's aligned 8-, 4-, 2- or 1-byte words (`cuda/scatter_store.cuh`), which the
//! PTX memory model allows to conflict; before sm_70, whose PTX has no scopes, they are
//! volatile stores. With unique indices they cost what plain stores cost (one store per
//! word, no atomics, no fences).

use super::engine::{run, Arg};
use super::key::{IndexMode, OpKey};
use crate::convert::contiguous_copy;
use crate::dtype::Element;
use crate::elementwise::ScalarValue;
use crate::error::{ArrayError, Result};
use crate::layout::broadcast_shapes;
use crate::ordering::{after_on, before_on};
use crate::GpuArray;

/// Arrays per launch of the multi forms.
const GROUP: usize = 8;

fn same_context<T: Element, U: Element>(a: &GpuArray<T>, b: &GpuArray<U>) -> Result<()> {
    if a.context() != b.context() {
        return Err(ArrayError::ContextMismatch);
    }
    Ok(())
}

/// A contiguous version of `a` (itself when already contiguous).
fn contiguous<T: Element>(a: &GpuArray<T>) -> Result<GpuArray<T>> {
    if a.is_c_contiguous() {
        Ok(a.view())
    } else {
        contiguous_copy(a)
    }
}

impl<T: Element> GpuArray<T> {
    /// PyCUDA's `take`: `out[j] = self.flat[indices[j]]`, shaped like `indices`.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{ops::IndexMode, GpuArray};
    /// let a = GpuArray::from_slice(&stream, &[10u16, 11, 12, 13])?;
    /// let idx = GpuArray::from_slice(&stream, &[3i32, 0, -1, 9])?;
    /// assert_eq!(a.take(&idx, IndexMode::Wrap)?.to_vec()?, vec![13, 10, 13, 11]);
    /// assert_eq!(a.take(&idx, IndexMode::Clip)?.to_vec()?, vec![13, 10, 10, 13]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn take<I: Element>(&self, indices: &GpuArray<I>, mode: IndexMode) -> Result<Self> {
        let mut v = multi_take(&[self], indices, mode)?;
        v.pop()
            .ok_or_else(|| ArrayError::InvalidArgument("take produced no array".into()))
    }

    /// NumPy's `put`: `self.flat[indices[j]] = values[j]`, with `values` broadcast to
    /// the shape of `indices`. Non-contiguous destinations are updated through a
    /// contiguous copy.
    ///
    /// Several indices naming one element: one of the values lands there, which one is
    /// unspecified (NumPy: the last). For elements wider than 8 bytes (`Complex<f64>`,
    /// 16-byte vectors, `Float3`, structs) each aligned 8-, 4-, 2- or 1-byte word comes
    /// from one of the values, so such an element may mix words of different values;
    /// so may elements aligned to less than their size (`Complex<f32>` is two 4-byte
    /// words, `Char3` three bytes). The writes are no data race: scatters store with relaxed gpu-scope stores
    /// (`st.relaxed.gpu`, volatile stores before sm_70) of those words, which the PTX
    /// memory model lets conflict. (The same holds for [`multi_put`],
    /// [`GpuArray::put_axis`] and [`multi_take_put`](super::multi_take_put).)
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{ops::IndexMode, GpuArray};
    /// let a = GpuArray::<f32>::zeros(&stream, &[5])?;
    /// let idx = GpuArray::from_slice(&stream, &[4u8, 1])?;
    /// a.put(&idx, &GpuArray::from_slice(&stream, &[7.0f32, 8.0])?, IndexMode::Clip)?;
    /// assert_eq!(a.to_vec()?, vec![0.0, 8.0, 0.0, 0.0, 7.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn put<I: Element>(
        &self,
        indices: &GpuArray<I>,
        values: &GpuArray<T>,
        mode: IndexMode,
    ) -> Result<()> {
        multi_put(&[values], indices, &[self], mode)
    }
}

/// PyCUDA's `multi_take`: `out_k[j] = arrays_k.flat[indices[j]]` for every array (all of
/// one length), each result shaped like `indices`, several arrays per launch. Runs on
/// `indices`' home stream.
pub fn multi_take<T: Element, I: Element>(
    arrays: &[&GpuArray<T>],
    indices: &GpuArray<I>,
    mode: IndexMode,
) -> Result<Vec<GpuArray<T>>> {
    let Some(first) = arrays.first() else {
        return Ok(Vec::new());
    };
    let len = first.len();
    for a in arrays {
        same_context(a, indices)?;
        if a.len() != len {
            return Err(ArrayError::LengthMismatch {
                device: len,
                host: a.len(),
            });
        }
    }
    if len == 0 && !indices.is_empty() {
        return Err(ArrayError::InvalidArgument(
            "cannot take from an empty array".into(),
        ));
    }
    let stream = indices.stream();
    let sources: Vec<GpuArray<T>> = arrays
        .iter()
        .map(|a| contiguous(a))
        .collect::<Result<_>>()?;
    let outs: Vec<GpuArray<T>> = sources
        .iter()
        .map(|_| GpuArray::<T>::empty(stream, indices.shape()))
        .collect::<Result<_>>()?;
    let homes: Vec<&rucuda_driver::Stream> = sources.iter().map(|s| s.stream()).collect();
    before_on(stream, &homes)?;
    for (srcs, dsts) in sources.chunks(GROUP).zip(outs.chunks(GROUP)) {
        let key = OpKey::Take {
            dtype: T::DTYPE,
            index: I::DTYPE,
            mode,
            arrays: srcs.len() as u8,
        };
        let idx = indices.as_ref();
        let mut args = vec![idx.as_in(), Arg::Scalar(ScalarValue::new(len as i64))];
        args.extend(srcs.iter().map(|s| Arg::Whole { mem: s.memory() }));
        let refs: Vec<_> = dsts.iter().map(|d| d.as_ref()).collect();
        args.extend(refs.iter().map(|r| r.as_out()));
        run(stream, key, indices.shape(), &args)?;
    }
    after_on(stream, &homes)?;
    Ok(outs)
}

/// PyCUDA's `multi_put` (and NumPy's `put` for several arrays):
/// `outs_k.flat[indices[j]] = values_k[j]`, `values_k` broadcast to the shape of
/// `indices`, every destination of one length, several arrays per launch. Runs on the
/// first destination's home stream. Repeated indices: one of the values lands (each
/// aligned word of one, for elements wider than 8 bytes or aligned to less than their
/// size; see [`GpuArray::put`]).
pub fn multi_put<T: Element, I: Element>(
    values: &[&GpuArray<T>],
    indices: &GpuArray<I>,
    outs: &[&GpuArray<T>],
    mode: IndexMode,
) -> Result<()> {
    if values.len() != outs.len() {
        return Err(ArrayError::InvalidArgument(format!(
            "multi_put got {} value arrays and {} destinations",
            values.len(),
            outs.len()
        )));
    }
    let Some(first) = outs.first() else {
        return Ok(());
    };
    let len = first.len();
    for (v, o) in values.iter().zip(outs) {
        same_context(v, indices)?;
        same_context(o, indices)?;
        if o.len() != len {
            return Err(ArrayError::LengthMismatch {
                device: len,
                host: o.len(),
            });
        }
        if broadcast_shapes(v.shape(), indices.shape())? != indices.shape() {
            return Err(crate::layout::LayoutError::BroadcastTo {
                from: v.shape().to_vec(),
                to: indices.shape().to_vec(),
            }
            .into());
        }
        crate::convert::check_writable(o.layout())?;
    }
    if len == 0 && !indices.is_empty() {
        return Err(ArrayError::InvalidArgument(
            "cannot put into an empty array".into(),
        ));
    }
    let stream = first.stream();
    // Destinations are written flat: non-contiguous ones through contiguous copies.
    let dsts: Vec<GpuArray<T>> = outs.iter().map(|o| contiguous(o)).collect::<Result<_>>()?;
    // Values or indices sharing memory with a destination are copied first.
    let vals: Vec<GpuArray<T>> = values
        .iter()
        .map(|v| {
            if outs.iter().any(|o| v.shares_buffer_with(o)) {
                contiguous_copy(v)
            } else {
                Ok(v.view())
            }
        })
        .collect::<Result<_>>()?;
    let idx_copy;
    let indices = if outs.iter().any(|o| indices.shares_buffer_with(o)) {
        idx_copy = contiguous_copy(indices)?;
        &idx_copy
    } else {
        indices
    };
    let mut homes: Vec<&rucuda_driver::Stream> = vals.iter().map(|v| v.stream()).collect();
    homes.push(indices.stream());
    homes.extend(dsts.iter().map(|d| d.stream()));
    before_on(stream, &homes)?;
    for (vs, ds) in vals.chunks(GROUP).zip(dsts.chunks(GROUP)) {
        let key = OpKey::Put {
            dtype: T::DTYPE,
            index: I::DTYPE,
            mode,
            arrays: vs.len() as u8,
        };
        let idx = indices.as_ref();
        let mut args = vec![idx.as_in(), Arg::Scalar(ScalarValue::new(len as i64))];
        let vrefs: Vec<_> = vs.iter().map(|v| v.as_ref()).collect();
        args.extend(vrefs.iter().map(|r| r.as_in()));
        args.extend(ds.iter().map(|d| Arg::WholeOut { mem: d.memory() }));
        run(stream, key, indices.shape(), &args)?;
    }
    after_on(stream, &homes)?;
    for (d, o) in dsts.iter().zip(outs) {
        if !o.is_c_contiguous() {
            o.copy_from(d)?;
        }
    }
    Ok(())
}
