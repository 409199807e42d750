//! Safe graphs of tracked work: [`CaptureSession`] captures what a stream queues into a
//! graph, and [`CapturedGraph::replay`] reruns it with the same use tracking as eager
//! work.
//!
//! The raw [`Stream::capture`] leaves the graph's memory to the caller (its launch is
//! `unsafe`). A session instead (see `tracking/capture.rs`):
//!
//! - lists every piece of memory the captured work uses and how (read or write), and
//!   refuses memory it cannot keep alive: what the graph uses is owned by a shared owner
//!   registered with [`CaptureSession::keep`] (rucuda-array registers its arrays) or is a
//!   block of the session's pool;
//! - serves the stream-ordered allocations made on the capturing stream
//!   ([`DeviceBuffer::uninit_async`](crate::DeviceBuffer::uninit_async)) from a pool owned
//!   by the graph, so their addresses stay valid across replays (`graph_pool.rs`);
//! - captures in the thread-local mode and fails with [`Error::Uncapturable`] naming the
//!   first refused call when the capturing thread queues what a capture cannot record
//!   (a synchronous copy, a stream synchronization, `cuMemAlloc`), work on another
//!   stream, or work on memory it cannot keep alive.
//!
//! A replay notes the listed uses on its stream before launching the graph, exactly as
//! eager work would: it waits for conflicting work on other streams, and later work, host
//! reads and frees wait for it. The graph holds the owners and the pool, so nothing it
//! touches is freed while it can run. New inputs are given by writing into the arrays the
//! graph reads between replays (any stream, any operation: the uses order them); the
//! graph itself never changes.
//!
//! ```no_run
//! use rucuda_driver::*;
//! use std::sync::Arc;
//! let ctx = Device::get(0)?.primary_context()?;
//! let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
//! let x = Arc::new(DeviceBuffer::<f32>::zeros(&ctx, 1024)?);
//! let session = CaptureSession::begin(&stream)?;
//! session.keep(&x);
//! // ... queue work using `x` on `stream` (a kernel launch, a copy) ...
//! let graph = session.end()?;
//! for _ in 0..10 {
//!     graph.replay(&stream)?;
//! }
//! let result = x.to_vec()?; // waits for the replays
//! # Ok::<(), Error>(())
//! ```

use std::marker::PhantomData;
use std::sync::Arc;

use crate::error::{is_capture_code, take_capture_refusal, Error, Result};
use crate::memory::graph_pool::GraphPool;
pub use crate::memory::tracking::capture::Observed;
use crate::memory::tracking::capture::{self, Keeper, Session};
use crate::memory::tracking::{keep_alive_for_capture, Access, DevicePtr, UseLog};
use crate::streams::graph::{CaptureMode, Graph, GraphExec};
use crate::streams::stream::Stream;

/// A capture in progress on one stream (see the module docs). End it with
/// [`CaptureSession::end`]; dropped unended, the capture is abandoned.
///
/// It stays on the thread that began it (the capture mode is the thread's).
pub struct CaptureSession {
    stream: Stream,
    session: Arc<Session>,
    pool: Arc<GraphPool>,
    ended: bool,
    _thread_bound: PhantomData<*const ()>,
}

impl std::fmt::Debug for CaptureSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptureSession")
            .field("stream", &self.stream.raw())
            .finish()
    }
}

impl CaptureSession {
    /// Starts capturing `stream` (thread-local mode). The legacy default streams cannot
    /// be captured: use a stream made with [`Stream::new`].
    pub fn begin(stream: &Stream) -> Result<CaptureSession> {
        let raw = stream.raw() as usize;
        if raw <= 2 {
            return Err(Error::invalid(
                "the legacy default streams cannot be captured; capture a stream made with \
                 Stream::new",
            ));
        }
        if stream.is_capturing()? {
            return Err(Error::invalid("the stream is already capturing"));
        }
        // A refusal left over from earlier work of this thread is not this capture's.
        let _ = take_capture_refusal();
        stream.begin_capture(CaptureMode::ThreadLocal)?;
        let pool = GraphPool::new(stream.context());
        let session = match capture::register(stream, Arc::clone(&pool) as _) {
            Ok(s) => s,
            Err(e) => {
                let _ = stream.end_capture();
                return Err(e);
            }
        };
        Ok(CaptureSession {
            stream: stream.clone(),
            session,
            pool,
            ended: false,
            _thread_bound: PhantomData,
        })
    }

