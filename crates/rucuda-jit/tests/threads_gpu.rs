//! GPU test of the JIT under threads: sixteen threads compile and load through the memo
//! and the disk cache at once (one source shared by all, one of their own each), launch
//! what they got and check it against the CPU, for a few seconds. Every caller of the
//! shared source must end up with the one memoized module. The threads run under a
//! watchdog that aborts with a message instead of hanging on a deadlock.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use rucuda_driver::{Device, DeviceBuffer, LaunchConfig, Stream, StreamFlags};
use rucuda_jit::{CompileOptions, SourceModule};

const SOAK: Duration = Duration::from_millis(2500);
/// How long the threads may take, all together, before we call it a deadlock: longer
/// under compute-sanitizer, where every launch and allocation is intercepted and other
/// test binaries share the GPU.
fn watchdog_limit() -> Duration {
    Duration::from_secs(rucuda_testkit::scaled_for_sanitizer(300, 600))
}
const THREADS: usize = 16;

const FILL: &str = r#"
__global__ void fill(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i * FACTOR + OFFSET;
}
"#;

#[test]
#[ignore = "needs a CUDA device"]
fn sixteen_threads_share_the_memo_and_the_disk_cache() {
    if rucuda_testkit::skip_under_sanitizer_tools(
        &["initcheck"],
        "initcheck reported reads of stream-ordered buffers that the kernel had written (the \
         values are checked): it loses track of pool memory reused across 16 threads",
    ) {
        return;
    }
    let ctx = Device::get(0)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)");
    let tmp = tempfile::Builder::new()
        .prefix("rucuda-jit-threads-")
        .tempdir()
        .expect("a temporary folder");
    let dir = tmp.path().join("cache");
    let base = CompileOptions::new().cache_dir(Some(dir.clone()));
    let shared_opts = base.clone().define("FACTOR", "3").define("OFFSET", "-7");
    let hits = Arc::new(AtomicUsize::new(0));

    let (done_tx, done_rx) = mpsc::channel::<()>();
    let limit = watchdog_limit();
    let watchdog = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(limit) {
            eprintln!(
                "sixteen_threads_share_the_memo_and_the_disk_cache: threads not joined after \
                 {limit:?}: a deadlock; aborting"
            );
            std::process::abort();
        }
    });
    let shared_modules: Vec<Arc<SourceModule>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (ctx, base, shared_opts, hits) = (&ctx, &base, &shared_opts, &hits);
                s.spawn(move || {
                    let stream = Stream::new(ctx, StreamFlags::NON_BLOCKING).unwrap();
                    let own_opts = base
                        .clone()
                        .define("FACTOR", (t + 1).to_string())
                        .define("OFFSET", (100 * t).to_string());
                    let mut first_shared = None;
                    let t0 = Instant::now();
                    let mut round = 0usize;
                    while t0.elapsed() < SOAK || round < 2 {
                        for (opts, factor, offset) in [
                            (shared_opts, 3i32, -7i32),
                            (&own_opts, t as i32 + 1, 100 * t as i32),
                        ] {
                            let m = SourceModule::for_context(ctx, FILL, opts).unwrap();
                            if opts == shared_opts {
                                let first = first_shared.get_or_insert_with(|| m.clone());
                                assert!(
                                    Arc::ptr_eq(first, &m),
                                    "thread {t}: the memo handed out two modules for one source"
                                );
                            }
                            if round > 0 {
                                hits.fetch_add(1, Ordering::Relaxed);
                            }
                            let n = 1 + (round * 7919 + t * 131) % 50_000;
                            let mut out = DeviceBuffer::<i32>::uninit_async(&stream, n).unwrap();
                            let fill = m.function("fill").unwrap();
                            // SAFETY: fill(int *out, int n) writes out[0..n).
                            unsafe {
                                fill.launch(
                                    LaunchConfig::for_elements(n, 256),
                                    &stream,
                                    (&mut out, n as i32),
                                )
                                .unwrap()
                            };
                            stream.synchronize().unwrap();
                            let got = out.to_vec().unwrap();
                            for (i, g) in got.iter().enumerate() {
                                assert_eq!(*g, i as i32 * factor + offset, "thread {t}, n {n}");
                            }
                        }
                        round += 1;
                    }
                    first_shared.expect("at least one round")
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let _ = done_tx.send(());
    let _ = watchdog.join();
    // Everyone holds the module the memo keeps.
    let memo = SourceModule::for_context(&ctx, FILL, &shared_opts).unwrap();
    for m in &shared_modules {
        assert!(Arc::ptr_eq(m, &memo));
    }
    // One disk entry per distinct compile: the shared source and each thread's own.
    let entries = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".entry"))
        .count();
    assert_eq!(entries, THREADS + 1, "cache entries in {}", dir.display());
    println!(
        "{} memo lookups after the first round",
        hits.load(Ordering::Relaxed)
    );
    ctx.check_deferred_errors().unwrap();
}
