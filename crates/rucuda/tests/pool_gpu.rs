//! GPU tests of the memory pools: the page-locked host pool (reuse, counters, the flags
//! reaching the driver, asynchronous copies through a kernel, drop waiting for copies,
//! stop_holding) and the device pool's out-of-memory retry.

use rucuda::driver::{
    Context, Device, DeviceBuffer, HostAllocFlags, LaunchConfig, Module, Stream, StreamFlags,
};
use rucuda::tools::{DeviceMemoryPool, PageLockedAllocator, PageLockedMemoryPool};
use rucuda_testkit::{random_i32, seed};

fn context() -> Context {
    let ctx = Device::get(0).unwrap().primary_context().unwrap();
    ctx.bind().unwrap();
    ctx
}

fn core_module(ctx: &Context) -> Module {
    Module::load_data(
        ctx,
        include_str!("../../rucuda-driver/tests/kernels/core.ptx").as_bytes(),
    )
    .unwrap()
}

#[test]
#[ignore = "needs a CUDA device"]
fn page_locked_pool_reuses_blocks_and_counts() {
    let ctx = context();
    let pool = PageLockedMemoryPool::new(&ctx);
    let a = pool.allocate::<f32>(1_000_000).unwrap();
    assert_eq!(a.len(), 1_000_000);
    assert_eq!(
        (
            pool.active_blocks(),
            pool.held_blocks(),
            pool.active_bytes()
        ),
        (1, 0, 4_000_000)
    );
    let managed = pool.managed_bytes();
    assert!((4_000_000..=5_000_000).contains(&managed), "{managed}");
    let addr = a.as_ptr() as usize;
    drop(a);
    assert_eq!((pool.active_blocks(), pool.held_blocks()), (0, 1));
    // Another type, same bin: the same block.
    let b = pool.allocate::<u32>(999_999).unwrap();
    assert_eq!(b.as_ptr() as usize, addr, "same bin reuses the block");
    assert_eq!(pool.managed_bytes(), managed);
    // A different bin: a new block.
    let c = pool.allocate::<u8>(100).unwrap();
    assert_ne!(c.as_ptr() as usize, addr);
    assert_eq!(pool.active_blocks(), 2);
    drop((b, c));
    assert_eq!(pool.held_blocks(), 2);
    pool.free_held().unwrap();
    assert_eq!((pool.held_blocks(), pool.managed_bytes()), (0, 0));
    // stop_holding: blocks dropped afterwards go straight back to the driver.
    let d = pool.allocate::<f64>(4096).unwrap();
    pool.stop_holding().unwrap();
    d.free().unwrap();
    assert_eq!(
        (
            pool.held_blocks(),
            pool.active_blocks(),
            pool.managed_bytes()
        ),
        (0, 0, 0)
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn page_locked_allocator_flags_reach_the_driver() {
    let ctx = context();
    for flags in [
        HostAllocFlags::empty(),
        HostAllocFlags::PORTABLE,
        HostAllocFlags::DEVICEMAP,
        HostAllocFlags::PORTABLE | HostAllocFlags::DEVICEMAP,
    ] {
        let pool = PageLockedMemoryPool::with_allocator(&ctx, PageLockedAllocator::new(flags));
        assert_eq!(pool.allocator().flags(), flags);
        let block = pool.allocate::<u16>(12345).unwrap();
        assert_eq!(block.alloc_flags(), flags);
        let reported = block.flags().unwrap();
        assert!(
            reported.contains(flags),
            "asked {flags:?}, driver says {reported:?}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn pooled_blocks_carry_async_copies_through_a_kernel() {
    let ctx = context();
    let pool = PageLockedMemoryPool::new(&ctx);
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING).unwrap();
    let add_one = core_module(&ctx).function("add_one").unwrap();
    for n in [1usize, 1000, 3 << 20] {
        let host = random_i32(n, seed!());
        let mut input = pool.allocate::<i32>(n).unwrap();
        input.copy_from_slice(&host);
        let mut dev = DeviceBuffer::<i32>::uninit(&ctx, n).unwrap();
        input.copy_to_device_async(&mut dev, &stream).unwrap();
        // SAFETY: add_one(int* x, int n) touches x[0..n); dev holds n ints.
        unsafe {
            add_one
                .launch(
                    LaunchConfig::for_elements(n, 256),
                    &stream,
                    (&mut dev, n as i32),
                )
                .unwrap()
        };
        let mut output = pool.allocate::<i32>(n).unwrap();
        output.fill(i32::MIN);
        output.copy_from_device_async(&dev, &stream).unwrap();
        // Deref waits for the copy.
        let bad = output
            .iter()
            .zip(&host)
            .position(|(o, h)| *o != h.wrapping_add(1));
        assert_eq!(bad, None, "n = {n}: first wrong element");
        // Sizes are checked.
        let mut short = DeviceBuffer::<i32>::uninit(&ctx, n + 1).unwrap();
        assert!(input.copy_to_device_async(&mut short, &stream).is_err());
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn dropping_a_block_waits_for_its_copy() {
    let ctx = context();
    let pool = PageLockedMemoryPool::new(&ctx);
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING).unwrap();
    let n = 16 << 20; // 64 MiB: the copy takes milliseconds
    let host = random_i32(n, seed!());
    let dev = DeviceBuffer::from_slice(&ctx, &host).unwrap();
    let mut block = pool.allocate::<i32>(n).unwrap();
    block.fill(0);
    let addr = block.as_ptr() as usize;
    block.copy_from_device_async(&dev, &stream).unwrap();
    drop(block); // waits for the copy before the pool holds the block
    let again = pool.allocate::<i32>(n).unwrap();
    assert_eq!(again.as_ptr() as usize, addr);
    // No copy is pending on the reused block; it holds the finished copy.
    assert!(again.as_slice().unwrap() == host.as_slice());
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_pool_frees_held_blocks_on_out_of_memory_and_retries() {
    // Under the sanitizer other test binaries share the GPU: the free memory measured
    // here would not stay free.
    if rucuda_testkit::skip_under_sanitizer(
        "runs the device out of memory on purpose, sized from its free memory",
    ) {
        return;
    }
    let ctx = context();
    let pool = DeviceMemoryPool::new(&ctx);
    let (free, total) = ctx.mem_get_info().unwrap();
    println!("free {free} of {total} bytes");
    // Hold a block of 55% of the free memory...
    let big = free / 100 * 55;
    drop(pool.allocate(big).unwrap());
    let held = pool.managed_bytes();
    assert_eq!(pool.held_blocks(), 1);
    // ...then ask for a block of the next bin: both cannot fit (>110% of free), so the
    // first cuMemAlloc fails; the pool frees its held block and the retry succeeds.
    let request = held + 1;
    let block = pool.allocate(request).unwrap();
    assert_eq!(pool.held_blocks(), 0, "the held block was freed");
    assert!(pool.managed_bytes() >= request && pool.managed_bytes() < held * 2);
    assert_eq!(block.len(), request);
    drop(block);
    pool.free_held().unwrap();
    assert_eq!(pool.managed_bytes(), 0);
    // A request larger than the device is an out-of-memory error, not a panic.
    let err = pool.allocate(total * 2).unwrap_err();
    assert_eq!(err.kind(), rucuda::driver::ErrorKind::Memory, "{err}");
}