    /// The capturing stream.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Lets the captured work use `owner`'s memory; the graph keeps a clone of `owner`.
    /// (Equivalent to [`keep_alive_for_capture`], for this session.)
    pub fn keep<P: DevicePtr + Send + Sync + 'static>(&self, owner: &Arc<P>) {
        keep_alive_for_capture(owner);
    }

    /// Ends the capture and makes the replayable graph; fails with
    /// [`Error::Uncapturable`] naming the first operation the capture refused.
    pub fn end(self) -> Result<CapturedGraph> {
        let (graph, parts) = self.finish()?;
        let exec = graph.instantiate()?;
        Ok(parts.with(exec, graph))
    }

    /// Ends the capture and makes `target` replay it instead of what it replayed: its
    /// executable graph is updated in place where the driver can (same nodes and edges,
    /// other parameters: `cuGraphExecUpdate`, much cheaper than instantiating), else
    /// replaced. Returns whether it was updated in place. Replays queued before keep
    /// their memory alive until they have run (their uses were noted).
    pub fn end_into(self, target: &mut CapturedGraph) -> Result<bool> {
        let (graph, parts) = self.finish()?;
        let applied = target.exec.update(&graph)?.is_applied();
        let exec = if applied {
            None
        } else {
            Some(graph.instantiate()?)
        };
        let old = std::mem::replace(&mut target.parts, parts);
        target.graph = graph;
        if let Some(exec) = exec {
            target.exec = exec;
        }
        drop(old);
        Ok(applied)
    }

    /// Ends the capture: the graph and what its replays need, or the refusal.
    fn finish(mut self) -> Result<(Graph, Parts)> {
        self.ended = true;
        capture::unregister(&self.session);
        self.pool.close();
        // A capture ended or replaced behind the session's back (the raw
        // `Stream::end_capture` / `begin_capture` are safe) would hand over a graph whose
        // work was never listed: refused, and the stream's capture is left to its owner.
        // An invalidated capture is ended here: its end gives only the error, and the
        // refusal recorded below names what invalidated it.
        if !capture::may_end_capture(&self.session)? {
            return Err(Error::Uncapturable {
                operation: "Stream::end_capture or Stream::begin_capture during the session".into(),
                problem: "the stream's capture is no longer the session's: it was ended or \
                          replaced outside the session, so the session has no record of \
                          what the work captured since uses"
                    .into(),
            });
        }
        let graph = self.stream.end_capture();
        let refused = take_capture_refusal();
        let failure = self.session.state().failure.take();
        if let Some((operation, problem)) = failure {
            return Err(Error::Uncapturable { operation, problem });
        }
        if let Some(call) = refused {
            return Err(refused_call(call));
        }
        let graph = graph.map_err(|e| match e.code() {
            Some(code) if is_capture_code(code) => Error::Uncapturable {
                operation: "an operation the capture recorded no name for".into(),
                problem: e.to_string(),
            },
            _ => e,
        })?;
        let st = self.session.state();
        let mut uses = Vec::with_capacity(st.uses.len());
        let mut keepers = Vec::new();
        for (&log, &access) in &st.uses {
            uses.push((log, access));
            if let Some(Some(k)) = st.kept.get(&log) {
                keepers.push(Arc::clone(k));
            }
        }
        keepers.extend(st.code.values().cloned());
        // The order of notes does not matter (each is independent); sorted for
        // reproducible behaviour.
        uses.sort_unstable_by_key(|&(log, _)| log);
        drop(st);
        Ok((
            graph,
            Parts {
                uses,
                _keepers: keepers,
                pool: Arc::clone(&self.pool),
            },
        ))
    }
}

/// What a captured graph's replays need besides the executable graph.
struct Parts {
    /// The logs (by address) of the memory the work uses, and how.
    uses: Vec<(usize, Access)>,
    /// Keep the memory of `uses` alive (with `pool`).
    _keepers: Vec<Keeper>,
    pool: Arc<GraphPool>,
}

impl Parts {
    fn with(self, exec: GraphExec, graph: Graph) -> CapturedGraph {
        CapturedGraph {
            exec,
            graph,
            parts: self,
        }
    }
}

/// The error for a driver call that the capture refused.
pub(crate) fn refused_call(call: &str) -> Error {
    Error::Uncapturable {
        operation: call.to_owned(),
        problem: "the driver refuses this call while the stream captures (it would \
                  synchronize with, or run outside of, the captured work); do it before \
                  or after the capture"
            .into(),
    }
}

