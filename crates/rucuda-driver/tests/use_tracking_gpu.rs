//! GPU tests of use tracking (`memory::tracking`): safe calls never let queued work land
//! in memory that was freed, reused or read on the host meanwhile. Each uses safe calls
//! only (the spin kernel that keeps a stream busy is the one `unsafe` launch, and touches
//! no memory): a stream is kept busy, the safe call queues work behind it, the memory is
//! dropped, reused or read on the host at once, and the result is checked after
//! everything finished. Without the tracking, the late work lands in the wrong place.

mod common;
#[path = "kernels/spin.rs"]
mod spin;

use common::ctx;

use rucuda_driver::*;

const N: usize = 1 << 20;

fn non_blocking(c: &Context) -> Stream {
    Stream::new(c, StreamFlags::NON_BLOCKING).unwrap()
}

/// A stream-ordered buffer of `N` copies of `value`, set and finished on `home`.
fn filled(home: &Stream, value: u32) -> DeviceBuffer<u32> {
    let mut b = DeviceBuffer::<u32>::uninit_async(home, N).unwrap();
    memset_d32_async(&mut b, value, N, home).unwrap();
    home.synchronize().unwrap();
    b
}

/// A synchronous device-to-device copy queued behind busy work on the legacy stream,
/// whose stream-ordered source is dropped and its memory reused at once.
#[test]
#[ignore = "needs a CUDA device"]
fn a_synchronous_dtod_copy_has_read_its_source_when_it_returns() {
    let c = ctx();
    let m = spin::core_kernels(&c);
    let home = non_blocking(&c);
    let src = filled(&home, 1);
    let mut dst = DeviceBuffer::<u32>::zeros(&c, N).unwrap();
    spin::spin(&m, &Stream::null(&c));
    memcpy_dtod(&c, &mut dst, &src).unwrap();
    drop(src); // freed on `home`, which is idle
    let again = filled(&home, 7);
    Stream::null(&c).synchronize().unwrap();
    let got = dst.to_vec().unwrap();
    assert!(
        got.iter().all(|&v| v == 1),
        "the copy read the next owner's data ({} of {N} elements are not 1)",
        got.iter().filter(|&&v| v != 1).count()
    );
    drop(again);
    c.check_deferred_errors().unwrap();
}

/// The same through `DeviceBuffer::copy_from_device`.
#[test]
#[ignore = "needs a CUDA device"]
fn copy_from_device_has_read_its_source_when_it_returns() {
    let c = ctx();
    let m = spin::core_kernels(&c);
    let home = non_blocking(&c);
    let src = filled(&home, 3);
    let mut dst = DeviceBuffer::<u32>::zeros(&c, N).unwrap();
    spin::spin(&m, &Stream::null(&c));
    dst.copy_from_device(&src).unwrap();
    drop(src);
    let again = filled(&home, 9);
    Stream::null(&c).synchronize().unwrap();
    assert!(dst.to_vec().unwrap().iter().all(|&v| v == 3));
    drop(again);
    c.check_deferred_errors().unwrap();
}

/// A memset queued into a mapped page-locked view behind busy work; the host reads
/// the buffer at once, then writes it.
#[test]
#[ignore = "needs a CUDA device"]
fn host_access_to_mapped_memory_waits_for_work_through_its_views() {
    let c = ctx();
    let m = spin::core_kernels(&c);
    let other = non_blocking(&c);
    let mut host = PinnedHostBuffer::<u32>::zeros(&c, N, HostAllocFlags::DEVICEMAP).unwrap();
    spin::spin(&m, &other);
    memset_d32_async(&mut host.device_view_mut().unwrap(), 5, N, &other).unwrap();
    // A shared read waits for the write queued through the view.
    assert_eq!(host[N - 1], 5, "the host read before the queued memset ran");
    spin::spin(&m, &other);
    memset_d32_async(&mut host.device_view_mut().unwrap(), 6, N, &other).unwrap();
    // A host write waits too, so the earlier queued memset cannot overwrite it.
    host[0] = 42;
    other.synchronize().unwrap();
    assert_eq!(host[0], 42, "a queued memset overwrote a later host write");
    assert_eq!(host[1], 6);
    c.check_deferred_errors().unwrap();
}

/// An unrelated error queued by a destructor must not make the wait before host
/// access skip its work.
#[test]
#[ignore = "needs a CUDA device"]
fn a_queued_destructor_error_does_not_skip_waiting() {
    let c = ctx();
    let m = spin::core_kernels(&c);
    let other = non_blocking(&c);
    let mut host = PinnedHostBuffer::<u32>::zeros(&c, N, HostAllocFlags::DEVICEMAP).unwrap();
    spin::spin(&m, &other);
    memset_d32_async(&mut host.device_view_mut().unwrap(), 8, N, &other).unwrap();
    // SAFETY: a deliberately bogus allocation: its drop's cuMemFree fails and queues an
    // error on the context; the address is never used for work.
    drop(unsafe { DeviceBuffer::<u8>::from_raw(&c, 0xdead_0000, 16) });
    assert_eq!(
        host[N / 2],
        8,
        "the wait was skipped because of the queued error"
    );
    other.synchronize().unwrap_err(); // the queued error comes out here
    other.synchronize().unwrap();
    assert_eq!(host[0], 8);
}

