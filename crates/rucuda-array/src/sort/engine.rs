//! Compiled sort kernels per context and their launches: the one-block-per-row sort and
//! the onesweep passes (histogram, offsets, one pass per digit), over contiguous rows.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rucuda_driver::{
    memset_d32_async, Access, ArgBuffer, DeviceBuffer, DevicePtr, DeviceRange, Function,
    LaunchConfig, Stream,
};

use super::render::{SortKernelSpec, SortModule};
use super::tuning::SortTuning;
use crate::compile::{default_compiler, load_kernel_list};
use crate::dtype::{DType, Element};
use crate::error::{ArrayError, Result};
use crate::scan::DeviceFacts;
use crate::GpuArray;

/// Elements of one onesweep chunk at most: look-back counts are 30-bit.
const CHUNK_LIMIT: usize = (1 << 30) - 1;

type Cache = Mutex<HashMap<(u64, SortKernelSpec), Arc<Vec<Function>>>>;

/// The kernels of `spec` loaded in the stream's context (compiled once per context).
pub(crate) fn kernels(stream: &Stream, spec: SortKernelSpec) -> Result<Arc<Vec<Function>>> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let ctx = stream.context();
    let key = (ctx.id(), spec);
    if let Some(k) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(Arc::clone(k));
    }
    let rendered = spec.render()?;
    let names: Vec<&str> = rendered.entries.iter().map(String::as_str).collect();
    let functions = load_kernel_list(&*default_compiler(), ctx, &rendered.source, &names)?;
    if spec.module == SortModule::Onesweep {
        // The digit pass's exchange buffer is dynamic shared memory: let it past 48 KiB
        // (the driver refuses a size the device cannot hold, with a typed error).
        functions[2].set_max_dynamic_shared_memory(onesweep_exchange_bytes(&spec))?;
    }
    let k = Arc::new(functions);
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, Arc::clone(&k));
    Ok(k)
}

/// Bytes of the onesweep digit pass's exchange buffer (its dynamic shared memory): a tile
/// of keys, or of values where they are wider.
fn onesweep_exchange_bytes(spec: &SortKernelSpec) -> u32 {
    let key_size = spec.key.size_bytes() as u32;
    spec.threads * spec.items * key_size.max(spec.value_size as u32)
}

/// The tuning for the stream's device (its memory bandwidth, shared memory and threads
/// per multiprocessor, asked of the driver once: [`DeviceFacts`]) with the environment's
/// overrides.
pub(crate) fn device_tuning(
    stream: &Stream,
    key_size: usize,
    value_size: usize,
) -> Result<SortTuning> {
    let facts = DeviceFacts::of(stream.context())?;
    Ok(SortTuning::from_env_for_device(
        key_size, value_size, &facts,
    ))
}

/// The values moving with the keys of a sort.
#[derive(Clone, Copy)]
pub(crate) enum Values<'a> {
    /// Keys only.
    None,
    /// Values read from `input` (contiguous, one per key) and written to `output`.
    Given {
        /// The values in key order.
        input: DeviceRange<'a>,
        /// Where the permuted values go.
        output: DeviceRange<'a>,
        /// Bytes per value (1, 2, 4 or 8).
        size: usize,
    },
    /// Each key's position in its row (unsigned, `size` bytes), written to `output`.
    Positions {
        /// Where the permuted positions go.
        output: DeviceRange<'a>,
        /// Bytes per position (4 or 8).
        size: usize,
    },
}

impl Values<'_> {
    fn size(&self) -> usize {
        match *self {
            Values::None => 0,
            Values::Given { size, .. } | Values::Positions { size, .. } => size,
        }
    }
}

/// One sort: `rows` contiguous rows of `row_len` keys of `key` at `input`, sorted into
/// `output` (disjoint, same size), values alongside.
pub(crate) struct SortJob<'a> {
    pub(crate) key: DType,
    pub(crate) descending: bool,
    pub(crate) input: DeviceRange<'a>,
    pub(crate) output: DeviceRange<'a>,
    pub(crate) values: Values<'a>,
    pub(crate) rows: usize,
    pub(crate) row_len: usize,
}

pub(crate) fn push_range<'a>(
    buf: &mut ArgBuffer<'a>,
    r: DeviceRange<'a>,
    stream: &Stream,
    access: Access,
) -> Result<()> {
    buf.push_use(r.use_on(stream, access)?);
    Ok(())
}

/// Pushes the whole of `a`'s memory (its elements from the first, `nbytes` long) as a
/// kernel argument used as `access` on `stream`.
pub(crate) fn push_array<'a, U: Element>(
    buf: &mut ArgBuffer<'a>,
    a: &'a GpuArray<U>,
    stream: &Stream,
    access: Access,
) -> Result<()> {
    push_range(buf, a.memory().elements(a.nbytes())?, stream, access)
}

