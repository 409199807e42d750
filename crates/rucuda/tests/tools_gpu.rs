//! GPU tests of PyCUDA's tools in the facade.

use rucuda::driver::{Device, DeviceAttribute, LaunchConfig, Module, Stream};
use rucuda::tools::*;

fn core_module(ctx: &rucuda::driver::Context) -> Module {
    Module::load_data(
        ctx,
        include_str!("../../rucuda-driver/tests/kernels/core.ptx").as_bytes(),
    )
    .unwrap()
}

#[test]
#[ignore = "needs a CUDA device"]
fn autoprimaryctx_and_make_default_context_follow_cuda_device() {
    std::env::set_var("CUDA_DEVICE", "0");
    let auto = autoprimaryctx().unwrap();
    assert_eq!(auto.device, Device::get(0).unwrap());
    assert!(auto.context.is_primary());
    assert!(std::ptr::eq(auto, autoprimaryctx().unwrap()));
    let made = make_default_context().unwrap();
    assert!(!made.is_primary());
    assert_eq!(made.device().ordinal(), 0);
    let init = autoinit().unwrap();
    assert!(!init.context.is_primary());
    std::env::set_var("CUDA_DEVICE", "999");
    assert!(make_default_context().is_err());
    std::env::set_var("CUDA_DEVICE", "zero");
    let e = make_default_context().unwrap_err();
    assert!(e.to_string().contains("CUDA_DEVICE"), "{e}");
    std::env::remove_var("CUDA_DEVICE");
    #[allow(deprecated)]
    let d = get_default_device(0).unwrap();
    assert_eq!(d.ordinal(), 0);
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_data_matches_the_driver() {
    let dev = Device::get(0).unwrap();
    let dd = DeviceData::new(dev).unwrap();
    assert_eq!(
        dd.max_threads as i32,
        dev.attribute(DeviceAttribute::MaxThreadsPerBlock).unwrap()
    );
    assert_eq!(dd.warp_size, 32);
    assert_eq!(
        dd.warps_per_mp as i32 * 32,
        dev.attribute(DeviceAttribute::MaxThreadsPerMultiprocessor)
            .unwrap()
    );
    assert!(dd.thread_blocks_per_mp >= 16);
    assert!(dd.shared_memory >= 48 * 1024 && dd.shared_memory_optin >= dd.shared_memory);
    assert!(dd.multiprocessors > 0);
    let ctx = dev.primary_context().unwrap();
    ctx.bind().unwrap();
    assert_eq!(DeviceData::current().unwrap(), dd);
    println!("{dd:?}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn memoize_is_per_context_and_clearable() {
    let a = Device::get(0).unwrap().primary_context().unwrap();
    let b = Device::get(0)
        .unwrap()
        .make_context(Default::default())
        .unwrap();
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let make = |tag: u32| {
        calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(tag)
    };
    assert_eq!(context_dependent_memoize(&a, "k", || make(1)).unwrap(), 1);
    assert_eq!(context_dependent_memoize(&a, "k", || make(2)).unwrap(), 1);
    assert_eq!(context_dependent_memoize(&b, "k", || make(3)).unwrap(), 3);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2);
    // A cached module keeps working; clearing releases it.
    let m = context_dependent_memoize(&a, ("core", 1u8), || Ok(core_module(&a))).unwrap();
    let m2: Module = context_dependent_memoize(&a, ("core", 1u8), || panic!("not called")).unwrap();
    assert_eq!(m.raw(), m2.raw());
    let t = std::time::Instant::now();
    for _ in 0..10_000 {
        context_dependent_memoize(&a, ("core", 1u8), || Ok(core_module(&a))).unwrap();
    }
    let per_hit = t.elapsed().as_secs_f64() / 10_000.0;
    println!("memo hit: {:.2} us", per_hit * 1e6);
    assert!(per_hit < 5e-6, "memo hit took {per_hit} s");
    clear_context_caches();
    assert_eq!(context_dependent_memoize(&a, "k", || make(4)).unwrap(), 4);
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_memory_pool_reuses_blocks_and_counts() {
    let ctx = Device::get(0).unwrap().primary_context().unwrap();
    let pool = DeviceMemoryPool::new(&ctx);
    let a = pool.allocate(1_000_000).unwrap();
    assert_eq!(
        (
            pool.active_blocks(),
            pool.held_blocks(),
            pool.active_bytes()
        ),
        (1, 0, 1_000_000)
    );
    let managed = pool.managed_bytes();
    assert!((1_000_000..=1_250_000).contains(&managed));
    let addr = rucuda::driver::DevicePtr::device_ptr(&a);
    drop(a);
    assert_eq!((pool.active_blocks(), pool.held_blocks()), (0, 1));
    let b = pool.allocate(999_999).unwrap();
    assert_eq!(
        rucuda::driver::DevicePtr::device_ptr(&b),
        addr,
        "same bin reuses the block"
    );
    assert_eq!(pool.managed_bytes(), managed);
    // A pooled block as a kernel argument.
    let f = core_module(&ctx).function("add_one").unwrap();
    let n = 1000usize;
    let host: Vec<i32> = (0..n as i32).map(|i| i * 7 - 300).collect();
    let blk = pool.allocate(n * 4).unwrap();
    // SAFETY: copies n ints into a block of n*4 bytes.
    unsafe {
        let cp = rucuda::driver::driver().unwrap().cuMemcpyHtoD_v2().unwrap();
        rucuda::driver::check(
            cp(
                rucuda::driver::DevicePtr::device_ptr(&blk),
                host.as_ptr().cast(),
                n * 4,
            ),
            "cuMemcpyHtoD_v2",
        )
        .unwrap();
    }
    // SAFETY: add_one(int* x, int n) touches n ints of the block.
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, 128),
            &Stream::null(&ctx),
            (&blk, n as i32),
        )
        .unwrap()
    };
    let mut out = vec![0i32; n];
    // SAFETY: copies n ints out of the block.
    unsafe {
        let cp = rucuda::driver::driver().unwrap().cuMemcpyDtoH_v2().unwrap();
        rucuda::driver::check(
            cp(
                out.as_mut_ptr().cast(),
                rucuda::driver::DevicePtr::device_ptr(&blk),
                n * 4,
            ),
            "cuMemcpyDtoH_v2",
        )
        .unwrap();
    }
    assert!(out.iter().zip(&host).all(|(o, h)| *o == h + 1));
    drop(blk);
    drop(b);
    pool.free_held().unwrap();
    assert_eq!((pool.held_blocks(), pool.managed_bytes()), (0, 0));
    pool.stop_holding().unwrap();
    let c = pool.allocate(4096).unwrap();
    c.free();
    assert_eq!((pool.held_blocks(), pool.managed_bytes()), (0, 0));
}

