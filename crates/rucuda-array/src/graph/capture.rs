//! [`capture`] and [`capture_with`]: a closure's array work on a stream, as a graph.

use rucuda_driver::{CaptureSession, CapturedGraph, Error, Stream};

use crate::error::{ArrayError, Result};

/// Captures the work `record` queues on `stream` into a graph (see the
/// [module docs](super)). The work does not run during the capture: it runs on each
/// [`CapturedGraph::replay`]. Fails with [`Error::Uncapturable`] naming the first
/// operation the capture refused, or with `record`'s own error.
///
/// ```no_run
/// # use rucuda_driver::{Device, Stream, StreamFlags};
/// # let stream = Stream::new(&Device::get(0)?.primary_context()?, StreamFlags::NON_BLOCKING)?;
/// use rucuda_array::{graph, GpuArray};
/// let mut x = GpuArray::<f32>::ones(&stream, &[1024])?;
/// x.try_mul_assign(2.0f32)?; // eagerly once: compiles the kernel
/// let double = graph::capture(&stream, |_s| x.try_mul_assign(2.0f32))?;
/// double.replay(&stream)?;
/// double.replay(&stream)?;
/// assert_eq!(x.to_vec()?[0], 8.0);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn capture(
    stream: &Stream,
    record: impl FnOnce(&Stream) -> Result<()>,
) -> Result<CapturedGraph> {
    Ok(capture_with(stream, record)?.0)
}

/// [`capture`] for a closure that returns something, typically the arrays it creates:
/// they are the graph's outputs (memory of the graph's pool), which every replay
/// rewrites. They hold garbage until the first replay has run.
///
/// ```no_run
/// # use rucuda_driver::{Device, Stream, StreamFlags};
/// # let stream = Stream::new(&Device::get(0)?.primary_context()?, StreamFlags::NON_BLOCKING)?;
/// use rucuda_array::{graph, GpuArray};
/// let x = GpuArray::<f32>::arange(&stream, 0.0, 8.0, 1.0)?;
/// let _ = (&x * &x)?.sum()?; // eagerly once: compiles the kernels
/// let (graph, total) = graph::capture_with(&stream, |_s| (&x * &x)?.sum())?;
/// graph.replay(&stream)?;
/// assert_eq!(total.to_scalar()?, 140.0);
/// x.set(&[1.0; 8])?; // a new input: the next replay reads it
/// graph.replay(&stream)?;
/// assert_eq!(total.to_scalar()?, 8.0);
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn capture_with<R>(
    stream: &Stream,
    record: impl FnOnce(&Stream) -> Result<R>,
) -> Result<(CapturedGraph, R)> {
    let session = CaptureSession::begin(stream)?;
    let recorded = record(stream);
    let ended = session.end();
    match (recorded, ended) {
        (Ok(out), Ok(graph)) => Ok((graph, out)),
        // The session names the first refusal, which the closure's error may only echo.
        (_, Err(e @ Error::Uncapturable { .. })) => Err(e.into()),
        (Err(e), _) => Err(name_refusal(e)),
        (Ok(_), Err(e)) => Err(e.into()),
    }
}

/// Captures `record` again and makes `graph` replay the new capture: the executable
/// graph is updated in place when only parameters changed (other arrays of the same
/// shapes, other scalars: `cuGraphExecUpdate`, much cheaper than a new graph), else
/// replaced. Returns what `record` returned and whether the update was in place. This is
/// how a graph is pointed at other inputs (or other scalars) without instantiating a new
/// one; writing into the arrays it reads needs no recapture at all.
///
/// ```no_run
/// # use rucuda_driver::{Device, Stream, StreamFlags};
/// # let stream = Stream::new(&Device::get(0)?.primary_context()?, StreamFlags::NON_BLOCKING)?;
/// use rucuda_array::{graph, GpuArray};
/// let a = GpuArray::<f32>::full(&stream, &[1024], 1.0)?;
/// let b = GpuArray::<f32>::full(&stream, &[1024], 5.0)?;
/// let _ = (&a * 2.0f32)?;
/// let (mut g, _out) = graph::capture_with(&stream, |_s| &a * 2.0f32)?;
/// let (out_b, in_place) = graph::recapture_with(&mut g, &stream, |_s| &b * 3.0f32)?;
/// g.replay(&stream)?;
/// assert_eq!(out_b.to_vec()?[0], 15.0);
/// assert!(in_place); // same kernel and shape: parameters updated
/// # Ok::<(), rucuda_array::ArrayError>(())
/// ```
pub fn recapture_with<R>(
    graph: &mut CapturedGraph,
    stream: &Stream,
    record: impl FnOnce(&Stream) -> Result<R>,
) -> Result<(R, bool)> {
    let session = CaptureSession::begin(stream)?;
    let recorded = record(stream);
    let ended = match &recorded {
        Ok(_) => session.end_into(graph),
        // Nothing replaces the graph when the closure failed.
        Err(_) => session.end().map(|_| false),
    };
    match (recorded, ended) {
        (Ok(out), Ok(in_place)) => Ok((out, in_place)),
        (_, Err(e @ Error::Uncapturable { .. })) => Err(e.into()),
        (Err(e), _) => Err(name_refusal(e)),
        (Ok(_), Err(e)) => Err(e.into()),
    }
}

/// A driver error that a capture caused, as [`Error::Uncapturable`] naming the call.
pub(crate) fn name_refusal(e: ArrayError) -> ArrayError {
    match e {
        ArrayError::Driver(Error::Driver(d)) if (900..=908).contains(&d.code.0) => {
            ArrayError::Driver(Error::Uncapturable {
                operation: d.call.to_owned(),
                problem: format!("refused while the stream captures: {}", d.message),
            })
        }
        other => other,
    }
}
