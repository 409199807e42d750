//! CUDA graphs for array code: capture a sequence of operations on a stream once, replay
//! it with one launch.
//!
//! Small operations cost a few microseconds of host time each to launch, whatever they
//! compute. [`capture`](fn@capture) records everything a closure queues on a stream (array
//! operators, fused expressions, reductions, scans, random fills, your own kernels on
//! arrays, device copies) into a graph, and [`CapturedGraph::replay`] reruns all of it
//! with one `cuGraphLaunch`. [`Replay`] does the same automatically for the body of a
//! loop: it runs the first iterations eagerly, checks that they repeat the same work,
//! captures the next one and replays from then on, or stays eager where it must.
//!
//! # What a graph holds
//! - **Its memory.** Every array the captured work uses is kept alive by the graph (it
//!   holds a handle on the array's allocation), so dropping the arrays cannot free memory
//!   a replay still uses. Arrays created inside the capture come from a pool private to
//!   the graph (as PyTorch's graph pools): their addresses stay valid across replays, and
//!   the arrays returned from the closure ([`capture_with`]) are the graph's outputs,
//!   rewritten by every replay.
//! - **Its ordering.** A replay records its uses of every array it touches on the replay
//!   stream, as eager work would: it waits for conflicting work on other streams, and host
//!   reads (`to_vec`), later work and frees wait for it.
//! - **Fixed inputs.** A graph reads the arrays it was captured with. New inputs are
//!   given by writing into those arrays between replays (`copy_from`, `set`, any
//!   operation writing them), which the tracking orders before the next replay. This is
//!   the design PyTorch uses (static inputs), chosen over patching kernel parameters
//!   (`cuGraphExecKernelNodeSetParams`/`cuGraphExecUpdate`) because it keeps every
//!   address the graph uses owned and tracked: a patched parameter would be an address
//!   that no use log sees. Scalars passed to kernels are fixed at capture too.
//!
//! # What cannot be captured
//! Capture runs in CUDA's thread-local mode; the capture fails with
//! [`rucuda_driver::Error::Uncapturable`] naming the first operation it refused:
//! synchronous copies and host reads (`to_vec`, `to_scalar`), stream synchronization,
//! `cuMemAlloc` (allocate with the capturing stream instead), work queued by the
//! capturing thread on another stream (arrays made on another stream work there), and
//! work on memory the graph cannot keep alive (a bare `DeviceBuffer`: put it in an `Arc`
//! and register it with [`rucuda_driver::keep_alive_for_capture`]).
//!
//! Dropping inside the closure an array made before the capture (moved into it) and not
//! used by the captured work fails the capture too: its stream-ordered free cannot be
//! captured. Kernels are compiled when first used; run the code once eagerly before
//! capturing it, so that no compilation happens inside the capture.
//!
//! ```no_run
//! use rucuda_array::{graph, GpuArray};
//! use rucuda_driver::{Device, Stream, StreamFlags};
//! let ctx = Device::get(0)?.primary_context()?;
//! let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
//! let x = GpuArray::<f32>::arange(&stream, 0.0, 4096.0, 1.0)?;
//! let y = GpuArray::<f32>::zeros(&stream, &[4096])?;
//! let step = |s: &Stream| -> rucuda_array::Result<()> {
//!     let t = ((&x * 2.0f32)? + &y)?; // a temporary from the graph's pool
//!     y.copy_from(&t)?;
//!     Ok(())
//! };
//! step(&stream)?; // eagerly once: compiles the kernels
//! let graph = graph::capture(&stream, step)?;
//! for _ in 0..100 {
//!     graph.replay(&stream)?;
//! }
//! println!("{}", y.to_vec()?[1]);
//! # Ok::<(), rucuda_array::ArrayError>(())
//! ```

mod capture;
mod replay;

pub use capture::{capture, capture_with, recapture_with};
pub use replay::{Replay, ReplayState};
pub use rucuda_driver::CapturedGraph;
