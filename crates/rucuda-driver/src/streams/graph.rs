//! CUDA graphs: record work queued on a stream once ([`Stream::begin_capture`] ..
//! [`Stream::end_capture`], or [`Stream::capture`]), instantiate it ([`Graph::instantiate`])
//! and replay it with one launch call ([`GraphExec::launch`]); update an instantiated
//! graph in place from a newly captured one with the same shape ([`GraphExec::update`]).
//!
//! Capture records kernels with the argument values they were launched with (device
//! addresses included), so a replay touches the same buffers: they must outlive every
//! replay, which is why [`GraphExec::launch`] is `unsafe`.
//!
//! The legacy default stream ([`Stream::null`]) cannot be captured; capture a stream made
//! with [`Stream::new`], preferably [`StreamFlags::NON_BLOCKING`](crate::StreamFlags) so
//! that synchronous work of other threads (which uses the legacy stream) does not
//! invalidate the capture.
//!
//! ```no_run
//! use rucuda_driver::*;
//! let ctx = Device::get(0)?.primary_context()?;
//! # let module = Module::load_data(&ctx, b"")?;
//! let add_one = module.function("add_one")?;
//! let mut x = DeviceBuffer::from_slice(&ctx, &[0i32; 1024])?;
//! let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
//! let graph = stream.capture(CaptureMode::ThreadLocal, |s| {
//!     for _ in 0..3 {
//!         // SAFETY: add_one(int* x, int n) touches x[0..n).
//!         unsafe { add_one.launch(LaunchConfig::for_elements(1024, 256), s, (&mut x, 1024i32))? };
//!     }
//!     Ok(())
//! })?;
//! let exec = graph.instantiate()?;
//! for _ in 0..10 {
//!     // SAFETY: `x` outlives the replays.
//!     unsafe { exec.launch(&stream)? };
//! }
//! stream.synchronize()?;
//! assert_eq!(x.to_vec()?[0], 30);
//! # Ok::<(), Error>(())
//! ```

use rucuda_driver_sys::{
    CUgraph, CUgraphDependencyType, CUgraphEdgeData, CUgraphExec, CUgraphExecUpdateResult,
    CUgraphExecUpdateResultInfo, CUresult, CUstreamCaptureMode, CUstreamCaptureStatus,
};

use crate::context::Context;
use crate::error::{call, check, Error, Result};
use crate::streams::stream::Stream;

/// Which other calls a stream capture forbids while it runs (`CUstreamCaptureMode`).
///
/// Calls such as synchronous `cuMemAlloc` or `cuMemcpy` may implicitly synchronise with
/// the capturing stream; during a capture they fail (and invalidate it) on the threads
/// the mode covers.
///
/// ```
/// use rucuda_driver::CaptureMode;
/// assert_eq!(CaptureMode::default(), CaptureMode::Global);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CaptureMode {
    /// Forbidden on every thread that has not set `Relaxed` for itself (CUDA's default).
    #[default]
    Global,
    /// Forbidden on the capturing thread only.
    ThreadLocal,
    /// Not forbidden anywhere: the caller takes care.
    Relaxed,
}

impl CaptureMode {
    fn raw(self) -> CUstreamCaptureMode {
        match self {
            CaptureMode::Global => CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL,
            CaptureMode::ThreadLocal => CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            CaptureMode::Relaxed => CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED,
        }
    }
}

/// Whether a stream is being captured (`CUstreamCaptureStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaptureStatus {
    /// Not capturing.
    None,
    /// Capturing.
    Active,
    /// Capturing, but an error invalidated it: [`Stream::end_capture`] will fail.
    Invalidated,
    /// A status this crate does not know.
    Unknown(u32),
}

impl CaptureStatus {
    fn from_raw(raw: CUstreamCaptureStatus) -> CaptureStatus {
        match raw {
            CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE => CaptureStatus::None,
            CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE => CaptureStatus::Active,
            CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_INVALIDATED => {
                CaptureStatus::Invalidated
            }
            other => CaptureStatus::Unknown(other.0),
        }
    }
}

