//! GPU tests of memory, one file per topic: `host` (host memory the device reaches),
//! `copies` (memsets and copies), and here device memory as the driver describes and
//! shares it: pointer attributes, external pointers as copy, memset and kernel targets,
//! IPC memory shared with a child process (whose test stays here: the child runs it by
//! name), allocations larger than the device, memory pools.
//!
//! Every output is poisoned before the operation and compared with a CPU reference on
//! fresh random data.

#[path = "../common/mod.rs"]
mod common;

mod copies;
mod host;

use common::Rng;
use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::*;

type TestResult = Result<(), Error>;

const BLOCK: u32 = 256;

fn memory_module(ctx: &Context) -> Module {
    common::module(ctx, include_str!("../kernels/memory.ptx"))
}

/// `n` random bytes, eight per generator step.
fn random_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n + 8);
    while v.len() < n {
        v.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    v.truncate(n);
    v
}

/// Compares without printing megabytes: names the first differing index.
fn assert_same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: first difference at index {i} of {}: got {:?}, want {:?}",
            got.len(),
            got[i],
            want[i]
        );
    }
}

fn assert_same_bits(got: &[f32], want: &[f32], what: &str) {
    let g: Vec<u32> = got.iter().map(|x| x.to_bits()).collect();
    let w: Vec<u32> = want.iter().map(|x| x.to_bits()).collect();
    assert_same(&g, &w, what);
}

fn affine(x: u32, a: u32, b: u32) -> u32 {
    x.wrapping_mul(a).wrapping_add(b)
}