#[test]
#[ignore = "needs a CUDA device"]
fn occupancy_record_agrees_with_the_driver() {
    use rucuda::driver::FunctionAttribute;
    let ctx = Device::get(0).unwrap().primary_context().unwrap();
    let dd = DeviceData::new(ctx.device()).unwrap();
    let m = core_module(&ctx);
    let occ = rucuda::driver::driver()
        .unwrap()
        .cuOccupancyMaxActiveBlocksPerMultiprocessor()
        .unwrap();
    let mut checked = 0;
    for name in ["noop", "saxpy", "uses_shared", "with_struct", "scalars"] {
        let f = m.function(name).unwrap();
        f.set_max_dynamic_shared_memory(
            dd.shared_memory_optin
                - f.attribute(FunctionAttribute::SharedSizeBytes).unwrap() as u32,
        )
        .unwrap();
        let regs = f.attribute(FunctionAttribute::NumRegs).unwrap() as u32;
        let static_smem = f.attribute(FunctionAttribute::SharedSizeBytes).unwrap() as u32;
        for threads in [32u32, 96, 128, 256, 512, 1024] {
            for dyn_smem in [0u32, 1000, 16 * 1024, 60 * 1024] {
                let mut blocks = 0i32;
                // SAFETY: writes one int; the function is alive.
                unsafe {
                    rucuda::driver::check(
                        occ(&mut blocks, f.raw(), threads as i32, dyn_smem as usize),
                        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                    )
                    .unwrap()
                };
                let rec = OccupancyRecord::new(&dd, threads, static_smem + dyn_smem, regs).unwrap();
                assert_eq!(
                    rec.tb_per_mp, blocks as u32,
                    "{name}: {threads} threads, {regs} regs, {static_smem}+{dyn_smem} B smem: ours {rec:?}, driver {blocks}"
                );
                checked += 1;
            }
        }
    }
    println!("{checked} configurations agree with cuOccupancyMaxActiveBlocksPerMultiprocessor");
}

#[test]
#[ignore = "needs a CUDA device"]
fn clear_context_caches_also_forgets_memoized_source_modules() {
    use rucuda::jit::{cache::memo, CompileOptions, SourceModule};
    let ctx = Device::get(0).unwrap().primary_context().unwrap();
    let src = "__global__ void clear_me(int *x) { x[threadIdx.x] = 1; }";
    let first = SourceModule::for_context(&ctx, src, &CompileOptions::new()).unwrap();
    let again = SourceModule::for_context(&ctx, src, &CompileOptions::new()).unwrap();
    assert!(
        std::sync::Arc::ptr_eq(&first, &again),
        "memoized per context"
    );
    assert!(memo::len() > 0);
    clear_context_caches();
    assert_eq!(memo::len(), 0);
    let fresh = SourceModule::for_context(&ctx, src, &CompileOptions::new()).unwrap();
    assert!(
        !std::sync::Arc::ptr_eq(&first, &fresh),
        "a new module after clearing"
    );
}
