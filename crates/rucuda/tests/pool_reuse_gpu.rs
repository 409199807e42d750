//! M7: a block returned to a `DeviceMemoryPool` while work on another stream still uses
//! it is handed out again at once; the next owner's work must wait for that work.

use rucuda::driver::*;
use rucuda::tools::DeviceMemoryPool;

#[path = "../../rucuda-driver/tests/kernels/spin.rs"]
mod spin;

const N: usize = 1 << 20;

#[test]
#[ignore = "needs a CUDA device"]
fn a_reused_pool_block_waits_for_the_last_owners_work() {
    let c = Device::get(0).and_then(Device::primary_context).unwrap();
    let m = spin::core_kernels(&c);
    let other = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let next = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let pool = DeviceMemoryPool::new(&c);
    let mut first = pool.allocate(4 * N).unwrap();
    memset_d32(&c, &mut first, 0, N).unwrap();
    spin::spin(&m, &other);
    // A stale write queued behind the spin, then the block goes back to the pool.
    memset_d32_async(&mut first, 1, N, &other).unwrap();
    drop(first);
    let mut second = pool.allocate(4 * N).unwrap();
    assert_eq!(pool.held_blocks(), 0, "the pool handed out another block");
    // The next owner writes on a third stream: it must wait for the stale write.
    memset_d32_async(&mut second, 7, N, &next).unwrap();
    next.synchronize().unwrap();
    other.synchronize().unwrap();
    let mut host = vec![0u32; N];
    memcpy_dtoh(&c, &mut host, &second).unwrap();
    assert!(
        host.iter().all(|&v| v == 7),
        "the last owner's queued memset landed in the next owner's data ({} elements)",
        host.iter().filter(|&&v| v != 7).count()
    );
    c.check_deferred_errors().unwrap();
}
