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

/// One attribute straight from `cuDeviceGetAttribute` (not through `Device::attribute`,
/// which `DeviceData` itself uses).
fn raw_attribute(dev: Device, attr: rucuda::sys::CUdevice_attribute) -> u32 {
    let get = rucuda::driver::driver()
        .unwrap()
        .cuDeviceGetAttribute()
        .unwrap();
    let mut v = 0i32;
    // SAFETY: writes one int; `dev` is a valid device handle.
    unsafe { rucuda::driver::check(get(&mut v, attr, dev.raw()), "cuDeviceGetAttribute").unwrap() };
    u32::try_from(v).expect("a non-negative attribute")
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_data_matches_the_driver() {
    use rucuda::sys::CUdevice_attribute as A;
    for dev in Device::all().unwrap() {
        let dd = DeviceData::new(dev).unwrap();
        let attr = |a| raw_attribute(dev, a);
        // Every field, by name: a field added to DeviceData fails to compile here until
        // it is compared too.
        let DeviceData {
            max_threads,
            warp_size,
            warps_per_mp,
            thread_blocks_per_mp,
            registers,
            registers_per_mp,
            shared_memory,
            shared_memory_optin,
            shared_memory_per_mp,
            reserved_shared_memory_per_block,
            smem_granularity,
            smem_alloc_granularity,
            multiprocessors,
        } = dd;
        assert_eq!(
            max_threads,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
        );
        assert_eq!(warp_size, attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE));
        assert_eq!(
            warps_per_mp * warp_size,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
        );
        assert_eq!(
            thread_blocks_per_mp,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)
        );
        assert_eq!(
            registers,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)
        );
        assert_eq!(
            registers_per_mp,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)
        );
        assert_eq!(
            shared_memory,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
        );
        assert_eq!(
            shared_memory_optin,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        );
        assert_eq!(
            shared_memory_per_mp,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
        );
        assert_eq!(
            reserved_shared_memory_per_block,
            attr(A::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)
        );
        assert_eq!(
            multiprocessors,
            attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        );
        // The two figures the driver does not report: 32 banks and 128-byte allocation
        // units on every GPU since compute capability 2.0 (CUDA 13 needs 7.5).
        assert!(attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) >= 7);
        assert_eq!((smem_granularity, smem_alloc_granularity), (32, 128));
        // Plausibility, so that a wrong attribute constant cannot agree with itself.
        assert_eq!(warp_size, 32);
        assert!(thread_blocks_per_mp >= 16 && registers_per_mp >= registers);
        assert!(shared_memory >= 48 * 1024 && shared_memory_optin >= shared_memory);
        assert!(shared_memory_per_mp >= shared_memory_optin && multiprocessors > 0);
        // DeviceData::current reads the current context's device.
        let ctx = dev.primary_context().unwrap();
        ctx.bind().unwrap();
        assert_eq!(DeviceData::current().unwrap(), dd);
        println!("device {}: {dd:?}", dev.ordinal());
    }
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
    // Under compute-sanitizer the driver calls are intercepted: a timing, not a check.
    let limit = rucuda_testkit::scaled_for_sanitizer(5e-6, f64::INFINITY);
    assert!(per_hit < limit, "memo hit took {per_hit} s");
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
    let addr = rucuda::driver::DevicePtr::device_range(&a).address();
    drop(a);
    assert_eq!((pool.active_blocks(), pool.held_blocks()), (0, 1));
    let b = pool.allocate(999_999).unwrap();
    assert_eq!(
        rucuda::driver::DevicePtr::device_range(&b).address(),
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
                rucuda::driver::DevicePtr::device_range(&blk).address(),
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
                rucuda::driver::DevicePtr::device_range(&blk).address(),
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

/// Kernels that keep `N` floats live across a loop, so that they need many registers
/// (about 40, 64, 80 and 120): the register limit of OccupancyRecord is only reached
/// with such kernels.
const REGISTER_HEAVY_KERNELS: &str = include_str!("kernels/register_heavy.cu");

#[test]
#[ignore = "needs a CUDA device"]
fn occupancy_record_agrees_with_the_driver() {
    use rucuda::driver::FunctionAttribute;
    use rucuda::jit::{CompileOptions, SourceModule};
    let ctx = Device::get(0).unwrap().primary_context().unwrap();
    ctx.bind().unwrap();
    let dd = DeviceData::new(ctx.device()).unwrap();
    let core = core_module(&ctx);
    // `load`, not `for_context`: the memo stays empty for
    // clear_context_caches_also_forgets_memoized_source_modules in the same process.
    let heavy = SourceModule::load(
        &ctx,
        REGISTER_HEAVY_KERNELS,
        &CompileOptions::new().no_extern_c(true),
    )
    .expect("the register-heavy kernels compile (NVRTC)");
    let mut functions = Vec::new();
    for name in ["noop", "saxpy", "uses_shared", "with_struct", "scalars"] {
        functions.push((name, core.function(name).unwrap()));
    }
    for name in ["live_24", "live_48", "live_72", "live_96"] {
        functions.push((name, heavy.function(name).unwrap()));
    }
    let occ = rucuda::driver::driver()
        .unwrap()
        .cuOccupancyMaxActiveBlocksPerMultiprocessor()
        .unwrap();
    let (mut checked, mut refused) = (0, 0);
    let mut limits_seen = std::collections::BTreeSet::new();
    for (name, f) in &functions {
        f.set_max_dynamic_shared_memory(
            dd.shared_memory_optin
                - f.attribute(FunctionAttribute::SharedSizeBytes).unwrap() as u32,
        )
        .unwrap();
        let regs = f.attribute(FunctionAttribute::NumRegs).unwrap() as u32;
        let static_smem = f.attribute(FunctionAttribute::SharedSizeBytes).unwrap() as u32;
        println!("{name}: {regs} registers, {static_smem} B static shared memory");
        for threads in [32u32, 96, 128, 256, 512, 672, 800, 1024] {
            for dyn_smem in [0u32, 1000, 16 * 1024, 60 * 1024] {
                let mut blocks = 0i32;
                // SAFETY: writes one int; the function is alive.
                let code = unsafe { occ(&mut blocks, f.raw(), threads as i32, dyn_smem as usize) };
                let driver =
                    rucuda::driver::check(code, "cuOccupancyMaxActiveBlocksPerMultiprocessor")
                        .map(|()| blocks as u32);
                let what = format!(
                    "{name}: {threads} threads, {regs} regs, {static_smem}+{dyn_smem} B smem"
                );
                match OccupancyRecord::new(&dd, threads, static_smem + dyn_smem, regs) {
                    Ok(rec) => {
                        let blocks = driver.unwrap_or_else(|e| panic!("{what}: driver: {e}"));
                        assert_eq!(
                            rec.tb_per_mp, blocks,
                            "{what}: ours {rec:?}, driver {blocks}"
                        );
                        // warps_per_mp and occupancy follow from the driver's count.
                        let warps = blocks * threads.div_ceil(dd.warp_size);
                        assert_eq!(rec.warps_per_mp, warps, "{what}: {rec:?}");
                        let slots = ctx
                            .device()
                            .attribute(DeviceAttribute::MaxThreadsPerMultiprocessor)
                            .unwrap() as u32
                            / dd.warp_size;
                        assert_eq!(rec.occupancy, f64::from(warps) / f64::from(slots), "{what}");
                        assert!((0.0..=1.0).contains(&rec.occupancy));
                        limits_seen.insert(rec.limited_by);
                        checked += 1;
                    }
                    // A block that cannot run at all: the driver fits none either.
                    Err(e) => {
                        assert!(
                            matches!(driver, Ok(0) | Err(_)),
                            "{what}: ours refuses ({e}), the driver fits {driver:?}"
                        );
                        refused += 1;
                    }
                }
            }
        }
    }
    println!(
        "{checked} configurations agree with cuOccupancyMaxActiveBlocksPerMultiprocessor, \
         {refused} refused by both; limits seen: {limits_seen:?}"
    );
    // limited_by has no driver counterpart; each limit names the bound in some
    // configuration, and the counts it stands for agree with the driver above.
    assert_eq!(
        limits_seen.into_iter().collect::<Vec<_>>(),
        [
            OccupancyLimit::Device,
            OccupancyLimit::Warps,
            OccupancyLimit::Registers,
            OccupancyLimit::SharedMemory
        ]
    );
    assert!(refused > 0, "live_96 at 1024 threads cannot run");
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

#[cfg(feature = "ndarray")]
#[test]
#[ignore = "needs a CUDA device"]
fn ndarray_inputs_of_any_layout_land_in_the_requested_order() {
    use rucuda::driver::{Array3DFlags, Order};
    use rucuda::ndarray::{Array2, Array3, ShapeBuilder};
    let ctx = Device::get(0).unwrap().primary_context().unwrap();
    let mut rng = rucuda_testkit::TestRng::fresh();
    let (rows, cols) = (7, 12);
    let vals = rng.vec_f32(rows * cols);
    let c = Array2::from_shape_vec((rows, cols), vals.clone()).unwrap();
    let mut f = Array2::zeros((rows, cols).f());
    f.assign(&c);
    // Row-major reference and its Fortran-order (transposed) layout.
    let want_c = vals.clone();
    let want_f: Vec<f32> = (0..cols)
        .flat_map(|j| (0..rows).map(move |i| (i, j)))
        .map(|(i, j)| vals[i * cols + j])
        .collect();
    for input in [c.view(), f.view()] {
        let a = ndarray_matrix_to_array(&ctx, input, Order::C).unwrap();
        assert_eq!((a.desc().width, a.desc().height), (cols, rows));
        assert_eq!(a.to_host_vec::<f32>().unwrap(), want_c);
        let a = ndarray_matrix_to_array(&ctx, input, Order::F).unwrap();
        assert_eq!((a.desc().width, a.desc().height), (rows, cols));
        assert_eq!(a.to_host_vec::<f32>().unwrap(), want_f);
        let a = ndarray_to_array(&ctx, input, Order::F, Array3DFlags::LAYERED).unwrap();
        assert_eq!(
            (a.desc().width, a.desc().height, a.desc().depth),
            (rows, cols, 1)
        );
        assert_eq!(a.to_host_vec::<f32>().unwrap(), want_f);
    }
    // A transposed (strided) view is its logical contents too.
    let a = ndarray_matrix_to_array(&ctx, c.t(), Order::C).unwrap();
    assert_eq!((a.desc().width, a.desc().height), (rows, cols));
    assert_eq!(a.to_host_vec::<f32>().unwrap(), want_f);
    // Multichannel, F: shape [channels, width, height] from an F-ordered ndarray.
    let (w, h) = (5, 3);
    let px = Array3::from_shape_fn((4, w, h).f(), |(ch, x, y)| (100 * y + 10 * x + ch) as u8);
    let a = ndarray_to_multichannel_2d_array(&ctx, px.view(), Order::F).unwrap();
    assert_eq!(
        (a.desc().width, a.desc().height, a.desc().num_channels),
        (w, h, 4)
    );
    let want: Vec<u8> = (0..h)
        .flat_map(|y| (0..w).flat_map(move |x| (0..4).map(move |ch| (100 * y + 10 * x + ch) as u8)))
        .collect();
    assert_eq!(a.to_host_vec::<u8>().unwrap(), want);
}