impl Stream {
    /// Starts recording the work queued on this stream into a graph instead of running
    /// it (`cuStreamBeginCapture`). End with [`Stream::end_capture`].
    ///
    /// ```no_run
    /// use rucuda_driver::*;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    /// stream.begin_capture(CaptureMode::Global)?;
    /// assert!(stream.is_capturing()?);
    /// let graph = stream.end_capture()?;
    /// assert_eq!(graph.node_count()?, 0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn begin_capture(&self, mode: CaptureMode) -> Result<()> {
        self.context().bind()?;
        // SAFETY: the stream is alive; a plain mode value.
        unsafe { call!(cuStreamBeginCapture_v2(self.raw(), mode.raw())) }
    }

    /// Stops recording and returns the graph of what was queued since
    /// [`Stream::begin_capture`] (`cuStreamEndCapture`). Fails when the capture was
    /// invalidated; the stream is no longer capturing either way.
    /// An error queued on the context by an earlier destructor does not stop the end
    /// (the stream would stay capturing): it is left for the next call to return.
    pub fn end_capture(&self) -> Result<Graph> {
        self.context().make_current()?;
        let mut raw: CUgraph = std::ptr::null_mut();
        // SAFETY: writes one graph handle, destroyed by the returned Graph.
        unsafe { call!(cuStreamEndCapture(self.raw(), &mut raw))? };
        if raw.is_null() {
            return Err(Error::invalid("cuStreamEndCapture returned no graph"));
        }
        Ok(Graph {
            raw,
            ctx: self.context().clone(),
        })
    }

    /// Captures what `record` queues on this stream and returns it as a graph. The
    /// capture is ended even when `record` fails; its error is returned then.
    ///
    /// ```no_run
    /// use rucuda_driver::*;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    /// let graph = stream.capture(CaptureMode::ThreadLocal, |_s| Ok(()))?;
    /// # Ok::<(), Error>(())
    /// ```
    pub fn capture(
        &self,
        mode: CaptureMode,
        record: impl FnOnce(&Stream) -> Result<()>,
    ) -> Result<Graph> {
        self.begin_capture(mode)?;
        let recorded = record(self);
        let graph = self.end_capture();
        recorded?;
        graph
    }

    /// This stream's capture status (`cuStreamIsCapturing`).
    pub fn capture_status(&self) -> Result<CaptureStatus> {
        self.context().bind()?;
        let mut raw = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        // SAFETY: writes one status; the stream is alive.
        unsafe { call!(cuStreamIsCapturing(self.raw(), &mut raw))? };
        Ok(CaptureStatus::from_raw(raw))
    }

    /// True while this stream is being captured (also when the capture was invalidated).
    pub fn is_capturing(&self) -> Result<bool> {
        Ok(self.capture_status()? != CaptureStatus::None)
    }
}

/// A graph of device work (`CUgraph`), destroyed on drop. Made by stream capture.
///
/// A graph may move between threads but is not `Sync`: the driver does not synchronise
/// concurrent use of one graph.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
/// let graph = stream.capture(CaptureMode::Global, |_s| Ok(()))?;
/// let copy = graph.try_clone()?;
/// println!("{} nodes", copy.node_count()?);
/// graph.write_dot("/tmp/graph.dot")?;
/// # Ok::<(), Error>(())
/// ```
pub struct Graph {
    raw: CUgraph,
    ctx: Context,
}

// SAFETY: a CUgraph may be used from any thread, one at a time; &self methods only read
// (node counts, clone, instantiate) and the type is not Sync, so uses cannot overlap.
unsafe impl Send for Graph {}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph").field("raw", &self.raw).finish()
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        let r = self.ctx.make_current().and_then(|()| {
            // SAFETY: we own this graph; executable graphs made from it are independent.
            unsafe { call!(cuGraphDestroy(self.raw)) }
        });
        if let Err(e) = r {
            self.ctx.defer_error(e);
        }
    }
}

bitflags::bitflags! {
    /// Flags for [`Graph::instantiate_with_flags`] (`CUgraphInstantiate_flags`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct GraphInstantiateFlags: u64 {
        /// Free memory the graph allocated but did not free before each relaunch.
        const AUTO_FREE_ON_LAUNCH = 1;
        /// Run nodes in the order of their per-node priority attributes.
        const USE_NODE_PRIORITY = 8;
    }
}

