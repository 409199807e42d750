//! GPU use tracking: the one structure through which every device address reaches queued
//! work.
//!
//! Each piece of memory that work can use (a [`DeviceBuffer`](crate::DeviceBuffer), page-
//! locked or registered host memory, managed, pitched and IPC memory, a pool block) owns
//! one [`UseLog`]: the stream whose work last wrote it, and the streams that read it since.
//! A [`DeviceRange`] is a range of such memory together with its log, and
//! [`DeviceRange::use_on`] is the only way to the range's address for work about to be
//! queued. It
//!
//! - orders the stream after earlier conflicting work on other streams (a read waits for
//!   the last write; a write waits for the last write and every read since), by recording
//!   an event on the earlier stream and making the new stream wait for it;
//! - notes the stream in the log, so that later conflicting work, host access
//!   ([`DeviceRange::wait_on_host`]) and the free wait for it in the same way.
//!
//! Nothing is recorded while work stays on one stream: stream order already covers it,
//! and the fast path is one uncontended lock and a comparison. Events are recorded
//! lazily, when another stream (or the host, or the free) needs to wait: an event recorded
//! on a stream *now* follows every use queued there before, so it is as good as one
//! recorded right after the use. The per-thread default stream's handle names another
//! stream on every host thread, so its uses are kept with their thread: waiting for one
//! from another thread synchronizes their context instead.
//!
//! Work queued on a stream that captures a graph is not tracked: it runs when the graph is
//! launched. Under a raw capture ([`Stream::capture`](crate::Stream::capture)) keeping its
//! memory alive until then is the (unsafe) graph launch's contract; under one of rucuda's
//! capture sessions ([`CaptureSession`](crate::CaptureSession), `capture.rs`) the session
//! lists the memory the graph touches, keeps it alive, and each replay notes its uses.
//!
//! Recording and waiting never go through [`Context::bind`](crate::Context::bind), so an
//! unrelated error queued by a destructor cannot make them skip their work.
//!
//! A use is *pending* from [`DeviceRange::use_on`] until the [`InUse`] it returned is
//! dropped, which the caller does after queueing the work. Until then no event can cover
//! the work, so conflicting uses from other threads wait for the drop (a wait that would
//! close a cycle of threads waiting for each other fails with an error instead of
//! deadlocking), and a conflicting use on another stream by the same thread fails. This
//! closes the window between noting a use and queueing its work, in which another thread
//! could otherwise order its work after an event that does not yet cover it.
//!
//! `pending.rs` holds the uses not yet queued and the threads waiting for them, `log.rs`
//! the log itself ([`UseLog`], [`InUse`]), `range.rs` what work receives memory as
//! ([`DeviceRange`], [`DevicePtr`]).

pub(crate) mod capture;
mod log;
mod pending;
mod range;

pub(crate) use log::finish_legacy_stream;
pub use log::{InUse, UseLog};
pub use pending::Access;
pub use range::{keep_alive_for_capture, DevicePtr, DeviceRange};
