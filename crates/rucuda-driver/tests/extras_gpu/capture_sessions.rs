//! GPU tests of capture sessions (`CaptureSession`, `CapturedGraph`): buffers allocated on
//! the capturing stream come from the graph's pool and keep their address, kept buffers
//! outlive their owners' handles, eager work on the pool's buffers is ordered with the
//! replays, and memory the graph cannot keep alive makes the capture fail.

use std::sync::Arc;

use crate::common;
use crate::settle;
use rucuda_driver::*;

const N: usize = 4096;

#[test]
#[ignore = "needs a CUDA device"]
fn a_session_replays_on_pool_and_kept_memory() -> Result<()> {
    let ctx = common::ctx();
    let core = common::core_module(&ctx);
    let add_one = core.function("add_one")?;
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let cfg = LaunchConfig::for_elements(N, 256);
    let x = Arc::new(DeviceBuffer::from_slice(&ctx, &vec![3i32; N])?);
    settle(&ctx)?;

    let session = CaptureSession::begin(&stream)?;
    session.keep(&x);
    let mut counter = DeviceBuffer::<i32>::uninit_async(&stream, N)?;
    let mut copy = DeviceBuffer::<i32>::uninit_async(&stream, N)?;
    memcpy_dtod_async(&mut copy, &*x, &stream)?;
    // SAFETY: add_one(int* x, int n) touches x[0..n) of buffers of N ints.
    unsafe {
        add_one.launch(cfg, &stream, (&mut counter, N as i32))?;
        add_one.launch(cfg, &stream, (&mut copy, N as i32))?;
    }
    let graph = session.end()?;
    assert_eq!(graph.node_count()?, 3);
    assert_eq!(graph.memory_used(), 3);
    assert_eq!(graph.pool_footprint(), (2, 2 * N * 4));
    drop(x); // the graph keeps it

    memset_d32_async(&mut counter, 0, N, &stream)?; // eager work on pool memory
    for _ in 0..5 {
        graph.replay(&stream)?;
    }
    let other = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    graph.replay(&other)?; // ordered after the replays on `stream`
    assert!(counter.to_vec()?.iter().all(|&v| v == 6));
    assert!(copy.to_vec()?.iter().all(|&v| v == 4));
    drop(graph);
    // The pool's buffers outlive the graph.
    memset_d32_async(&mut counter, 9, N, &stream)?;
    assert!(counter.to_vec()?.iter().all(|&v| v == 9));
    drop((counter, copy));
    ctx.check_deferred_errors()
}

#[test]
#[ignore = "needs a CUDA device"]
fn memory_without_a_kept_owner_is_refused() -> Result<()> {
    let ctx = common::ctx();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let mut bare = DeviceBuffer::<u32>::zeros(&ctx, N)?;
    let session = CaptureSession::begin(&stream)?;
    let refused = memset_d32_async(&mut bare, 7, N, &stream);
    assert!(
        matches!(refused, Err(Error::Uncapturable { .. })),
        "{refused:?}"
    );
    match session.end() {
        Err(Error::Uncapturable { operation, .. }) => {
            assert_eq!(operation, "work on memory the graph cannot keep alive")
        }
        other => panic!("expected Uncapturable, got {other:?}"),
    }
    assert!(!stream.is_capturing()?);
    // Nothing ran, and the stream works eagerly again.
    memset_d32_async(&mut bare, 5, N, &stream)?;
    assert!(bare.to_vec()?.iter().all(|&v| v == 5));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_synchronous_call_inside_a_session_is_named() -> Result<()> {
    let ctx = common::ctx();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let session = CaptureSession::begin(&stream)?;
    assert!(stream.synchronize().is_err());
    match session.end() {
        Err(Error::Uncapturable { operation, .. }) => assert_eq!(operation, "cuStreamSynchronize"),
        other => panic!("expected Uncapturable, got {other:?}"),
    }
    Ok(())
}

/// Review finding: ending the session's capture with the raw `Stream::end_capture` and
/// beginning another would have let `end` hand over a graph of work it never listed (a
/// safe replay into freed memory). The session checks that the capture is still its own.
#[test]
#[ignore = "needs a CUDA device"]
fn a_capture_ended_or_replaced_behind_the_sessions_back_is_refused() -> Result<()> {
    let ctx = common::ctx();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let mut victim = DeviceBuffer::<u32>::zeros(&ctx, N)?;
    let session = CaptureSession::begin(&stream)?;
    drop(stream.end_capture()?); // behind the session's back
    stream.begin_capture(CaptureMode::ThreadLocal)?; // a capture no session knows
    memset_d32_async(&mut victim, 7, N, &stream)?;
    match session.end() {
        Err(Error::Uncapturable { operation, .. }) => {
            assert!(operation.contains("end_capture"), "{operation}")
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("a graph of unlisted work was handed over"),
    }
    // The raw capture is left to its owner (its graph's launch is unsafe).
    assert!(stream.is_capturing()?);
    drop(stream.end_capture()?);
    assert_eq!(
        victim.to_vec()?,
        vec![0; N],
        "the captured memset never ran"
    );
    Ok(())
}

/// Review finding: host access to page-locked memory whose writer's stream began
/// capturing could not wait for that writer, and `Deref` used to hand out the elements
/// anyway (racing the copy). Now the slice is empty and `as_slice` returns the error.
#[test]
#[ignore = "needs a CUDA device"]
fn host_access_while_the_writers_stream_captures_gets_no_elements() -> Result<()> {
    let ctx = common::ctx();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let n = 1 << 24;
    let dev = DeviceBuffer::from_slice(&ctx, &vec![5.0f32; n])?;
    let mut host = PinnedHostBuffer::<f32>::zeros(&ctx, n, HostAllocFlags::empty())?;
    memcpy_dtoh_async(&mut host, &dev, &stream)?;
    let session = CaptureSession::begin(&stream)?;
    assert!(
        host.as_slice().is_err(),
        "a wait on a capturing stream cannot succeed"
    );
    assert_eq!(host.len(), n);
    assert!((*host).is_empty(), "no elements while the copy may run");
    drop(session);
    // The failed wait was queued on the context.
    assert!(ctx.check_deferred_errors().is_err());
    assert!(
        host.iter().all(|&v| v == 5.0),
        "after the capture, the copy's data"
    );
    Ok(())
}
