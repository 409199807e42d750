//! Where results' memory comes from: PyCUDA's `allocator=` argument, as the
//! [`ArrayAllocator`] trait. The whole-array reductions take one in their `_with` forms
//! (`sum_with`, `max_with`, ...; see `reduce_with.rs`).
//!
//! - [`StreamOrdered`]: what every operation does by default, a stream-ordered
//!   allocation from the device's current memory pool.
//! - [`ArenaAllocator`]: many small results carved out of a few large chunks (the
//!   reason PyCUDA code passes a pool's `allocate`): one driver allocation serves many
//!   reduction results; a chunk is freed once every array carved from it is gone.
//!
//! Your own allocator implements [`ArrayAllocator::empty`] (for example handing out views
//! of arrays it keeps).

use std::sync::Mutex;

use rucuda_driver::Stream;

use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::layout::Layout;
use crate::GpuArray;

/// A source of result arrays (PyCUDA's `allocator=`).
pub trait ArrayAllocator {
    /// A new row-major array of `shape` for work on `stream`; contents unspecified.
    fn empty<T: Element>(&self, stream: &Stream, shape: &[usize]) -> Result<GpuArray<T>>;
}

/// Stream-ordered allocations from the device's current pool (the default of every
/// operation).
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// use rucuda_array::{allocator::{ArrayAllocator, StreamOrdered}, GpuArray};
/// let a: GpuArray<f32> = StreamOrdered.empty(&stream, &[4])?;
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct StreamOrdered;

impl ArrayAllocator for StreamOrdered {
    fn empty<T: Element>(&self, stream: &Stream, shape: &[usize]) -> Result<GpuArray<T>> {
        GpuArray::empty(stream, shape)
    }
}

/// Byte alignment of every array an [`ArenaAllocator`] hands out (as `cuMemAlloc`'s).
const ARENA_ALIGN: usize = 256;

/// Arrays carved out of large chunks: one driver allocation per `chunk_bytes` (or per
/// array larger than that), each array aligned to 256 bytes. Arrays keep their chunk
/// alive; a chunk is freed when the arena has moved on and its last array is dropped.
/// Arrays from one chunk share its use log, so work on them is ordered as work on views
/// of one array is (correct, possibly less concurrent across streams).
///
/// ```no_run
/// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
/// use rucuda_array::{allocator::ArenaAllocator, GpuArray};
/// let arena = ArenaAllocator::new(1 << 20);
/// let x = GpuArray::<f32>::arange(&stream, 0.0, 100.0, 1.0)?;
/// let sums: Vec<GpuArray<f32>> = (0..10).map(|_| x.sum_with(&arena)).collect::<Result<_, _>>()?;
/// assert_eq!(sums[9].to_scalar()?, 4950.0);
/// assert_eq!(arena.chunks_allocated(), 1);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
#[derive(Debug)]
pub struct ArenaAllocator {
    chunk_bytes: usize,
    state: Mutex<ArenaState>,
}

#[derive(Debug, Default)]
struct ArenaState {
    /// The chunk being carved and the bytes used in it.
    current: Option<(GpuArray<u8>, usize)>,
    chunks: usize,
}

impl ArenaAllocator {
    /// An arena allocating chunks of `chunk_bytes` (at least 256) when it needs them.
    pub fn new(chunk_bytes: usize) -> ArenaAllocator {
        ArenaAllocator {
            chunk_bytes: chunk_bytes.max(ARENA_ALIGN),
            state: Mutex::new(ArenaState::default()),
        }
    }

    /// Driver allocations made so far.
    pub fn chunks_allocated(&self) -> usize {
        self.state.lock().map(|s| s.chunks).unwrap_or(0)
    }
}

impl ArrayAllocator for ArenaAllocator {
    fn empty<T: Element>(&self, stream: &Stream, shape: &[usize]) -> Result<GpuArray<T>> {
        let size = T::DTYPE.size_bytes();
        let len = crate::layout::element_count(shape)?;
        let bytes = len
            .checked_mul(size)
            .ok_or_else(|| ArrayError::InvalidArgument(format!("{len} elements overflow")))?;
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let fits = |c: &Option<(GpuArray<u8>, usize)>| {
            c.as_ref().is_some_and(|(chunk, used)| {
                chunk.context() == stream.context() && used + bytes <= chunk.len()
            })
        };
        if !fits(&st.current) {
            let chunk_len = self.chunk_bytes.max(bytes.next_multiple_of(ARENA_ALIGN));
            st.current = Some((GpuArray::<u8>::empty(stream, &[chunk_len])?, 0));
            st.chunks += 1;
        }
        let Some((chunk, used)) = st.current.as_mut() else {
            return Err(ArrayError::InvalidArgument("arena has no chunk".into()));
        };
        let start = *used;
        *used = (start + bytes)
            .next_multiple_of(ARENA_ALIGN)
            .min(chunk.len());
        let c = Layout::c_contiguous(shape)?;
        let layout = Layout::from_parts(
            c.shape().to_vec(),
            c.strides().to_vec(),
            start / size,
            chunk.len() / size,
        )?;
        // SAFETY: the chunk holds `chunk.len()` bytes, so `chunk.len() / size` elements of
        // T fit; its address (a driver allocation) is 256-aligned, as is `start`, so every
        // element is aligned for T's storage (at most 16 bytes); any bits are a valid
        // storage value (plain data); the layout lies inside `0..chunk.len() / size`
        // (checked by `from_parts`: start + bytes <= chunk.len()).
        Ok(unsafe { GpuArray::alias_of(chunk, chunk.len() / size, layout) })
    }
}