impl Graph {
    /// The raw handle.
    pub fn raw(&self) -> CUgraph {
        self.raw
    }

    /// The context it was captured in.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Number of nodes (kernels, copies, memsets, ...) (`cuGraphGetNodes`).
    pub fn node_count(&self) -> Result<usize> {
        self.ctx.bind()?;
        let mut n = 0usize;
        // SAFETY: with a null node array the driver only writes the count.
        unsafe { call!(cuGraphGetNodes(self.raw, std::ptr::null_mut(), &mut n))? };
        Ok(n)
    }

    /// Number of programmatic edges (`CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC`): the
    /// dependencies made by programmatic dependent launches, whose kernels may start
    /// before their predecessors finish (see
    /// [`Function::launch_programmatic`](crate::Function::launch_programmatic)). Zero where
    /// the driver has no `cuGraphGetEdges_v2` (before CUDA 12.3).
    pub fn programmatic_edge_count(&self) -> Result<usize> {
        if crate::error::driver()?.cuGraphGetEdges_v2().is_err() {
            return Ok(0);
        }
        self.ctx.bind()?;
        let mut n = 0usize;
        // SAFETY: with null arrays the driver only writes the count.
        unsafe {
            call!(cuGraphGetEdges_v2(
                self.raw,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut n
            ))?
        };
        let mut from = vec![std::ptr::null_mut(); n];
        let mut to = vec![std::ptr::null_mut(); n];
        let mut data = vec![CUgraphEdgeData::default(); n];
        // SAFETY: three arrays of `n` entries; the driver writes at most `n` and updates
        // `n` to the number written.
        unsafe {
            call!(cuGraphGetEdges_v2(
                self.raw,
                from.as_mut_ptr(),
                to.as_mut_ptr(),
                data.as_mut_ptr(),
                &mut n
            ))?
        };
        let programmatic = CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC.0 as u8;
        Ok(data[..n.min(data.len())]
            .iter()
            .filter(|e| e.type_ == programmatic)
            .count())
    }

    /// A copy of this graph (`cuGraphClone`).
    pub fn try_clone(&self) -> Result<Graph> {
        self.ctx.bind()?;
        let mut raw: CUgraph = std::ptr::null_mut();
        // SAFETY: writes one graph handle, destroyed by the returned Graph.
        unsafe { call!(cuGraphClone(&mut raw, self.raw))? };
        Ok(Graph {
            raw,
            ctx: self.ctx.clone(),
        })
    }

    /// Makes an executable graph (`cuGraphInstantiateWithFlags`).
    pub fn instantiate(&self) -> Result<GraphExec> {
        self.instantiate_with_flags(GraphInstantiateFlags::empty())
    }

    /// Makes an executable graph with flags.
    pub fn instantiate_with_flags(&self, flags: GraphInstantiateFlags) -> Result<GraphExec> {
        self.ctx.bind()?;
        let mut raw: CUgraphExec = std::ptr::null_mut();
        // SAFETY: writes one executable-graph handle, destroyed by the returned GraphExec.
        unsafe {
            call!(cuGraphInstantiateWithFlags(
                &mut raw,
                self.raw,
                flags.bits()
            ))?
        };
        Ok(GraphExec {
            raw,
            ctx: self.ctx.clone(),
        })
    }

    /// Writes the graph in Graphviz DOT form to `path` (`cuGraphDebugDotPrint`, verbose).
    pub fn write_dot(&self, path: impl AsRef<std::path::Path>) -> Result<()> {
        let path = path.as_ref();
        let c = std::ffi::CString::new(path.to_string_lossy().into_owned())
            .map_err(|_| Error::invalid("graph DOT path contains NUL"))?;
        self.ctx.bind()?;
        // SAFETY: a NUL-terminated path; flag 1 is CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE.
        unsafe { call!(cuGraphDebugDotPrint(self.raw, c.as_ptr(), 1)) }
    }
}