/// Work on two streams that use one buffer is ordered: a read on another stream waits
/// for the write before it, and a write waits for the reads before it.
#[test]
#[ignore = "needs a CUDA device"]
fn conflicting_work_on_two_streams_is_ordered() {
    let c = ctx();
    let m = spin::core_kernels(&c);
    let (a, b) = (non_blocking(&c), non_blocking(&c));
    let mut x = DeviceBuffer::<u32>::zeros(&c, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeros(&c, N).unwrap();
    // Write x on `a` behind a spin, then copy x into y on `b`: the copy must see 4s.
    spin::spin(&m, &a);
    memset_d32_async(&mut x, 4, N, &a).unwrap();
    memcpy_dtod_async(&mut y, &x, &b).unwrap();
    b.synchronize().unwrap();
    assert!(
        y.to_vec().unwrap().iter().all(|&v| v == 4),
        "read before the write"
    );
    // Read x on `b` behind a spin, then overwrite x on `a`: the copy must still see 4s.
    spin::spin(&m, &b);
    memcpy_dtod_async(&mut y, &x, &b).unwrap();
    memset_d32_async(&mut x, 9, N, &a).unwrap();
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    assert!(
        y.to_vec().unwrap().iter().all(|&v| v == 4),
        "write before the read"
    );
    assert!(x.to_vec().unwrap().iter().all(|&v| v == 9));
    c.check_deferred_errors().unwrap();
}

/// A `cuCtxSetCurrent` made behind rucuda's back (as the runtime API, NCCL or CuPy
/// do) must not put an allocation into the wrong context.
#[test]
#[ignore = "needs a CUDA device"]
fn a_foreign_context_switch_does_not_misplace_allocations() {
    let a = ctx();
    let b = a.device().make_context(ContextFlags::empty()).unwrap();
    let warm = DeviceBuffer::<u8>::uninit(&a, 16).unwrap(); // `a` is current, cached
    let set_current = driver().unwrap().cuCtxSetCurrent().unwrap();
    // SAFETY: a context handle that is alive (`b`); a foreign library's switch.
    let switched = unsafe { set_current(b.raw()) };
    assert_eq!(switched, rucuda_driver::sys::CUresult::CUDA_SUCCESS);
    let buf = DeviceBuffer::<u32>::uninit(&a, 1024).unwrap();
    let attrs = pointer_attributes(&a, buf.device_range().address()).unwrap();
    assert_eq!(
        attrs.context,
        Some(a.raw()),
        "the allocation landed in the context a foreign call made current"
    );
    drop((warm, buf));
    a.check_deferred_errors().unwrap();
}

/// A use stays pending until its `InUse` is dropped (after the work is queued): a
/// conflicting use by the same thread on another stream in that window is refused,
/// since no event can cover work that is not queued yet; once the use is dropped, the
/// same call is ordered by events as usual.
#[test]
#[ignore = "needs a CUDA device"]
fn a_conflicting_use_of_a_pending_use_on_another_stream_is_refused() {
    let c = ctx();
    let (s1, s2) = (non_blocking(&c), non_blocking(&c));
    let buf = filled(&s1, 3);
    let mut out = DeviceBuffer::<u32>::zeros(&c, N).unwrap();
    let pending = buf.device_range().use_on(&s1, Access::Write).unwrap();
    let refused = memcpy_dtod_async(&mut out, &buf, &s2);
    assert!(
        matches!(&refused, Err(e) if e.to_string().contains("not queued yet")),
        "{refused:?}"
    );
    drop(pending);
    memcpy_dtod_async(&mut out, &buf, &s2).unwrap();
    s2.synchronize().unwrap();
    assert!(out.to_vec().unwrap().iter().all(|&v| v == 3));
    c.check_deferred_errors().unwrap();
}

/// Two threads, each holding a pending use of one buffer, each asking for the other's
/// in conflict: the second to ask would wait for a thread that waits for it. It gets an
/// error instead, and the first proceeds once the second lets its use go: no deadlock.
#[test]
#[ignore = "needs a CUDA device"]
fn threads_waiting_for_each_others_pending_uses_do_not_deadlock() {
    let c = ctx();
    let (s1, s2) = (non_blocking(&c), non_blocking(&c));
    let a = filled(&s1, 1);
    let b = filled(&s2, 2);
    let barrier = std::sync::Barrier::new(2);
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if done_rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .is_err()
        {
            eprintln!("threads not done after 60 s: a deadlock; aborting");
            std::process::abort();
        }
    });
    let one = |first: &DeviceBuffer<u32>, second: &DeviceBuffer<u32>, stream: &Stream| {
        let held = first.device_range().use_on(stream, Access::Write).unwrap();
        barrier.wait();
        let got = second.device_range().use_on(stream, Access::Read).map(drop);
        drop(held);
        got.is_ok()
    };
    let results: Vec<bool> = std::thread::scope(|s| {
        let t1 = s.spawn(|| one(&a, &b, &s1));
        let t2 = s.spawn(|| one(&b, &a, &s2));
        vec![t1.join().unwrap(), t2.join().unwrap()]
    });
    let _ = done_tx.send(());
    watchdog.join().unwrap();
    assert_eq!(
        results.iter().filter(|&&ok| ok).count(),
        1,
        "exactly one thread waits and proceeds, the other is refused: {results:?}"
    );
    c.check_deferred_errors().unwrap();
}
