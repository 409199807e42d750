//! GPU tests under threads: sixteen threads sharing one context, each launching,
//! allocating (synchronously and stream-ordered) and freeing for a few seconds with
//! every result checked against the CPU; contexts (the primary one and created ones)
//! pushed and popped on several threads at once.
//!
//! Every test runs its threads under a watchdog: if they are not all joined in time,
//! the process aborts with a message naming the test (a deadlock must not hang the
//! bundle until its per-test timeout, with nothing said).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{core_module, ctx, Rng};
use rucuda_driver::*;

/// How long each thread keeps working.
const SOAK: Duration = Duration::from_millis(2500);
/// How long the threads may take, all together, before we call it a deadlock: longer
/// under compute-sanitizer, where every launch and allocation is intercepted and other
/// test binaries share the GPU.
fn watchdog_limit() -> Duration {
    Duration::from_secs(rucuda_testkit::scaled_for_sanitizer(120, 600))
}
const THREADS: usize = 16;

/// Runs `body(thread_index)` on `n` threads and joins them all, or aborts the process
/// with a clear message after [`watchdog_limit`]. A panic in a thread fails the test.
fn run_threads(test: &'static str, n: usize, body: impl Fn(usize) + Send + Sync + 'static) {
    let body = Arc::new(body);
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let limit = watchdog_limit();
    let watchdog = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(limit) {
            eprintln!(
                "{test}: the threads were not all joined after {limit:?}: a deadlock \
                 (or a hung GPU); aborting"
            );
            std::process::abort();
        }
    });
    let handles: Vec<_> = (0..n)
        .map(|t| {
            let body = body.clone();
            std::thread::Builder::new()
                .name(format!("{test}-{t}"))
                .spawn(move || body(t))
                .expect("spawn a thread")
        })
        .collect();
    let mut panics = Vec::new();
    for (t, h) in handles.into_iter().enumerate() {
        if let Err(p) = h.join() {
            panics.push((t, p));
        }
    }
    let _ = done_tx.send(());
    let _ = watchdog.join();
    if let Some((t, p)) = panics.into_iter().next() {
        eprintln!("{test}: thread {t} panicked");
        std::panic::resume_unwind(p);
    }
}