pub(crate) fn too_big(what: &str, n: usize) -> ArrayError {
    ArrayError::InvalidArgument(format!("sort: {n} {what} do not fit one launch's grid"))
}

/// How a histogram-style kernel splits `segs` segments of `seg_len` keys over about
/// `target_blocks` blocks of `threads`: `(parts per segment, grid)`, at least one part
/// and no more parts than a segment has blocks of keys.
pub(crate) fn segment_parts(
    target_blocks: usize,
    segs: usize,
    seg_len: usize,
    threads: u32,
) -> Result<(usize, usize)> {
    let parts = target_blocks
        .div_ceil(segs.max(1))
        .clamp(1, seg_len.div_ceil(threads as usize).max(1));
    let grid = segs
        .checked_mul(parts)
        .filter(|g| *g <= i32::MAX as usize)
        .ok_or_else(|| too_big("blocks", segs))?;
    Ok((parts, grid))
}

impl<'a> SortJob<'a> {
    /// Queues the sort on `stream`.
    pub(crate) fn run(&self, stream: &Stream) -> Result<()> {
        let key_size = self.key.size_bytes();
        let value_size = self.values.size();
        let tuning = device_tuning(stream, key_size, value_size)?;
        tuning.check(key_size, value_size)?;
        if self.rows == 0 || self.row_len == 0 {
            return Ok(());
        }
        if self.row_len <= tuning.local_max {
            return self.run_block(stream, &tuning);
        }
        // Many rows: batches, so that the per-row digit tables (12 bytes per digit and
        // pass) stay within the tuning's budget.
        let per_row_table = key_size * 256 * 12;
        let batch = (tuning.table_budget / per_row_table).max(1);
        if self.row_len > CHUNK_LIMIT || self.rows <= batch {
            return self.run_onesweep(stream, &tuning);
        }
        let mut first = 0;
        while first < self.rows {
            let rows = batch.min(self.rows - first);
            let cut = |r: DeviceRange<'a>, size: usize| {
                r.sub(first * self.row_len * size, rows * self.row_len * size)
            };
            let values = match self.values {
                Values::None => Values::None,
                Values::Given {
                    input,
                    output,
                    size,
                } => Values::Given {
                    input: cut(input, size)?,
                    output: cut(output, size)?,
                    size,
                },
                Values::Positions { output, size } => Values::Positions {
                    output: cut(output, size)?,
                    size,
                },
            };
            SortJob {
                key: self.key,
                descending: self.descending,
                input: cut(self.input, key_size)?,
                output: cut(self.output, key_size)?,
                values,
                rows,
                row_len: self.row_len,
            }
            .run_onesweep(stream, &tuning)?;
            first += rows;
        }
        Ok(())
    }

    fn spec(
        &self,
        tuning: &SortTuning,
        threads: u32,
        items: u32,
        module: SortModule,
    ) -> SortKernelSpec {
        SortKernelSpec {
            key: self.key,
            descending: self.descending,
            value_size: self.values.size(),
            threads,
            items,
            module,
            peer_match: tuning.peer_match,
            min_blocks: if module == SortModule::Onesweep {
                tuning.min_blocks
            } else {
                0
            },
        }
    }

    fn push_values<'b>(&self, buf: &mut ArgBuffer<'b>, stream: &Stream) -> Result<i32>
    where
        'a: 'b,
    {
        match self.values {
            Values::None => {
                buf.push(0u64);
                buf.push(0u64);
                Ok(0)
            }
            Values::Given { input, output, .. } => {
                push_range(buf, input, stream, Access::Read)?;
                push_range(buf, output, stream, Access::Write)?;
                Ok(0)
            }
            Values::Positions { output, .. } => {
                buf.push(0u64);
                push_range(buf, output, stream, Access::Write)?;
                Ok(1)
            }
        }
    }

    fn run_block(&self, stream: &Stream, tuning: &SortTuning) -> Result<()> {
        let items = tuning.local_items(self.row_len);
        let spec = self.spec(tuning, tuning.local_threads, items, SortModule::Block);
        let k = kernels(stream, spec)?;
        let grid = u32::try_from(self.rows)
            .ok()
            .filter(|g| *g <= i32::MAX as u32)
            .ok_or_else(|| too_big("rows", self.rows))?;
        let mut buf = ArgBuffer::new();
        push_range(&mut buf, self.input, stream, Access::Read)?;
        push_range(&mut buf, self.output, stream, Access::Write)?;
        let gen = self.push_values(&mut buf, stream)?;
        buf.push(self.row_len as i64);
        buf.push(gen);
        // SAFETY: the kernel was generated for this key type and value size; block r
        // reads row r (row_len ≤ its tile) of `input` (rows × row_len keys) and of the
        // values, writes the same places of `output` and the values' output, all checked
        // by the caller to hold rows × row_len elements, outputs disjoint from inputs.
        unsafe { k[0].launch_args(LaunchConfig::linear(grid, spec.threads), stream, &buf)? };
        Ok(())
    }

    fn run_onesweep(&self, stream: &Stream, tuning: &SortTuning) -> Result<()> {
        let spec = self.spec(tuning, tuning.threads, tuning.items, SortModule::Onesweep);
        let k = kernels(stream, spec)?;
        let (histogram, offsets_k, onesweep) = (&k[0], &k[1], &k[2]);
        let passes = self.key.size_bytes();
        let tile = tuning.tile();
        let (rows, len) = (self.rows, self.row_len);
        // Chunks: parts of a row below the look-back's 30-bit counts, whole tiles each.
        let chunk_len = if len <= CHUNK_LIMIT {
            len
        } else {
            CHUNK_LIMIT / tile * tile
        };
        let per_row = len.div_ceil(chunk_len);
        let chunks = rows
            .checked_mul(per_row)
            .ok_or_else(|| too_big("chunks", usize::MAX))?;
        let sms = DeviceFacts::of(stream.context())?.multiprocessors as usize;

        let table = chunks * passes * 256;
        let mut hist = DeviceBuffer::<u32>::uninit_async(stream, table)?;
        let offsets = DeviceBuffer::<i64>::uninit_async(stream, table)?;

        // Launches over uniform chunks: (first element, chunk length, stride, count,
        // first chunk index, position of the chunk's first element in its row).
        let mut launches: Vec<(usize, usize, usize, usize, usize, usize)> = Vec::new();
        if per_row == 1 {
            launches.push((0, len, len, rows, 0, 0));
        } else {
            for r in 0..rows {
                for c in 0..per_row {
                    let start = c * chunk_len;
                    launches.push((
                        r * len + start,
                        chunk_len.min(len - start),
                        0,
                        1,
                        r * per_row + c,
                        start,
                    ));
                }
            }
        }

        // Digit counts per chunk, then each chunk's offsets. A row of one chunk is
        // counted once for every pass (its counts do not change as the passes move its
        // elements); a row of several chunks is counted again before each pass from
        // that pass's input, since a chunk holds other elements after every pass.
        let target_blocks = sms * tuning.hist_blocks_per_sm as usize;
        let count_and_offsets = |hist: &mut DeviceBuffer<u32>,
                                 offsets: &DeviceBuffer<i64>,
                                 keys: DeviceRange<'_>,
                                 twiddled: bool|
         -> Result<()> {
            memset_d32_async(hist, 0, table, stream)?;
            for &(first, seg_len, stride, segs, chunk0, _) in &launches {
                let (parts, grid) = segment_parts(target_blocks, segs, seg_len, tuning.threads)?;
                let mut buf = ArgBuffer::new();
                push_range(&mut buf, keys, stream, Access::Read)?;
                buf.push(first as i64);
                buf.push(seg_len as i64);
                buf.push(stride as i64);
                buf.push(parts as u32);
                buf.push(chunk0 as u32);
                buf.push_memory(&*hist, stream, Access::Write)?;
                buf.push(i32::from(twiddled));
                // SAFETY: reads the keys of `segs` chunks inside `keys` (first + (segs -
                // 1) × stride + seg_len ≤ rows × row_len) and adds into the histogram
                // table of chunks chunk0.., inside `hist` (chunks × passes × 256 words).
                unsafe {
                    histogram.launch_args(
                        LaunchConfig::linear(grid as u32, spec.threads),
                        stream,
                        &buf,
                    )?
                };
            }
            let grid = u32::try_from(rows)
                .ok()
                .filter(|g| *g <= i32::MAX as u32)
                .ok_or_else(|| too_big("rows", rows))?;
            let mut buf = ArgBuffer::new();
            buf.push_memory(&*hist, stream, Access::Read)?;
            buf.push_memory(offsets, stream, Access::Write)?;
            buf.push(per_row as u32);
            buf.push(len as i64);
            // SAFETY: block r reads and writes the tables of row r's chunks, inside both
            // buffers (chunks × passes × 256 entries).
            unsafe { offsets_k.launch_args(LaunchConfig::linear(grid, 256), stream, &buf)? };
            Ok(())
        };
        count_and_offsets(&mut hist, &offsets, self.input, false)?;

        // Ping-pong buffers: the last pass writes `output`.
        let tmp_keys = if passes > 1 {
            Some(DeviceBuffer::<u8>::uninit_async(
                stream,
                rows * len * self.key.size_bytes(),
            )?)
        } else {
            None
        };
        let value_size = self.values.size();
        let tmp_values = if passes > 1 && value_size > 0 {
            Some(DeviceBuffer::<u8>::uninit_async(
                stream,
                rows * len * value_size,
            )?)
        } else {
            None
        };
        let max_tiles = launches
            .iter()
            .map(|&(_, seg_len, _, segs, _, _)| segs * seg_len.div_ceil(tile))
            .max()
            .unwrap_or(0);
        if max_tiles > i32::MAX as usize {
            return Err(too_big("tiles", max_tiles));
        }
        let mut status = DeviceBuffer::<u32>::uninit_async(stream, max_tiles * 256)?;
        let mut counter = DeviceBuffer::<u32>::uninit_async(stream, 1)?;

        let (values_in, values_out) = match self.values {
            Values::None => (None, None),
            Values::Given { input, output, .. } => (Some(input), Some(output)),
            Values::Positions { output, .. } => (None, Some(output)),
        };
        // Where pass p writes: the output for the last pass and every second one before.
        let keys_dst = |p: usize| match &tmp_keys {
            Some(t) if (passes - 1 - p) % 2 == 1 => t.device_range(),
            _ => self.output,
        };
        let values_dst = |p: usize| match (&tmp_values, values_out) {
            (Some(t), Some(_)) if (passes - 1 - p) % 2 == 1 => Some(t.device_range()),
            (_, out) => out,
        };
        for pass in 0..passes {
            let keys_src = if pass == 0 {
                self.input
            } else {
                keys_dst(pass - 1)
            };
            let values_src = if pass == 0 {
                values_in
            } else {
                values_dst(pass - 1)
            };
            if pass > 0 && per_row > 1 {
                count_and_offsets(&mut hist, &offsets, keys_src, true)?;
            }
            let (keys_dst, values_dst) = (keys_dst(pass), values_dst(pass));
            let positions = matches!(self.values, Values::Positions { .. }) && pass == 0;
            let flags = i32::from(pass == 0)
                | (i32::from(pass + 1 == passes) << 1)
                | (i32::from(positions) << 2);
            for &(first, seg_len, stride, segs, chunk0, index_base) in &launches {
                let tiles_per_seg = seg_len.div_ceil(tile);
                let grid = segs * tiles_per_seg;
                memset_d32_async(&mut status, 0, grid * 256, stream)?;
                memset_d32_async(&mut counter, 0, 1, stream)?;
                let mut buf = ArgBuffer::new();
                push_range(&mut buf, keys_src, stream, Access::Read)?;
                push_range(&mut buf, keys_dst, stream, Access::Write)?;
                match values_src {
                    Some(v) => push_range(&mut buf, v, stream, Access::Read)?,
                    None => {
                        buf.push(0u64);
                    }
                }
                match values_dst {
                    Some(v) => push_range(&mut buf, v, stream, Access::Write)?,
                    None => {
                        buf.push(0u64);
                    }
                }
                buf.push(first as i64);
                buf.push(seg_len as i64);
                buf.push(stride as i64);
                buf.push(index_base as i64);
                buf.push(tiles_per_seg as u32);
                buf.push(chunk0 as u32);
                buf.push_memory(&offsets, stream, Access::Read)?;
                buf.push_memory(&status, stream, Access::Write)?;
                buf.push_memory(&counter, stream, Access::Write)?;
                buf.push(pass as i32);
                buf.push(flags);
                // SAFETY: the kernel reads the keys (and values) of `segs` chunks inside
                // the source buffers (rows × row_len elements each) and writes each one
                // exactly once into the destination buffers (same size, disjoint from the
                // sources: distinct allocations or the caller's disjoint arrays), at the
                // positions the offsets table (computed from the same keys) gives;
                // status words (grid × 256, zeroed) and the counter (zeroed) are its own.
                unsafe {
                    onesweep.launch_args(
                        LaunchConfig {
                            shared_mem_bytes: onesweep_exchange_bytes(&spec),
                            ..LaunchConfig::linear(grid as u32, spec.threads)
                        },
                        stream,
                        &buf,
                    )?
                };
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::segment_parts;

    #[test]
    fn segments_split_into_parts_that_fill_the_target_without_empty_blocks() {
        // 1 segment of 2^28 keys over 528 blocks: 528 parts.
        assert_eq!(segment_parts(528, 1, 1 << 28, 256).unwrap(), (528, 528));
        // 64 rows: 9 parts each (ceil(528 / 64)).
        assert_eq!(segment_parts(528, 64, 128_256, 256).unwrap(), (9, 576));
        // Short segments get no more parts than they have blocks of keys.
        assert_eq!(segment_parts(528, 2, 300, 256).unwrap(), (2, 4));
        assert_eq!(segment_parts(528, 4096, 10, 256).unwrap(), (1, 4096));
        // A grid past i32::MAX is refused.
        assert!(segment_parts(1, 1 << 31, 10, 256).is_err());
    }
}
