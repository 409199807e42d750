//! A capture session's private pool: the memory allocated on a stream while rucuda
//! captures it into a graph.
//!
//! Captured work bakes its addresses into the graph, so memory allocated during the
//! capture must keep its address for as long as the graph can be replayed (PyTorch keeps
//! graph-private pools for the same reason). A stream-ordered allocation would become a
//! graph allocation node instead, whose memory a buffer returned from the capture could
//! not own. So `DeviceBuffer::uninit_async` on a capturing stream takes a block from the
//! session's pool: real device memory (`cuMemAlloc`, made under the relaxed capture mode,
//! which the thread-local mode of the capture would refuse), owned by the pool, which the
//! graph holds. A buffer dropped during the capture gives its block back for later
//! allocations of the same capture (their captured work runs after its work in the one
//! stream the graph captures); after the capture, blocks are never handed out again and
//! are freed when the pool goes, after every use their log recorded (the replays among
//! them).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rucuda_driver_sys::CUdeviceptr;

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::memory::tracking::capture::Session;
use crate::memory::tracking::{Access, UseLog};

/// One block: its memory, its log (shared with every buffer handed this block).
struct Block {
    ptr: CUdeviceptr,
    bytes: usize,
    log: Arc<UseLog>,
    in_use: bool,
}

#[derive(Default)]
struct PoolState {
    blocks: Vec<Block>,
    /// False once the capture ended: no block is handed out again.
    open: bool,
}

/// The pool of one capture session.
pub(crate) struct GraphPool {
    ctx: Context,
    state: Mutex<PoolState>,
}

impl std::fmt::Debug for GraphPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphPool")
            .field("blocks", &self.lock().blocks.len())
            .finish()
    }
}

/// A buffer's hold on its block: gives it back when dropped.
pub(crate) struct PoolLease {
    pool: Arc<GraphPool>,
    index: usize,
}

impl Drop for PoolLease {
    fn drop(&mut self) {
        let mut st = self.pool.lock();
        if let Some(b) = st.blocks.get_mut(self.index) {
            b.in_use = false;
        }
    }
}

impl GraphPool {
    /// An empty, open pool.
    pub(crate) fn new(ctx: &Context) -> Arc<GraphPool> {
        Arc::new(GraphPool {
            ctx: ctx.clone(),
            state: Mutex::new(PoolState {
                blocks: Vec::new(),
                open: true,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Closes the pool: the capture ended, no block is handed out again.
    pub(crate) fn close(&self) {
        self.lock().open = false;
    }

    /// Blocks the pool holds, and their bytes.
    pub(crate) fn footprint(&self) -> (usize, usize) {
        let st = self.lock();
        (st.blocks.len(), st.blocks.iter().map(|b| b.bytes).sum())
    }

    /// A block of at least `bytes` for `session` (whose pool this is): a free one of at
    /// most twice the size, else a new allocation. Its log is registered with the
    /// session as one the graph keeps alive.
    pub(crate) fn allocate(
        pool: &Arc<GraphPool>,
        session: &Session,
        bytes: usize,
    ) -> Result<(CUdeviceptr, Arc<UseLog>, PoolLease)> {
        let mut st = pool.lock();
        if !st.open {
            return Err(Error::invalid("the capture's pool is closed"));
        }
        let reuse = st
            .blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.in_use && b.bytes >= bytes && b.bytes <= bytes.saturating_mul(2))
            .min_by_key(|(_, b)| b.bytes)
            .map(|(i, _)| i);
        let index = match reuse {
            Some(i) => i,
            None => {
                let ptr = allocate_while_capturing(&pool.ctx, bytes)?;
                st.blocks.push(Block {
                    ptr,
                    bytes,
                    log: Arc::new(UseLog::new()),
                    in_use: false,
                });
                st.blocks.len() - 1
            }
        };
        let block = &mut st.blocks[index];
        block.in_use = true;
        let (ptr, log) = (block.ptr, Arc::clone(&block.log));
        drop(st);
        session
            .state()
            .kept
            .insert(Arc::as_ptr(&log) as usize, None);
        Ok((
            ptr,
            log,
            PoolLease {
                pool: Arc::clone(pool),
                index,
            },
        ))
    }
}

/// `cuMemAlloc` of `bytes` (at least 1) with this thread's capture mode relaxed for the
/// call: the capture's thread-local mode refuses allocations, which are safe here (they
/// queue no work and the memory is not used before the capture's work runs).
fn allocate_while_capturing(ctx: &Context, bytes: usize) -> Result<CUdeviceptr> {
    ctx.make_current()?;
    crate::memory::tracking::capture::with_relaxed_mode(|| {
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: writes one device pointer, freed by the pool's Drop.
        unsafe { call!(cuMemAlloc_v2(&mut ptr, bytes.max(1)))? };
        Ok(ptr)
    })
}

impl Drop for GraphPool {
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        for b in st.blocks.drain(..) {
            // Every use recorded in the block's log (eager work on buffers handed this
            // block, the graph's replays) finishes before the free; where waiting
            // fails, the block is leaked rather than freed under queued work.
            let freed = b.log.wait_on_host(Access::Write).and_then(|()| {
                self.ctx.make_current()?;
                // SAFETY: allocated with cuMemAlloc by this pool; freed once; no buffer
                // holds it any more (each holds the pool) and its uses have finished.
                unsafe { call!(cuMemFree_v2(b.ptr)) }
            });
            if let Err(e) = freed {
                self.ctx.defer_error(e);
            }
        }
    }
}
