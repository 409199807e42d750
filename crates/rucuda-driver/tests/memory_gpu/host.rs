//! GPU tests of host memory the device reaches: page-locked buffers and their flags,
//! mapped page-locked memory written by a kernel, async copies with events, registered
//! host memory, managed memory touched by host, kernel and host again.
//!
//! Every output is poisoned before the operation and compared with a CPU reference on
//! fresh random data.

use crate::common;
use crate::common::Rng;
use crate::{affine, assert_same, assert_same_bits, memory_module, TestResult, BLOCK};
use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::*;

#[test]
#[ignore = "needs a CUDA device"]
fn pinned_round_trip_reports_its_flags() -> TestResult {
    let ctx = common::ctx();
    let mut rng = Rng::fresh();
    let n = 100_003;
    let data = rng.vec_f32(n);
    let flags = HostAllocFlags::PORTABLE | HostAllocFlags::DEVICEMAP;
    let mut pinned = pagelocked_empty::<f32>(&ctx, n, flags)?;
    assert_eq!(pinned.len(), n);
    assert_eq!(pinned.alloc_flags(), flags);
    let reported = pinned.flags()?;
    assert!(reported.contains(flags), "driver reports {reported:?}");
    pinned.copy_from_slice(&data);

    let dev = DeviceBuffer::from_slice(&ctx, &pinned)?;
    let mut back = pagelocked_empty_like(&ctx, &data, HostAllocFlags::empty())?;
    back.fill(f32::from_bits(0xFFFF_FFFF));
    dev.copy_to_host(&mut back)?;
    assert_same_bits(&back, &data, "pinned -> device -> pinned");

    let zeros = pagelocked_zeros::<u64>(&ctx, 1000, HostAllocFlags::WRITECOMBINED)?;
    assert!(zeros.flags()?.contains(HostAllocFlags::WRITECOMBINED));
    assert!(zeros.iter().all(|&x| x == 0));
    let like = pagelocked_zeros_like(&ctx, &data[..77], HostAllocFlags::empty())?;
    assert_eq!(like.len(), 77);
    assert!(like.as_slice()?.iter().all(|&x| x == 0.0));
    zeros.free()?;
    let empty = pagelocked_empty::<u8>(&ctx, 0, HostAllocFlags::empty())?;
    assert!(empty.is_empty());
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn mapped_pinned_memory_is_written_by_a_kernel() -> TestResult {
    let ctx = common::ctx();
    let mut rng = Rng::fresh();
    let fma = memory_module(&ctx).function("fma_f32")?;
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let n = 65_537;
    let x = rng.vec_f32(n);
    let (a, b) = (1.25 + rng.f32().abs(), rng.f32());
    let mut host = PinnedHostBuffer::from_slice(&ctx, &x, HostAllocFlags::DEVICEMAP)?;
    let dptr = host.device_pointer()?;
    assert_ne!(dptr, 0);
    assert_eq!(host.device_view()?.device_range().address(), dptr);
    // SAFETY: fma_f32(float* x, float a, float b, unsigned n) rewrites x[0..n).
    unsafe {
        fma.launch(
            LaunchConfig::for_elements(n, BLOCK),
            &stream,
            (host.device_view_mut()?, a, b, n as u32),
        )?
    };
    stream.synchronize()?;
    let want: Vec<f32> = x.iter().map(|&v| v.mul_add(a, b)).collect();
    assert_same_bits(&host, &want, "kernel writes through the mapped pointer");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn async_copies_with_pinned_buffers_and_events() -> TestResult {
    let ctx = common::ctx();
    let mut rng = Rng::fresh();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let n = 8 << 20; // 32 MiB of i32: the copy is still running when the host looks.
    let data = rng.vec_i32(n);
    let mut src = PinnedHostBuffer::from_slice(&ctx, &data, HostAllocFlags::empty())?;
    let mut dev = DeviceBuffer::<i32>::uninit(&ctx, n)?;
    memset_d32(&ctx, &mut dev, 0xFFFF_FFFF, n)?;
    let mut dev2 = DeviceBuffer::<i32>::uninit(&ctx, n)?;
    memset_d32(&ctx, &mut dev2, 0xFFFF_FFFF, n)?;
    ctx.synchronize()?;

    let (start, end) = (
        Event::new(&ctx, EventFlags::DEFAULT)?,
        Event::new(&ctx, EventFlags::DEFAULT)?,
    );
    start.record(&stream)?;
    memcpy_htod_async(&mut dev, &src, &stream)?;
    // Host writes wait until the copy has read the buffer.
    src.fill(0);
    memcpy_dtod_async(&mut dev2, &dev, &stream)?;
    let mut back = pagelocked_empty::<i32>(&ctx, n, HostAllocFlags::empty())?;
    back.fill(-1);
    memcpy_dtoh_async(&mut back, &dev2, &stream)?;
    end.record(&stream)?;
    // Host reads wait until the copy has written the buffer: no stream synchronisation.
    assert_same(&back, &data, "pinned -> device -> device -> pinned, async");
    end.synchronize()?;
    let ms = end.time_since(&start)?;
    assert!(ms >= 0.0, "{ms} ms");
    println!("async round trip of {} MiB: {ms:.3} ms", (n * 4) >> 20);
    assert!(src.iter().all(|&v| v == 0));

    let short = pagelocked_empty::<i32>(&ctx, n - 1, HostAllocFlags::empty())?;
    let e = memcpy_htod_async(&mut dev, &short, &stream).expect_err("sizes differ");
    assert_eq!(e.kind(), ErrorKind::Logic, "{e}");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn registered_memory_round_trips_and_is_written_by_a_kernel() -> TestResult {
    let ctx = common::ctx();
    let mut rng = Rng::fresh();
    let affine_u32 = memory_module(&ctx).function("affine_u32")?;
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let n = 1024 * 37; // 37 pages of u32
    let mut host = aligned_zeros::<u32>(n, DEFAULT_HOST_ALIGNMENT)?;
    host.copy_from_slice(&rng.vec_u32(n));
    let original = host.to_vec();
    let (a, b) = (rng.next_u64() as u32 | 1, rng.next_u64() as u32);
    {
        let flags = HostRegisterFlags::PORTABLE | HostRegisterFlags::DEVICEMAP;
        let reg = register_host_memory(&ctx, &mut host[..], flags)?;
        assert_eq!(reg.flags(), flags);
        let attrs = pointer_attributes(&ctx, reg.as_ptr() as CUdeviceptr)?;
        assert_eq!(attrs.memory_type, MemoryType::Host);
        let dev = DeviceBuffer::from_slice(&ctx, &reg)?;
        assert_same(&dev.to_vec()?, &original, "registered -> device -> host");
        reg.unregister()?;
    }
    // Kernels reach only registrations that own their memory (a borrowing one could be
    // forgotten while the kernel writes).
    let flags = HostRegisterFlags::PORTABLE | HostRegisterFlags::DEVICEMAP;
    let mut reg = RegisteredHostMemory::from_vec(&ctx, host.to_vec(), flags)?;
    // SAFETY: affine_u32(unsigned* x, unsigned a, unsigned b, unsigned n) rewrites x[0..n).
    unsafe {
        affine_u32.launch(
            LaunchConfig::for_elements(n, BLOCK),
            &stream,
            (reg.device_view_mut()?, a, b, n as u32),
        )?
    };
    let want: Vec<u32> = original.iter().map(|&x| affine(x, a, b)).collect();
    assert_same(
        &reg,
        &want,
        "kernel writes registered memory (host access waits for it)",
    );
    assert_same(&reg.into_vec()?, &want, "into_vec after the kernel");

    // An owned Vec of a size that is not a whole number of pages.
    let v = rng.vec_u32(12_345);
    let reg = RegisteredHostMemory::from_vec(&ctx, v.clone(), HostRegisterFlags::empty())?;
    let dev = DeviceBuffer::from_slice(&ctx, &reg)?;
    assert_same(&dev.to_vec()?, &v, "registered Vec -> device -> host");
    let back = reg.into_vec()?;
    assert_same(&back, &v, "into_vec gives the Vec back");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn managed_memory_is_touched_by_host_then_kernel_then_host() -> TestResult {
    let ctx = common::ctx();
    let device = ctx.device();
    if device.attribute(DeviceAttribute::ManagedMemory)? == 0 {
        common::skip("the device has no managed memory");
        return Ok(());
    }
    let mut rng = Rng::fresh();
    let module = memory_module(&ctx);
    let fma = module.function("fma_f32")?;
    let affine_u32 = module.function("affine_u32")?;
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let n = 1 << 20; // 4 MiB, far below free memory
    let x = rng.vec_f32(n);
    let mut m = managed_empty::<f32>(&ctx, n, MemAttachFlags::GLOBAL)?;
    m.host_slice_mut()?.copy_from_slice(&x);

    let attrs = pointer_attributes(&ctx, m.as_ptr() as CUdeviceptr)?;
    assert!(attrs.is_managed);
    assert!(
        matches!(
            attrs.memory_type,
            MemoryType::Device | MemoryType::Host | MemoryType::Unified
        ),
        "{attrs:?}"
    );

    let (a, b) = (1.5 + rng.f32().abs(), rng.f32());
    // SAFETY: fma_f32(float* x, float a, float b, unsigned n) rewrites x[0..n).
    unsafe {
        fma.launch(
            LaunchConfig::for_elements(n, BLOCK),
            &stream,
            (&mut m, a, b, n as u32),
        )?
    };
    let want: Vec<f32> = x.iter().map(|&v| v.mul_add(a, b)).collect();
    assert_same_bits(m.host_slice()?, &want, "host -> kernel -> host");

    if device.attribute(DeviceAttribute::ConcurrentManagedAccess)? != 0 {
        let here = MemLocation::Device(device);
        m.advise(MemAdvice::SetPreferredLocation(here))?;
        m.advise(MemAdvice::SetAccessedBy(here))?;
        m.prefetch(here, &stream)?;
        let (a2, b2) = (0.5 + rng.f32().abs(), rng.f32());
        // SAFETY: as above.
        unsafe {
            fma.launch(
                LaunchConfig::for_elements(n, BLOCK),
                &stream,
                (&mut m, a2, b2, n as u32),
            )?
        };
        m.prefetch(MemLocation::Host, &stream)?;
        let want2: Vec<f32> = want.iter().map(|&v| v.mul_add(a2, b2)).collect();
        assert_same_bits(m.host_slice_after(&stream)?, &want2, "after prefetches");
        m.advise(MemAdvice::UnsetPreferredLocation)?;
        m.advise(MemAdvice::UnsetAccessedBy(here))?;
        m.advise(MemAdvice::SetReadMostly)?;
        m.advise(MemAdvice::UnsetReadMostly)?;
    } else {
        println!("no concurrent managed access: prefetch and advice not exercised");
    }

    // Attached to one stream; zeroed at allocation.
    let n2 = 4099;
    let mut single = managed_zeros::<u32>(&ctx, n2, MemAttachFlags::GLOBAL)?;
    assert!(single.host_slice()?.iter().all(|&v| v == 0));
    single.attach(&stream, MemAttachFlags::SINGLE)?;
    let u = rng.vec_u32(n2);
    single.host_slice_mut_after(&stream)?.copy_from_slice(&u);
    let (ua, ub) = (rng.next_u64() as u32, rng.next_u64() as u32);
    // SAFETY: affine_u32(unsigned* x, unsigned a, unsigned b, unsigned n) rewrites x[0..n).
    unsafe {
        affine_u32.launch(
            LaunchConfig::for_elements(n2, BLOCK),
            &stream,
            (&mut single, ua, ub, n2 as u32),
        )?
    };
    let want_u: Vec<u32> = u.iter().map(|&v| affine(v, ua, ub)).collect();
    assert_same(
        single.host_slice_after(&stream)?,
        &want_u,
        "attached to one stream",
    );

    let e = managed_empty::<u8>(&ctx, 10, MemAttachFlags::SINGLE).expect_err("SINGLE");
    assert_eq!(e.kind(), ErrorKind::Logic, "{e}");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn registered_memory_takes_async_copies_both_ways() -> TestResult {
    let ctx = common::ctx();
    let mut rng = Rng::fresh();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    // 16 MiB and an odd length: the copy is still running when the host looks.
    let n = (4 << 20) + 3;
    let data = rng.vec_f32(n);
    let mut src = RegisteredHostMemory::from_vec(&ctx, data.clone(), HostRegisterFlags::empty())?;
    let mut dev = DeviceBuffer::<f32>::uninit(&ctx, n)?;
    memset_d32(&ctx, &mut dev, 0xFFFF_FFFF, n)?;
    ctx.synchronize()?;

    memcpy_htod_async(&mut dev, &src, &stream)?;
    // Host writes wait until the copy has read the registered memory.
    src.fill(0.0);
    let mut back =
        RegisteredHostMemory::from_vec(&ctx, vec![f32::NAN; n], HostRegisterFlags::empty())?;
    memcpy_dtoh_async(&mut back, &dev, &stream)?;
    // Host reads wait until the copy has written it: no stream synchronisation.
    assert_same_bits(&back, &data, "registered -> device -> registered, async");
    assert!(src.iter().all(|&v| v == 0.0));
    let got = back.into_vec()?;
    assert_same_bits(&got, &data, "the Vec given back");

    // A 'static borrowed slice takes async copies too.
    let leaked: &'static mut [f32] = Box::leak(vec![f32::NAN; n].into_boxed_slice());
    let mut reg = register_host_memory(&ctx, leaked, HostRegisterFlags::PORTABLE)?;
    memcpy_dtoh_async(&mut reg, &dev, &stream)?;
    assert_same_bits(&reg, &data, "device -> 'static registered slice, async");
    reg.unregister()?;

    // Fresh data through the same registration again (no stale bytes).
    let data2 = rng.vec_f32(n);
    let mut src2 = RegisteredHostMemory::from_vec(&ctx, data.clone(), HostRegisterFlags::empty())?;
    src2.copy_from_slice(&data2);
    memcpy_htod_async(&mut dev, &src2, &stream)?;
    let mut back2 = pagelocked_empty::<f32>(&ctx, n, HostAllocFlags::empty())?;
    back2.fill(f32::NAN);
    memcpy_dtoh_async(&mut back2, &dev, &stream)?;
    assert_same_bits(&back2, &data2, "second registered round trip");

    let short =
        RegisteredHostMemory::from_vec(&ctx, vec![0f32; n - 1], HostRegisterFlags::empty())?;
    let e = memcpy_htod_async(&mut dev, &short, &stream).expect_err("sizes differ");
    assert_eq!(e.kind(), ErrorKind::Logic, "{e}");
    Ok(())
}