/// An executable graph (`CUgraphExec`), destroyed on drop; independent of the [`Graph`]
/// it was made from. Not `Sync`: the driver does not synchronise concurrent use.
///
/// ```no_run
/// use rucuda_driver::*;
/// # let ctx = Device::get(0)?.primary_context()?;
/// # let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
/// # let graph = stream.capture(CaptureMode::Global, |_s| Ok(()))?;
/// let exec = graph.instantiate_with_flags(GraphInstantiateFlags::AUTO_FREE_ON_LAUNCH)?;
/// exec.upload(&stream)?;
/// // SAFETY: the captured work touches no memory that was freed since.
/// unsafe { exec.launch(&stream)? };
/// stream.synchronize()?;
/// # Ok::<(), Error>(())
/// ```
pub struct GraphExec {
    raw: CUgraphExec,
    ctx: Context,
}

// SAFETY: a CUgraphExec may be used from any thread, one at a time (the type is not Sync).
unsafe impl Send for GraphExec {}

impl std::fmt::Debug for GraphExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphExec").field("raw", &self.raw).finish()
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        let r = self.ctx.make_current().and_then(|()| {
            // SAFETY: we own it; the driver lets queued launches of it finish first.
            unsafe { call!(cuGraphExecDestroy(self.raw)) }
        });
        if let Err(e) = r {
            self.ctx.defer_error(e);
        }
    }
}

/// Why [`GraphExec::update`] could not apply a graph (`CUgraphExecUpdateResult`), or
/// that it did.
///
/// ```
/// use rucuda_driver::GraphUpdate;
/// assert!(GraphUpdate::Applied.is_applied());
/// assert!(!GraphUpdate::TopologyChanged.is_applied());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphUpdate {
    /// Applied: the next launch runs the new parameters.
    Applied,
    /// Refused for a reason the driver did not name.
    Error,
    /// The graphs have different nodes or edges.
    TopologyChanged,
    /// A node changed type.
    NodeTypeChanged,
    /// A kernel node changed function.
    FunctionChanged,
    /// A node changed parameters in a way that cannot be updated.
    ParametersChanged,
    /// Something in the graph cannot be updated.
    NotSupported,
    /// A kernel's function changed in a way that cannot be updated.
    UnsupportedFunctionChange,
    /// A node's attributes changed in a way that cannot be updated.
    AttributesChanged,
    /// A result this crate does not know.
    Unknown(u32),
}

impl GraphUpdate {
    /// True when the update was applied.
    pub fn is_applied(self) -> bool {
        self == GraphUpdate::Applied
    }

    fn from_raw(raw: CUgraphExecUpdateResult) -> GraphUpdate {
        use CUgraphExecUpdateResult as R;
        match raw {
            R::CU_GRAPH_EXEC_UPDATE_SUCCESS => GraphUpdate::Applied,
            R::CU_GRAPH_EXEC_UPDATE_ERROR => GraphUpdate::Error,
            R::CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED => GraphUpdate::TopologyChanged,
            R::CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED => GraphUpdate::NodeTypeChanged,
            R::CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED => GraphUpdate::FunctionChanged,
            R::CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED => GraphUpdate::ParametersChanged,
            R::CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED => GraphUpdate::NotSupported,
            R::CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE => {
                GraphUpdate::UnsupportedFunctionChange
            }
            R::CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED => GraphUpdate::AttributesChanged,
            other => GraphUpdate::Unknown(other.0),
        }
    }
}

impl GraphExec {
    /// The raw handle.
    pub fn raw(&self) -> CUgraphExec {
        self.raw
    }