#[test]
#[ignore = "needs a CUDA device"]
fn pointer_attributes_of_device_pinned_and_managed_memory() -> TestResult {
    let ctx = common::ctx();
    let buf = DeviceBuffer::<u8>::zeros(&ctx, 4096)?;
    let attrs = pointer_attributes(&ctx, buf.device_range().address() + 16)?;
    assert_eq!(attrs.memory_type, MemoryType::Device);
    assert_eq!(
        pointer_memory_type(&ctx, buf.device_range().address())?,
        MemoryType::Device
    );
    assert_eq!(attrs.context, Some(ctx.raw()));
    assert_eq!(
        attrs.device_pointer,
        Some(buf.device_range().address() + 16)
    );
    assert!(!attrs.is_managed);
    assert_eq!(attrs.range_start, Some(buf.device_range().address()));
    assert!(attrs.range_size.is_some_and(|s| s >= 4096), "{attrs:?}");
    assert_eq!(attrs.device_ordinal, Some(ctx.device().ordinal() as i32));
    let other = DeviceBuffer::<u8>::zeros(&ctx, 4096)?;
    let other_id = pointer_attributes(&ctx, other.device_range().address())?.buffer_id;
    assert!(attrs.buffer_id.is_some() && other_id.is_some());
    assert_ne!(attrs.buffer_id, other_id);

    let pinned = pagelocked_zeros::<u8>(&ctx, 4096, HostAllocFlags::DEVICEMAP)?;
    let pa = pointer_attributes(&ctx, pinned.as_ptr() as CUdeviceptr)?;
    assert_eq!(pa.memory_type, MemoryType::Host);
    assert_eq!(
        pa.host_pointer,
        Some(pinned.as_ptr() as *mut std::ffi::c_void)
    );
    assert_eq!(pa.device_pointer, Some(pinned.device_pointer()?));
    assert!(!pa.is_managed);

    if ctx.device().attribute(DeviceAttribute::ManagedMemory)? != 0 {
        let m = managed_zeros::<u8>(&ctx, 4096, MemAttachFlags::GLOBAL)?;
        let ma = pointer_attributes(&ctx, m.as_ptr() as CUdeviceptr)?;
        assert!(ma.is_managed, "{ma:?}");
        assert_eq!(ma.device_pointer, Some(m.as_ptr() as CUdeviceptr));
    }
    let pageable = vec![0u8; 4096];
    println!(
        "pageable memory: {:?}",
        pointer_memory_type(&ctx, pageable.as_ptr() as CUdeviceptr)
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn external_pointers_are_copy_memset_and_kernel_targets() -> TestResult {
    let ctx = common::ctx();
    let mut rng = Rng::fresh();
    let module = memory_module(&ctx);
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let n = 70_001;
    let data = rng.vec_u32(n);
    let input = DeviceBuffer::from_slice(&ctx, &data)?;
    let mut output = DeviceBuffer::<u32>::uninit(&ctx, n)?;
    // SAFETY: both wrap live buffers of `n` u32 that outlive them.
    let (ext_in, mut ext_out) = unsafe {
        (
            ExternalDevicePtr::new(input.device_range().address(), input.byte_len()),
            ExternalDevicePtr::new(output.device_range().address(), output.byte_len()),
        )
    };
    memset_d32(&ctx, &mut ext_out, 0xFFFF_FFFF, n)?;
    // The small copy and the memset ran on the legacy stream: finish them before the
    // non-blocking one.
    ctx.synchronize()?;
    let (a, b) = (rng.next_u64() as u32, rng.next_u64() as u32);
    let copy = module.function("affine_copy_u32")?;
    // SAFETY: affine_copy_u32(const unsigned* in, unsigned* out, unsigned a, unsigned b,
    // unsigned n) reads in[0..n) and writes out[0..n).
    unsafe {
        copy.launch(
            LaunchConfig::for_elements(n, BLOCK),
            &stream,
            (&ext_in, &mut ext_out, a, b, n as u32),
        )?
    };
    stream.synchronize()?;
    let want: Vec<u32> = data.iter().map(|&x| affine(x, a, b)).collect();
    assert_same(&output.to_vec()?, &want, "kernel through external pointers");

    // By value, and as a plain pointer argument.
    let in_place = module.function("affine_u32")?;
    // SAFETY: affine_u32(unsigned* x, unsigned a, unsigned b, unsigned n) rewrites x[0..n).
    unsafe {
        in_place.launch(
            LaunchConfig::for_elements(n, BLOCK),
            &stream,
            (ext_out, 3u32, 1u32, n as u32),
        )?;
        in_place.launch(
            LaunchConfig::for_elements(n, BLOCK),
            &stream,
            (ext_out.as_arg(), 5u32, 7u32, n as u32),
        )?;
    }
    stream.synchronize()?;
    let want2: Vec<u32> = want
        .iter()
        .map(|&x| affine(affine(x, 3, 1), 5, 7))
        .collect();
    let mut got = vec![0u32; n];
    memcpy_dtoh(&ctx, &mut got, &ext_out)?;
    assert_same(&got, &want2, "by value and as DevicePointerArg");
    output.copy_from_device(&input)?;
    assert_same(&output.to_vec()?, &data, "copy_from_device still works");
    Ok(())
}

/// FNV-1a over the values, to check the child read what the parent wrote.
fn checksum(values: &[u32]) -> u64 {
    values.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &v| {
        (h ^ u64::from(v)).wrapping_mul(0x0100_0000_01b3)
    })
}

const IPC_HANDLE_VAR: &str = "RUCUDA_TEST_IPC_HANDLE";
const IPC_LEN_VAR: &str = "RUCUDA_TEST_IPC_LEN";
const IPC_SUM_VAR: &str = "RUCUDA_TEST_IPC_SUM";
const IPC_A: u32 = 3;
const IPC_B: u32 = 0x9E37_79B9;

#[test]
#[ignore = "needs a CUDA device"]
fn ipc_memory_is_shared_with_a_child_process() -> TestResult {
    if rucuda_testkit::skip_under_sanitizer_tools(
        &["initcheck"],
        "the child reads memory this process wrote, which initcheck cannot see",
    ) {
        return Ok(());
    }
    let ctx = common::ctx();
    let mut rng = Rng::fresh();
    let n = 262_147;
    let data = rng.vec_u32(n);
    let buf = DeviceBuffer::from_slice(&ctx, &data)?;
    let handle = match IpcMemHandle::new(&buf) {
        Ok(h) => h,
        Err(e) if e.kind() == ErrorKind::NotSupported => {
            common::skip(format!("CUDA IPC is not supported here: {e}"));
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let out = rucuda_testkit::child_test("ipc_child")
        .env(IPC_HANDLE_VAR, handle.to_hex())
        .env(IPC_LEN_VAR, n.to_string())
        .env(IPC_SUM_VAR, checksum(&data).to_string())
        .output()
        .expect("the child process starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("child stdout:\n{stdout}\nchild stderr:\n{stderr}");
    assert!(out.status.success(), "the child failed: {}", out.status);
    assert!(
        stdout.contains("ipc child: rewrote") && stdout.contains("1 passed"),
        "the child test did not run"
    );
    let want: Vec<u32> = data.iter().map(|&x| affine(x, IPC_A, IPC_B)).collect();
    assert_same(&buf.to_vec()?, &want, "the child's writes");
    Ok(())
}

/// Runs only as the child of `ipc_memory_is_shared_with_a_child_process`.
#[test]
#[ignore = "needs a CUDA device"]
fn ipc_child() -> TestResult {
    let Ok(hex) = std::env::var(IPC_HANDLE_VAR) else {
        common::skip("runs only as the child of ipc_memory_is_shared_with_a_child_process");
        return Ok(());
    };
    let n: usize = std::env::var(IPC_LEN_VAR)
        .ok()
        .and_then(|s| s.parse().ok())
        .expect("the length");
    let sum: u64 = std::env::var(IPC_SUM_VAR)
        .ok()
        .and_then(|s| s.parse().ok())
        .expect("the checksum");
    let ctx = common::ctx();
    let handle: IpcMemHandle = hex.parse()?;
    let mut shared = IpcMemory::open(&ctx, &handle, IpcMemFlags::LAZY_ENABLE_PEER_ACCESS)?;
    assert!(shared.byte_len() >= n * 4, "{shared:?}");
    let values: Vec<u32> = from_device(&ctx, &shared, n)?;
    assert_eq!(
        checksum(&values),
        sum,
        "the child reads what the parent wrote"
    );
    let f = memory_module(&ctx).function("affine_u32")?;
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    // SAFETY: affine_u32(unsigned* x, unsigned a, unsigned b, unsigned n) rewrites x[0..n),
    // inside the shared allocation.
    unsafe {
        f.launch(
            LaunchConfig::for_elements(n, BLOCK),
            &stream,
            (&mut shared, IPC_A, IPC_B, n as u32),
        )?
    };
    stream.synchronize()?;
    shared.close()?;
    println!("ipc child: rewrote {n} values");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn allocating_more_than_the_device_has_is_a_memory_error() -> TestResult {
    if rucuda_testkit::skip_under_sanitizer("asks for more memory than the device has on purpose") {
        return Ok(());
    }
    let ctx = common::ctx();
    let (_, total) = ctx.mem_get_info()?;
    let e =
        DeviceBuffer::<u8>::uninit(&ctx, total + (1 << 30)).expect_err("more than the device has");
    assert_eq!(e.kind(), ErrorKind::Memory, "{e}");
    assert!(e.to_string().contains("cuMemAlloc"), "{e}");
    // The context is still usable.
    let mut rng = Rng::fresh();
    let data = rng.vec_u32(1 << 20);
    let buf = DeviceBuffer::from_slice(&ctx, &data)?;
    assert_same(&buf.to_vec()?, &data, "after a failed allocation");
    ctx.synchronize()?;
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn memory_pools_keep_trim_and_serve_stream_ordered_allocations() -> TestResult {
    let ctx = common::ctx();
    if !ctx.supports_memory_pools() {
        common::skip("the device has no stream-ordered memory pools");
        return Ok(());
    }
    let mut rng = Rng::fresh();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let default = MemPool::device_default(&ctx)?;
    assert_eq!(MemPool::current(&ctx)?.raw(), default.raw());
    let old_threshold = default.release_threshold()?;
    default.set_release_threshold(u64::MAX)?;
    assert_eq!(default.release_threshold()?, u64::MAX);
    let bytes = 64usize << 20;
    let buf = DeviceBuffer::<u8>::uninit_async(&stream, bytes)?;
    stream.synchronize()?;
    assert!(default.used_bytes()? >= bytes as u64);
    assert!(default.used_bytes_high()? >= bytes as u64);
    drop(buf);
    stream.synchronize()?;
    // Freed, but kept for reuse (the threshold keeps everything) until trimmed.
    assert!(default.reserved_bytes()? >= bytes as u64);
    default.trim_to(0)?;
    let after_trim = default.reserved_bytes()?;
    assert!(
        after_trim < bytes as u64,
        "{after_trim} bytes still reserved"
    );
    default.reset_high_watermarks()?;
    default.set_release_threshold(old_threshold)?;

    // A pool of our own, made current, serves DeviceBuffer::uninit_async.
    let pool = MemPool::new(&ctx)?;
    pool.make_current()?;
    let n = (1 << 20) + 3;
    let data = rng.vec_u32(n);
    let mut buf = DeviceBuffer::<u32>::uninit_async(&stream, n)?;
    stream.synchronize()?;
    assert!(pool.used_bytes()? >= (n * 4) as u64);
    assert!(pool.reserved_bytes()? >= (n * 4) as u64);
    buf.copy_from_host(&data)?;
    assert_same(&buf.to_vec()?, &data, "a buffer from our own pool");
    drop(buf);
    default.make_current()?;
    stream.synchronize()?;
    assert_eq!(MemPool::current(&ctx)?.raw(), default.raw());
    drop(pool);
    ctx.check_deferred_errors()?;
    Ok(())
}
