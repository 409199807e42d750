//! GPU fault test of the DeviceMemoryPool: when the device is full of blocks the pool
//! holds, a request of another size frees what the pool holds and succeeds (the
//! retry-after-`free_held` path); a request nothing can satisfy is a typed `Memory`
//! error and leaves the pool usable; at the end every byte is back.

use rucuda::driver::{Device, ErrorKind};
use rucuda::tools::DeviceMemoryPool;

const GIB: usize = 1 << 30;
const SLACK: usize = 128 << 20;

/// True (and the bundle's skip line printed) under `run.sh sanitize`: this test provokes
/// driver errors on purpose, which compute-sanitizer reports as errors.
fn skipped_under_sanitizer() -> bool {
    match std::env::var("RUCUDA_SANITIZER") {
        Ok(tool) => {
            println!(
                "RUCUDA_SKIPPED: provokes driver errors on purpose, which compute-sanitizer \
                 ({tool}) reports"
            );
            true
        }
        Err(_) => false,
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_full_pool_frees_what_it_holds_and_retries() {
    if skipped_under_sanitizer() {
        return;
    }
    let ctx = Device::get(0)
        .and_then(Device::primary_context)
        .expect("a CUDA device (this test is ignored unless the GPU bundle runs it)");
    ctx.synchronize().unwrap();
    let (free_before, total) = ctx.mem_get_info().unwrap();
    let pool = DeviceMemoryPool::new(&ctx);
    // Fill the device with 1 GiB blocks until the pool cannot get another.
    let mut blocks = Vec::new();
    let err = loop {
        assert!(blocks.len() <= total / GIB + 1, "no out-of-memory");
        match pool.allocate(GIB) {
            Ok(b) => blocks.push(b),
            Err(e) => break e,
        }
    };
    assert_eq!(err.kind(), ErrorKind::Memory, "{err}");
    assert!(blocks.len() >= 2);
    let n = blocks.len();
    // Give them back to the pool: held, not freed.
    drop(blocks);
    assert_eq!((pool.held_blocks(), pool.active_blocks()), (n, 0));
    let (free_full, _) = ctx.mem_get_info().unwrap();
    assert!(free_full < GIB + GIB / 2, "{free_full} bytes still free");
    // 1.5 GiB is another bin: no held block fits, the driver has no room; the pool
    // frees what it holds and tries again.
    let big = pool
        .allocate(GIB + GIB / 2)
        .expect("the retry after free_held succeeds");
    assert_eq!(pool.held_blocks(), 0);
    assert_eq!(pool.active_blocks(), 1);
    // A request larger than the device: a typed error, the pool still works.
    let e = pool.allocate(total * 2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Memory, "{e}");
    let small = pool.allocate(4096).unwrap();
    drop((big, small));
    pool.free_held().unwrap();
    assert_eq!(pool.managed_bytes(), 0);
    ctx.synchronize().unwrap();
    ctx.check_deferred_errors().unwrap();
    let (free_after, _) = ctx.mem_get_info().unwrap();
    assert!(
        free_after + SLACK >= free_before,
        "free memory {free_before} before, {free_after} after"
    );
}