    /// The context it runs in.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Queues one run of the whole graph on `stream` (`cuGraphLaunch`). Runs of one
    /// executable graph are ordered, whatever streams they are launched on.
    ///
    /// # Safety
    /// The kernels replay the arguments they were captured with: every buffer they
    /// touch must still be alive (not freed, not reallocated) when the run executes, and
    /// not be accessed by the host until it has finished; the kernels' own accesses are
    /// unchecked, as for [`crate::Function::launch`].
    pub unsafe fn launch(&self, stream: &Stream) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: both handles are alive; the caller vouches for the captured buffers.
        unsafe { call!(cuGraphLaunch(self.raw, stream.raw())) }
    }

    /// Uploads the graph's work descriptions to the device ahead of its first launch, so
    /// that launch is as fast as later ones (`cuGraphUpload`). Runs nothing.
    pub fn upload(&self, stream: &Stream) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: both handles are alive; an upload executes no node.
        unsafe { call!(cuGraphUpload(self.raw, stream.raw())) }
    }

    /// Replaces the parameters of this executable graph's nodes with those of `graph`,
    /// which must have the same shape (same nodes, edges, node types and functions): the
    /// cheap way to rerun a captured sequence with new scalars or buffers
    /// (`cuGraphExecUpdate`). Returns whether it was applied; when not, this executable
    /// graph is unchanged and still runs its old parameters.
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # fn demo(exec: &GraphExec, recaptured: &Graph, stream: &Stream) -> Result<()> {
    /// if !exec.update(recaptured)?.is_applied() {
    ///     // Shape changed: instantiate anew.
    ///     let _fresh = recaptured.instantiate()?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn update(&self, graph: &Graph) -> Result<GraphUpdate> {
        self.ctx.bind()?;
        let mut info = CUgraphExecUpdateResultInfo::default();
        let f = crate::error::driver()?.cuGraphExecUpdate_v2()?;
        // SAFETY: both handles are alive; writes one result struct.
        let code = unsafe { f(self.raw, graph.raw, &mut info) };
        match code {
            CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE => {
                Ok(match GraphUpdate::from_raw(info.result) {
                    // The call failed, so it was not applied whatever the struct says.
                    GraphUpdate::Applied => GraphUpdate::Error,
                    other => other,
                })
            }
            code => {
                check(code, "cuGraphExecUpdate_v2")?;
                Ok(GraphUpdate::Applied)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_modes_match_the_header() {
        assert_eq!(CaptureMode::Global.raw().0, 0);
        assert_eq!(CaptureMode::ThreadLocal.raw().0, 1);
        assert_eq!(CaptureMode::Relaxed.raw().0, 2);
        assert_eq!(CaptureMode::default(), CaptureMode::Global);
    }

    #[test]
    fn capture_status_from_raw() {
        assert_eq!(
            CaptureStatus::from_raw(CUstreamCaptureStatus(0)),
            CaptureStatus::None
        );
        assert_eq!(
            CaptureStatus::from_raw(CUstreamCaptureStatus(1)),
            CaptureStatus::Active
        );
        assert_eq!(
            CaptureStatus::from_raw(CUstreamCaptureStatus(2)),
            CaptureStatus::Invalidated
        );
        assert_eq!(
            CaptureStatus::from_raw(CUstreamCaptureStatus(77)),
            CaptureStatus::Unknown(77)
        );
    }

    #[test]
    fn update_results_from_raw() {
        let expected = [
            GraphUpdate::Applied,
            GraphUpdate::Error,
            GraphUpdate::TopologyChanged,
            GraphUpdate::NodeTypeChanged,
            GraphUpdate::FunctionChanged,
            GraphUpdate::ParametersChanged,
            GraphUpdate::NotSupported,
            GraphUpdate::UnsupportedFunctionChange,
            GraphUpdate::AttributesChanged,
        ];
        for (i, e) in expected.iter().enumerate() {
            assert_eq!(GraphUpdate::from_raw(CUgraphExecUpdateResult(i as u32)), *e);
        }
        assert_eq!(
            GraphUpdate::from_raw(CUgraphExecUpdateResult(99)),
            GraphUpdate::Unknown(99)
        );
        assert!(GraphUpdate::Applied.is_applied());
        assert!(!GraphUpdate::TopologyChanged.is_applied());
    }

    #[test]
    fn instantiate_flags_match_the_header() {
        use rucuda_driver_sys::CUgraphInstantiate_flags as F;
        assert_eq!(
            GraphInstantiateFlags::AUTO_FREE_ON_LAUNCH.bits(),
            F::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0 as u64
        );
        assert_eq!(
            GraphInstantiateFlags::USE_NODE_PRIORITY.bits(),
            F::CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY.0 as u64
        );
    }
}
