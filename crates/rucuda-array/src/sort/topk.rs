//! `topk`: the k largest (or smallest) elements along an axis with their positions, by
//! radix select (one pass per 8-bit digit narrows each row's k-th key; one block per row
//! gathers the chosen elements) and a sort of the k chosen per row.

use rucuda_driver::{
    memset_d32_async, Access, ArgBuffer, DeviceAttribute, DeviceBuffer, DevicePtr, LaunchConfig,
};

use super::api::{axis_back, axis_last, rows_of};
use super::engine::{device_tuning, kernels, push_range, segment_parts, too_big, SortJob, Values};
use super::keys::KeyBits;
use super::render::{SortKernelSpec, SortModule};
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::GpuArray;

impl<T: Element> GpuArray<T> {
    /// The `k` largest (`largest`) or smallest elements of each row along the last axis,
    /// sorted (largest first, or smallest first), with their `i64` positions in the row
    /// (PyTorch's `topk`; CuPy's `partition` + sort). Equal keys come in position order;
    /// NaNs count as the last elements in both orders (a row's NaNs are chosen only when
    /// it has fewer than `k` other elements). `k` larger than the axis is an error.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::GpuArray;
    /// let a = GpuArray::from_shape_slice(&stream, &[2, 4], &[1.0f32, 5.0, 3.0, 5.0, -1.0, -2.0, 0.0, 9.0])?;
    /// let (v, i) = a.topk(2, true)?;
    /// assert_eq!((v.to_vec()?, i.to_vec()?), (vec![5.0, 5.0, 9.0, 0.0], vec![1, 3, 3, 2]));
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn topk(&self, k: usize, largest: bool) -> Result<(GpuArray<T>, GpuArray<i64>)> {
        self.topk_axis(k, -1, largest)
    }

    /// [`GpuArray::topk`] along `axis`.
    pub fn topk_axis(
        &self,
        k: usize,
        axis: isize,
        largest: bool,
    ) -> Result<(GpuArray<T>, GpuArray<i64>)> {
        let key = KeyBits::of(T::DTYPE)?;
        let (src, ax) = axis_last(self, axis)?;
        let (rows, len) = rows_of(&src);
        if k > len {
            return Err(ArrayError::InvalidArgument(format!(
                "topk: k = {k} is more than the {len} elements along the axis"
            )));
        }
        let stream = src.stream().clone();
        let mut shape = src.shape().to_vec();
        if let Some(last) = shape.last_mut() {
            *last = k;
        }
        let values = GpuArray::<T>::empty(&stream, &shape)?;
        let positions = if len <= u32::MAX as usize {
            let pos = GpuArray::<u32>::empty(&stream, &shape)?;
            select_into(&src, &values, &pos, key, k, rows, len, largest)?;
            pos.astype::<i64>()?
        } else {
            let pos = GpuArray::<u64>::empty(&stream, &shape)?;
            select_into(&src, &values, &pos, key, k, rows, len, largest)?;
            pos.reinterpret::<i64>()?
        };
        Ok((axis_back(values, ax)?, axis_back(positions, ax)?))
    }
}

