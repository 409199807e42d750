//! GPU test of the DeviceMemoryPool under threads: sixteen threads take blocks from one
//! pool, write a pattern of their own into each with a kernel, read it back and return
//! the block, for a few seconds. Two threads handed one block at once would see each
//! other's pattern. At the end the counters balance and freeing what is held gives
//! every byte back. The threads run under a watchdog that aborts with a message instead
//! of hanging on a deadlock.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use rucuda::driver::{
    memcpy_dtoh, Device, DeviceBuffer, LaunchConfig, Module, Stream, StreamFlags,
};
use rucuda::tools::DeviceMemoryPool;

const SOAK: Duration = Duration::from_millis(2500);
/// How long the threads may take, all together, before we call it a deadlock: longer
/// under compute-sanitizer, where every launch and allocation is intercepted and other
/// test binaries share the GPU.
fn watchdog_limit() -> Duration {
    Duration::from_secs(rucuda_testkit::scaled_for_sanitizer(120, 600))
}
const THREADS: usize = 16;
/// Element counts (f32) the threads ask for: a few bins, so blocks are reused across
/// threads all the time.
const SIZES: [usize; 6] = [1, 256, 1000, 4096, 65_536, 300_000];

#[test]
#[ignore = "needs a CUDA device"]
fn sixteen_threads_share_one_device_memory_pool() {
    let ctx = Device::get(0)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)");
    let module = Module::load_data(
        &ctx,
        include_str!("../../rucuda-driver/tests/kernels/core.ptx").as_bytes(),
    )
    .unwrap();
    let saxpy = module.function("saxpy").unwrap();
    let pool = DeviceMemoryPool::new(&ctx);
    let (free_before, _) = ctx.mem_get_info().unwrap();

    let (done_tx, done_rx) = mpsc::channel::<()>();
    let limit = watchdog_limit();
    let watchdog = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(limit) {
            eprintln!(
                "sixteen_threads_share_one_device_memory_pool: threads not joined after \
                 {limit:?}: a deadlock; aborting"
            );
            std::process::abort();
        }
    });
    let rounds: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (ctx, pool, saxpy) = (&ctx, &pool, &saxpy);
                s.spawn(move || {
                    let stream = Stream::new(ctx, StreamFlags::NON_BLOCKING).unwrap();
                    let zeros_len = *SIZES.iter().max().unwrap();
                    let zeros = DeviceBuffer::<f32>::zeros(ctx, zeros_len).unwrap();
                    let t0 = Instant::now();
                    let mut round = 0usize;
                    while t0.elapsed() < SOAK {
                        let n = SIZES[(round * 5 + t) % SIZES.len()];
                        // A pattern no other thread or round writes.
                        let tag = (t * 1_000_003 + round) as f32;
                        let pattern: Vec<f32> = (0..n).map(|i| tag + i as f32 * 0.25).collect();
                        let src = DeviceBuffer::from_slice(ctx, &pattern).unwrap();
                        let block = pool.allocate(n * 4).unwrap();
                        assert!(block.len() >= n * 4);
                        let ys = zeros.slice(..n).unwrap();
                        // SAFETY: saxpy(a, x, y, out, n) reads x[0..n), y[0..n) and writes
                        // out[0..n); the block holds at least n floats.
                        unsafe {
                            saxpy
                                .launch(
                                    LaunchConfig::for_elements(n, 256),
                                    &stream,
                                    (1.0f32, &src, ys, &block, n as u64),
                                )
                                .unwrap()
                        };
                        stream.synchronize().unwrap();
                        // Hold it a little while others allocate and free.
                        std::thread::yield_now();
                        let mut back = vec![0f32; n];
                        memcpy_dtoh(ctx, &mut back, &block).unwrap();
                        assert_eq!(back, pattern, "thread {t}, round {round}: block shared?");
                        drop(block);
                        round += 1;
                    }
                    assert!(round > 0);
                    round
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .sum()
    });
    let _ = done_tx.send(());
    let _ = watchdog.join();

    assert_eq!(pool.active_blocks(), 0);
    assert_eq!(pool.active_bytes(), 0);
    assert!(pool.held_blocks() > 0);
    assert!(pool.held_blocks() <= THREADS * SIZES.len());
    pool.free_held().unwrap();
    assert_eq!((pool.held_blocks(), pool.managed_bytes()), (0, 0));
    ctx.synchronize().unwrap();
    ctx.check_deferred_errors().unwrap();
    // Every byte back (within the driver's own bookkeeping slack). Not checked where
    // other test processes allocate on the same GPU meanwhile.
    let (free_after, _) = ctx.mem_get_info().unwrap();
    assert!(
        free_after + (64 << 20) >= free_before || rucuda_testkit::gpu_shared(),
        "free memory {free_before} before, {free_after} after"
    );
    println!("{rounds} allocate/write/read/free rounds over {THREADS} threads");
}