/// A seed per thread from one base seed, printed (RUCUDA_TEST_SEED replays it).
fn thread_seeds(n: usize) -> Vec<u64> {
    let mut base = Rng::fresh();
    (0..n).map(|_| base.next_u64()).collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn sixteen_threads_launch_allocate_and_free_on_one_context() {
    if rucuda_testkit::skip_under_sanitizer_tools(
        &["racecheck"],
        "racecheck loses kernels launched from many threads at once (\"Internal Sanitizer \
         Error: Detected a failure to track a kernel launch\", then a hang)",
    ) {
        return;
    }
    let c = ctx();
    let module = core_module(&c);
    let saxpy = module.function("saxpy").unwrap();
    let add_one = module.function("add_one").unwrap();
    let seeds = thread_seeds(THREADS);
    let iterations = Arc::new(AtomicUsize::new(0));
    let (c2, its) = (c.clone(), iterations.clone());
    run_threads(
        "sixteen_threads_launch_allocate_and_free_on_one_context",
        THREADS,
        move |t| {
            let c = &c2;
            let mut rng = Rng::new(seeds[t]);
            // Half the threads on their own non-blocking stream, a quarter on a blocking
            // one, the rest on the legacy default stream.
            let stream = match t % 4 {
                0 | 1 => Stream::new(c, StreamFlags::NON_BLOCKING).unwrap(),
                2 => Stream::new(c, StreamFlags::DEFAULT).unwrap(),
                _ => Stream::null(c),
            };
            let t0 = Instant::now();
            let mut mine = 0usize;
            while t0.elapsed() < SOAK {
                let n = 1 + (rng.next_u64() % 200_000) as usize;
                let a = rng.f32();
                let x = rng.vec_f32(n);
                let y = rng.vec_f32(n);
                // Inputs allocated synchronously, the output stream-ordered.
                let dx = DeviceBuffer::from_slice(c, &x).unwrap();
                let dy = DeviceBuffer::from_slice(c, &y).unwrap();
                let mut out = DeviceBuffer::<f32>::uninit_async(&stream, n).unwrap();
                // SAFETY: saxpy(a, x, y, out, n) reads x[0..n), y[0..n), writes out[0..n).
                unsafe {
                    saxpy
                        .launch(
                            LaunchConfig::for_elements(n, 256),
                            &stream,
                            (a, &dx, &dy, &mut out, n as u64),
                        )
                        .unwrap()
                };
                // A stream-ordered temporary freed before the stream has run: its free is
                // ordered after the launch that uses it.
                let m = 1 + (rng.next_u64() % 50_000) as usize;
                let base: Vec<i32> = (0..m as i32).map(|i| i ^ t as i32).collect();
                let mut scratch = DeviceBuffer::<i32>::uninit_async(&stream, m).unwrap();
                let pinned =
                    PinnedHostBuffer::from_slice(c, &base, HostAllocFlags::empty()).unwrap();
                memcpy_htod_async(&mut scratch, &pinned, &stream).unwrap();
                // Dropping the pinned buffer waits for the copy that reads it.
                drop(pinned);
                // SAFETY: add_one(int* x, int n) touches x[0..n).
                unsafe {
                    add_one
                        .launch(
                            LaunchConfig::for_elements(m, 128),
                            &stream,
                            (&mut scratch, m as i32),
                        )
                        .unwrap()
                };
                let check_scratch = rng.next_u64() % 2 == 0;
                let scratch_back = if check_scratch {
                    stream.synchronize().unwrap();
                    Some(scratch.to_vec().unwrap())
                } else {
                    None
                };
                drop(scratch);
                stream.synchronize().unwrap();
                let got = out.to_vec().unwrap();
                for (k, g) in got.iter().enumerate() {
                    let want = a * x[k] + y[k];
                    assert!(
                        (g - want).abs() <= 1e-5 * want.abs().max(1.0),
                        "thread {t}, n {n}, element {k}: got {g}, want {want}"
                    );
                }
                if let Some(back) = scratch_back {
                    assert!(
                        back.iter().zip(&base).all(|(b, h)| *b == h + 1),
                        "thread {t}: add_one result"
                    );
                }
                // Free explicitly half of the time (errors returned), else by drop.
                if rng.next_u64() % 2 == 0 {
                    out.free().unwrap();
                    dx.free().unwrap();
                } else {
                    drop(out);
                    drop(dx);
                }
                drop(dy);
                mine += 1;
            }
            assert!(mine > 0, "thread {t} did no iteration");
            its.fetch_add(mine, Ordering::Relaxed);
        },
    );
    c.synchronize().unwrap();
    c.check_deferred_errors().unwrap();
    println!(
        "{} iterations over {THREADS} threads in {SOAK:?}",
        iterations.load(Ordering::Relaxed)
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn contexts_are_pushed_and_popped_on_many_threads() {
    let dev = Device::get(0).unwrap();
    let primary = dev.primary_context().unwrap();
    // Two created contexts (make_context leaves each current here; unbind by binding the
    // primary one again).
    let created: Vec<Context> = (0..2)
        .map(|_| dev.make_context(ContextFlags::SCHED_AUTO).unwrap())
        .collect();
    primary.bind().unwrap();
    let all: Vec<Context> = std::iter::once(primary.clone())
        .chain(created.iter().cloned())
        .collect();
    let functions: Vec<Function> = all
        .iter()
        .map(|c| core_module(c).function("add_one").unwrap())
        .collect();
    let seeds = thread_seeds(8);
    let all2 = all.clone();
    run_threads(
        "contexts_are_pushed_and_popped_on_many_threads",
        8,
        move |t| {
            let mut rng = Rng::new(seeds[t]);
            // A fresh thread has no current context.
            assert!(Context::current().unwrap().is_none(), "thread {t}");
            let t0 = Instant::now();
            let mut rounds = 0;
            while t0.elapsed() < SOAK {
                let i = (rng.next_u64() % all2.len() as u64) as usize;
                let j = (rng.next_u64() % all2.len() as u64) as usize;
                let (outer, inner) = (&all2[i], &all2[j]);
                outer.push().unwrap();
                assert_eq!(
                    Context::current().unwrap().as_ref(),
                    Some(outer),
                    "thread {t}"
                );
                inner.push().unwrap();
                assert_eq!(
                    Context::current().unwrap().as_ref(),
                    Some(inner),
                    "thread {t}"
                );
                // Work in the inner context through its own objects.
                let n = 1 + (rng.next_u64() % 10_000) as usize;
                let host: Vec<i32> = (0..n as i32).map(|k| k * 7 - t as i32).collect();
                let mut buf = DeviceBuffer::from_slice(inner, &host).unwrap();
                let stream = Stream::new(inner, StreamFlags::NON_BLOCKING).unwrap();
                // SAFETY: add_one(int* x, int n) touches x[0..n).
                unsafe {
                    functions[j]
                        .launch(
                            LaunchConfig::for_elements(n, 128),
                            &stream,
                            (&mut buf, n as i32),
                        )
                        .unwrap()
                };
                stream.synchronize().unwrap();
                let back = buf.to_vec().unwrap();
                assert!(
                    back.iter().zip(&host).all(|(b, h)| *b == h + 1),
                    "thread {t}: wrong result in context {j}"
                );
                drop((buf, stream));
                // Popping the inner context uncovers the outer one.
                Context::pop().unwrap();
                assert_eq!(
                    Context::current().unwrap().as_ref(),
                    Some(outer),
                    "thread {t}"
                );
                // Objects of the outer context still work after the pop (the thread-local
                // binding is re-checked, not trusted).
                let b = DeviceBuffer::from_slice(outer, &[t as u32, 1, 2]).unwrap();
                assert_eq!(b.to_vec().unwrap(), vec![t as u32, 1, 2]);
                drop(b);
                Context::pop().unwrap();
                rounds += 1;
            }
            // Everything pushed was popped: the stack is empty again.
            assert!(Context::current().unwrap().is_none(), "thread {t}");
            assert!(rounds > 0);
        },
    );
    for c in &all {
        c.synchronize().unwrap();
        c.check_deferred_errors().unwrap();
    }
    // The closure (and the modules it held) went with run_threads.
    for c in created {
        c.detach().unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn threads_that_bind_different_contexts_in_turn_get_right_results() {
    if rucuda_testkit::skip_under_sanitizer_tools(
        &["racecheck"],
        "racecheck loses kernels launched from many threads at once (\"Internal Sanitizer \
         Error: Detected a failure to track a kernel launch\", then a hang)",
    ) {
        return;
    }
    // Each thread switches between the primary context and its own created context with
    // bind() (the thread-local fast path), never push/pop, many times a second.
    let dev = Device::get(0).unwrap();
    let primary = dev.primary_context().unwrap();
    let module = core_module(&primary);
    let add_one = module.function("add_one").unwrap();
    run_threads(
        "threads_that_bind_different_contexts_in_turn_get_right_results",
        8,
        move |t| {
            let own = dev.make_context(ContextFlags::SCHED_AUTO).unwrap();
            let own_add = core_module(&own).function("add_one").unwrap();
            let t0 = Instant::now();
            let mut k = 0i32;
            while t0.elapsed() < SOAK {
                for (c, f) in [(&primary, &add_one), (&own, &own_add)] {
                    let mut buf = DeviceBuffer::from_slice(c, &[k, k + 1, k + 2]).unwrap();
                    // SAFETY: add_one(int* x, int n) touches x[0..n).
                    unsafe {
                        f.launch(LaunchConfig::linear(1, 32), &Stream::null(c), (&mut buf, 3))
                            .unwrap()
                    };
                    assert_eq!(
                        buf.to_vec().unwrap(),
                        vec![k + 1, k + 2, k + 3],
                        "thread {t}"
                    );
                }
                k += 1;
            }
            own.synchronize().unwrap();
            drop(own_add);
            own.detach().unwrap();
        },
    );
}