/// Selects the top `k` of each of `rows` rows of `len` keys of `src` (C-contiguous) into
/// `values` and `positions` (rows × k, fresh), sorted.
#[allow(clippy::too_many_arguments)]
fn select_into<T: Element, P: Element>(
    src: &GpuArray<T>,
    values: &GpuArray<T>,
    positions: &GpuArray<P>,
    key: KeyBits,
    k: usize,
    rows: usize,
    len: usize,
    largest: bool,
) -> Result<()> {
    if rows == 0 || k == 0 {
        return Ok(());
    }
    let stream = src.stream();
    let pos_size = P::DTYPE.size_bytes();
    let tuning = device_tuning(stream, T::DTYPE.size_bytes(), pos_size)?;
    tuning.check(T::DTYPE.size_bytes(), pos_size)?;
    let spec = SortKernelSpec {
        key: T::DTYPE,
        descending: largest,
        value_size: pos_size,
        threads: tuning.threads,
        items: tuning.items,
        module: SortModule::Select,
        peer_match: tuning.peer_match,
        min_blocks: 0,
    };
    let kern = kernels(stream, spec)?;
    let grid_rows = u32::try_from(rows)
        .ok()
        .filter(|g| *g <= i32::MAX as u32)
        .ok_or_else(|| too_big("rows", rows))?;
    // Per row: the digit counts and the finished-block counter (zeroed together), the k-th
    // key's prefix and how many keys equal to it remain to take (set by the first pass).
    let mut counts = DeviceBuffer::<u32>::uninit_async(stream, rows * 257)?;
    memset_d32_async(&mut counts, 0, rows * 257, stream)?;
    let hist = counts.device_range().sub(0, rows * 256 * 4)?;
    let done = counts.device_range().sub(rows * 256 * 4, rows * 4)?;
    let state = DeviceBuffer::<u64>::uninit_async(stream, 2 * rows)?;
    let pre = state.device_range().sub(0, rows * 8)?;
    let rem = state.device_range().sub(rows * 8, rows * 8)?;
    let input = src.memory().elements(src.nbytes())?;
    let sms = stream
        .context()
        .device()
        .attribute(DeviceAttribute::MultiprocessorCount)?
        .max(1) as usize;
    let (parts, grid) = segment_parts(
        sms * tuning.hist_blocks_per_sm as usize,
        rows,
        len,
        tuning.threads,
    )?;
    for pass in 0..key.passes() as i32 {
        let mut buf = ArgBuffer::new();
        push_range(&mut buf, input, stream, Access::Read)?;
        buf.push(len as i64);
        buf.push(parts as u32);
        buf.push(pass);
        buf.push(k as i64);
        push_range(&mut buf, hist, stream, Access::Write)?;
        push_range(&mut buf, done, stream, Access::Write)?;
        push_range(&mut buf, pre, stream, Access::Write)?;
        push_range(&mut buf, rem, stream, Access::Write)?;
        // SAFETY: block b reads part b % parts of row b / parts of `input` (rows × len
        // keys) and updates that row's entries of the four per-row tables (rows × 256
        // counts and rows counters, zeroed; rows prefixes and rows remainders, which the
        // first pass writes before any pass reads them), all sized here.
        unsafe {
            kern[0].launch_args(
                LaunchConfig::linear(grid as u32, spec.threads),
                stream,
                &buf,
            )?
        };
    }
    let gathered_keys = GpuArray::<T>::empty(stream, &[rows, k])?;
    let gathered_pos = GpuArray::<P>::empty(stream, &[rows, k])?;
    let (gk, gp) = (
        gathered_keys.memory().elements(gathered_keys.nbytes())?,
        gathered_pos.memory().elements(gathered_pos.nbytes())?,
    );
    {
        let mut buf = ArgBuffer::new();
        push_range(&mut buf, input, stream, Access::Read)?;
        buf.push(len as i64);
        buf.push(k as i64);
        push_range(&mut buf, pre, stream, Access::Read)?;
        push_range(&mut buf, rem, stream, Access::Read)?;
        push_range(&mut buf, gk, stream, Access::Write)?;
        push_range(&mut buf, gp, stream, Access::Write)?;
        // SAFETY: block r reads row r of `input` and writes exactly k keys and positions
        // into row r of the two rows × k outputs (the select passes left, per row, a
        // k-th key and a count of equal keys to take that add up to k).
        unsafe {
            kern[1].launch_args(LaunchConfig::linear(grid_rows, spec.threads), stream, &buf)?
        };
    }
    SortJob {
        key: T::DTYPE,
        descending: largest,
        input: gk,
        output: values.memory().elements(values.nbytes())?,
        values: Values::Given {
            input: gp,
            output: positions.memory().elements(positions.nbytes())?,
            size: pos_size,
        },
        rows,
        row_len: k,
    }
    .run(stream)
}