impl Drop for CaptureSession {
    fn drop(&mut self) {
        if !self.ended {
            capture::unregister(&self.session);
            self.pool.close();
            // Abandoned: the graph (or the invalidation error) is dropped.
            let _ = self.stream.end_capture();
            let _ = take_capture_refusal();
        }
    }
}

/// A captured graph that replays safely: it keeps the memory its work uses alive and
/// notes each replay's uses in their logs (see the module docs).
///
/// Not `Sync`: replays are queued from one thread at a time (they may be queued on any
/// stream of its context and are ordered with each other by the driver).
pub struct CapturedGraph {
    exec: GraphExec,
    graph: Graph,
    /// The memory of the work, kept alive; dropped after `exec`.
    parts: Parts,
}

impl std::fmt::Debug for CapturedGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CapturedGraph")
            .field("exec", &self.exec)
            .field("memory_used", &self.parts.uses.len())
            .field("pool", &self.parts.pool)
            .finish()
    }
}

impl CapturedGraph {
    /// Queues one run of the captured work on `stream` (any stream of its context that
    /// is not capturing), ordered against other work on the memory it uses as that work
    /// would be if queued eagerly.
    pub fn replay(&self, stream: &Stream) -> Result<()> {
        if stream.context() != self.exec.context() {
            return Err(Error::invalid(
                "a graph is replayed on a stream of the context it was captured in",
            ));
        }
        if stream.raw() as usize > 2 && stream.is_capturing()? {
            return Err(Error::invalid(
                "a captured graph cannot be replayed on a stream that is capturing",
            ));
        }
        let mut held = Vec::with_capacity(self.parts.uses.len());
        for &(log, access) in &self.parts.uses {
            // SAFETY: `log` is the address of the log of memory that the parts' keepers or
            // pool keep alive (a session lists only such logs), and they live as long as
            // self (replaced only through `&mut self`).
            let log = unsafe { &*(log as *const UseLog) };
            held.push(log.note(stream, access, 0)?);
        }
        // SAFETY: every buffer the captured work touches is listed in the parts' `uses`
        // (the session refused capture otherwise) and kept alive by their keepers and pool
        // for as long as `exec` runs this graph (an update replaces exec's work and the
        // parts together; the old parts stay alive for replays queued before through the
        // uses those noted); the notes above order this run after conflicting work, and make later
        // conflicting work, host access and frees wait for it. The kernels are the
        // library's or were launched through `unsafe` calls whose contracts covered them.
        unsafe { self.exec.launch(stream)? };
        drop(held);
        Ok(())
    }

    /// Uploads the graph to the device ahead of its first replay (`cuGraphUpload`).
    pub fn upload(&self, stream: &Stream) -> Result<()> {
        self.exec.upload(stream)
    }

    /// Number of nodes (kernels, copies, memsets) in the graph.
    pub fn node_count(&self) -> Result<usize> {
        self.graph.node_count()
    }

    /// Number of distinct allocations (or pool blocks) the graph's work uses.
    pub fn memory_used(&self) -> usize {
        self.parts.uses.len()
    }

    /// Blocks in the graph's private pool and their total bytes.
    pub fn pool_footprint(&self) -> (usize, usize) {
        self.parts.pool.footprint()
    }

    /// The graph as captured (for [`Graph::write_dot`]).
    pub fn graph(&self) -> &Graph {
        &self.graph
    }
}

/// Records which memory the eager work this thread queues uses, and which device
/// buffers it allocates, in order ([`Observed`]): how rucuda-array's automatic graph mode
/// checks that iterations of a loop body repeat the same work before capturing one.
/// While any thread observes, uses everywhere take a slower path (a driver query each).
///
/// ```no_run
/// # use rucuda_driver::*;
/// let watch = UseObserver::begin();
/// // ... eager work ...
/// let seen = watch.finish();
/// println!("{} uses, {} allocations", seen.uses.len(), seen.allocated.len());
/// ```
#[derive(Debug)]
pub struct UseObserver {
    finished: bool,
    _thread_bound: PhantomData<*const ()>,
}

impl UseObserver {
    /// Starts recording on this thread (a second observer restarts the recording).
    pub fn begin() -> UseObserver {
        capture::observe_begin();
        UseObserver {
            finished: false,
            _thread_bound: PhantomData,
        }
    }

    /// Stops recording and returns what was recorded.
    pub fn finish(mut self) -> Observed {
        self.finished = true;
        capture::observe_end()
    }
}

impl Drop for UseObserver {
    fn drop(&mut self) {
        if !self.finished {
            let _ = capture::observe_end();
        }
    }
}
