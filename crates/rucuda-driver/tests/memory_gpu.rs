//! GPU tests of the memory kinds and copies: page-locked, mapped, registered, managed,
//! pitched and IPC memory; memsets; async, staged and peer copies; pointer attributes.
//! Every output is poisoned before the operation and compared with a CPU reference on
//! fresh random data.

mod common;

use common::Rng;
use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::*;

type TestResult = Result<(), Error>;

const BLOCK: u32 = 256;

fn memory_module(ctx: &Context) -> Module {
    common::module(ctx, include_str!("kernels/memory.ptx"))
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

fn random_u32(rng: &mut Rng, n: usize) -> Vec<u32> {
    (0..n).map(|_| rng.next_u64() as u32).collect()
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
    host.copy_from_slice(&random_u32(&mut rng, n));
    let original = host.to_vec();
    let (a, b) = (rng.next_u64() as u32 | 1, rng.next_u64() as u32);
    {
        let flags = HostRegisterFlags::PORTABLE | HostRegisterFlags::DEVICEMAP;
        let mut reg = register_host_memory(&ctx, &mut host[..], flags)?;
        assert_eq!(reg.flags(), flags);
        let attrs = pointer_attributes(&ctx, reg.as_ptr() as CUdeviceptr)?;
        assert_eq!(attrs.memory_type, MemoryType::Host);
        let dev = DeviceBuffer::from_slice(&ctx, &reg)?;
        assert_same(&dev.to_vec()?, &original, "registered -> device -> host");
        // SAFETY: affine_u32(unsigned* x, unsigned a, unsigned b, unsigned n) rewrites x[0..n).
        unsafe {
            affine_u32.launch(
                LaunchConfig::for_elements(n, BLOCK),
                &stream,
                (reg.device_view_mut()?, a, b, n as u32),
            )?
        };
        stream.synchronize()?;
        let want: Vec<u32> = original.iter().map(|&x| affine(x, a, b)).collect();
        assert_same(&reg, &want, "kernel writes registered memory");
        reg.unregister()?;
    }
    assert_eq!(host[0], affine(original[0], a, b));

    // An owned Vec of a size that is not a whole number of pages.
    let v = random_u32(&mut rng, 12_345);
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
    let u = random_u32(&mut rng, n2);
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
fn pitched_allocation_and_2d_memsets_touch_only_their_rectangles() -> TestResult {
    let ctx = common::ctx();
    let mut rng = Rng::fresh();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let (width, height) = (1000usize, 37usize);
    let mut img = mem_alloc_pitch(&ctx, width, height, 4)?;
    let pitch = img.pitch();
    assert!(pitch >= width && pitch % 4 == 0, "pitch {pitch}");
    assert_eq!((img.width_bytes(), img.height()), (width, height));
    let total = pitch * height;
    assert_eq!(img.byte_len(), total);
    let mut want = random_bytes(&mut rng, total);
    memcpy_htod(&ctx, &mut img, &want)?;

    // The whole usable width, 32-bit cells.
    let v32 = rng.next_u64() as u32;
    img.fill_d32(v32)?;
    for r in 0..height {
        for c in (0..width).step_by(4) {
            want[r * pitch + c..r * pitch + c + 4].copy_from_slice(&v32.to_le_bytes());
        }
    }
    let mut got = vec![0u8; total];
    memcpy_dtoh(&ctx, &mut got, &img)?;
    assert_same(&got, &want, "fill_d32 over the pitched rows");

    // A 16-bit sub-rectangle: rows 3..23, bytes 10..210.
    let v16 = rng.next_u64() as u16;
    let base = img.row_ptr(3)? + 10;
    // SAFETY: from row 3, byte 10 to the end of `img`, which outlives `sub`.
    let mut sub = unsafe { ExternalDevicePtr::new(base, total - 3 * pitch - 10) };
    memset_d2d16(&ctx, &mut sub, pitch, v16, 100, 20)?;
    for r in 3..23 {
        for c in (10..210).step_by(2) {
            want[r * pitch + c..r * pitch + c + 2].copy_from_slice(&v16.to_le_bytes());
        }
    }
    // An 8-bit one at an odd column, asynchronously: rows 25..32, bytes 1..334.
    let v8 = rng.next_u64() as u8;
    let base8 = img.row_ptr(25)? + 1;
    // SAFETY: as above, from row 25, byte 1.
    let mut sub8 = unsafe { ExternalDevicePtr::new(base8, total - 25 * pitch - 1) };
    ctx.synchronize()?; // the legacy-stream memsets above, before the non-blocking stream
    memset_d2d8_async(&mut sub8, pitch, v8, 333, 7, &stream)?;
    stream.synchronize()?;
    for r in 25..32 {
        want[r * pitch + 1..r * pitch + 334].fill(v8);
    }
    got.fill(0xFF);
    memcpy_dtoh(&ctx, &mut got, &img)?;
    assert_same(&got, &want, "2D memsets of sub-rectangles");

    // Refused before the driver: rows wider than the pitch, too many rows.
    let e = memset_d2d32(&ctx, &mut img, pitch, 0, pitch / 4 + 1, 2).expect_err("too wide");
    assert_eq!(e.kind(), ErrorKind::Logic, "{e}");
    let e = memset_d2d8(&ctx, &mut sub, pitch, 0, 10, height).expect_err("too many rows");
    assert_eq!(e.kind(), ErrorKind::Logic, "{e}");
    let e = mem_alloc_pitch(&ctx, 64, 4, 3).expect_err("element size 3");
    assert_eq!(e.kind(), ErrorKind::Logic, "{e}");
    img.free()?;
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn memsets_fill_exactly_their_range() -> TestResult {
    let ctx = common::ctx();
    let mut rng = Rng::fresh();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;

    let n8 = 1_000_003;
    let mut want8 = random_bytes(&mut rng, n8);
    let mut buf8 = DeviceBuffer::from_slice(&ctx, &want8)?;
    let v8 = rng.next_u64() as u8;
    memset_d8(&ctx, &mut buf8.slice_mut(5..n8 - 7)?, v8, n8 - 12)?;
    want8[5..n8 - 7].fill(v8);
    assert_same(&buf8.to_vec()?, &want8, "memset_d8 of a view");

    let n16 = 500_001;
    let mut want16: Vec<u16> = (0..n16).map(|_| rng.next_u64() as u16).collect();
    let mut buf16 = DeviceBuffer::from_slice(&ctx, &want16)?;
    // A small pageable copy may still be in flight (like cuMemcpyHtoD): order it before
    // work on the non-blocking stream.
    ctx.synchronize()?;
    let v16 = rng.next_u64() as u16;
    memset_d16_async(&mut buf16.slice_mut(3..n16 - 2)?, v16, n16 - 5, &stream)?;
    stream.synchronize()?;
    want16[3..n16 - 2].fill(v16);
    assert_same(&buf16.to_vec()?, &want16, "memset_d16_async of a view");

    let n32 = 250_007;
    let mut want32 = random_u32(&mut rng, n32);
    let mut buf32 = DeviceBuffer::from_slice(&ctx, &want32)?;
    let v32 = rng.next_u64() as u32;
    // Fewer elements than the view holds: the last one keeps its value.
    memset_d32(&ctx, &mut buf32.slice_mut(1..)?, v32, n32 - 2)?;
    want32[1..n32 - 1].fill(v32);
    assert_same(&buf32.to_vec()?, &want32, "memset_d32 of part of a view");

    let mut floats = DeviceBuffer::from_slice(&ctx, &rng.vec_f32(4097))?;
    ctx.synchronize()?;
    memset_d32_async(&mut floats, 1.5f32.to_bits(), 4097, &stream)?;
    memset_d8_async(&mut floats.slice_mut(4096..)?, 0, 4, &stream)?;
    stream.synchronize()?;
    let mut want_f = vec![1.5f32; 4097];
    want_f[4096] = 0.0;
    assert_same_bits(&floats.to_vec()?, &want_f, "memset_d32_async of floats");

    let e = memset_d32(&ctx, &mut buf32, 0, n32 + 1).expect_err("one too many");
    assert_eq!(e.kind(), ErrorKind::Logic, "{e}");
    // SAFETY: inside buf32 (never written: the call is refused).
    let mut misaligned = unsafe { ExternalDevicePtr::new(buf32.device_range().address() + 2, 64) };
    let e = memset_d32(&ctx, &mut misaligned, 0, 4).expect_err("not 4-byte aligned");
    assert_eq!(e.kind(), ErrorKind::Logic, "{e}");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn staged_pageable_copies_are_exact_for_odd_sizes() -> TestResult {
    let ctx = common::ctx();
    let mut rng = Rng::fresh();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    for size in [(1 << 20) - 1, 1 << 20, (3 << 20) + 5, (37 << 20) + 3] {
        // Host -> device through the staged path, checked through the driver's own
        // page-locked path (so a mistake in both directions cannot cancel out).
        let data = random_bytes(&mut rng, size);
        let dev = DeviceBuffer::from_slice(&ctx, &data)?;
        ctx.synchronize()?; // the unstaged size may still be in flight, like cuMemcpyHtoD
        let mut check = pagelocked_empty::<u8>(&ctx, size, HostAllocFlags::empty())?;
        check.fill(0xFF);
        memcpy_dtoh_async(&mut check, &dev, &stream)?;
        assert_same(&check, &data, &format!("staged upload of {size} bytes"));

        // Device (filled through page-locked memory) -> host through the staged path.
        let data2 = random_bytes(&mut rng, size);
        let src = PinnedHostBuffer::from_slice(&ctx, &data2, HostAllocFlags::empty())?;
        let mut dev2 = DeviceBuffer::<u8>::uninit(&ctx, size)?;
        memcpy_htod_async(&mut dev2, &src, &stream)?;
        stream.synchronize()?;
        assert_same(&dev2.to_vec()?, &data2, &format!("to_vec of {size} bytes"));
        let mut out = vec![0xFFu8; size];
        dev2.copy_to_host(&mut out)?;
        assert_same(&out, &data2, &format!("copy_to_host of {size} bytes"));
        out.fill(0xFF);
        memcpy_dtoh(&ctx, &mut out, &dev2)?;
        assert_same(&out, &data2, &format!("memcpy_dtoh of {size} bytes"));
    }

    // A view at an odd offset, typed f64 of an odd count.
    let n = (5 << 20) / 8 + 3;
    let values: Vec<f64> = (0..n).map(|_| rng.f64()).collect();
    let mut big = DeviceBuffer::<f64>::zeros(&ctx, n + 10)?;
    memcpy_htod(&ctx, &mut big.slice_mut(7..7 + n)?, &values)?;
    let all = big.to_vec()?;
    assert!(all[..7].iter().chain(&all[7 + n..]).all(|&x| x == 0.0));
    let got: Vec<u64> = all[7..7 + n].iter().map(|x| x.to_bits()).collect();
    let want: Vec<u64> = values.iter().map(|x| x.to_bits()).collect();
    assert_same(&got, &want, "memcpy_htod into an offset view");
    let back: Vec<f64> = from_device(&ctx, &big.slice(7..7 + n)?, n)?;
    assert!(back
        .iter()
        .zip(&values)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    let like: Vec<f64> = from_device_like(&ctx, &big, &all)?;
    assert_eq!(like.len(), all.len());

    // Freed buffers are made again by the next copy.
    release_staging_buffers(&ctx)?;
    let again = random_bytes(&mut rng, (2 << 20) + 1);
    assert_same(
        &to_device(&ctx, &again)?.to_vec()?,
        &again,
        "after releasing the staging buffers",
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn staged_copies_work_from_several_threads_and_in_created_contexts() -> TestResult {
    let ctx = common::ctx();
    let mut rng = Rng::fresh();
    let inputs: Vec<Vec<u8>> = (0..4)
        .map(|i| random_bytes(&mut rng, (6 << 20) + 1 + i))
        .collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = inputs
            .iter()
            .map(|data| {
                let ctx = ctx.clone();
                s.spawn(move || -> Result<Vec<u8>, Error> {
                    let mut dev = DeviceBuffer::<u8>::uninit(&ctx, data.len())?;
                    let mut total = Vec::new();
                    for _ in 0..3 {
                        dev.copy_from_host(data)?;
                        total = dev.to_vec()?;
                    }
                    Ok(total)
                })
            })
            .collect();
        for (h, data) in handles.into_iter().zip(&inputs) {
            let got = h.join().expect("copy thread")?;
            assert_same(&got, data, "concurrent staged copies");
        }
        Ok::<(), Error>(())
    })?;

    let created = Device::get(0)?.make_context(ContextFlags::empty())?;
    let data = random_bytes(&mut rng, (5 << 20) + 11);
    {
        let dev = DeviceBuffer::from_slice(&created, &data)?;
        assert_same(&dev.to_vec()?, &data, "staged copies in a created context");
    }
    drop(created);
    // The primary context's staging still works after the created context went.
    let data = random_bytes(&mut rng, (4 << 20) + 3);
    assert_same(
        &DeviceBuffer::from_slice(&ctx, &data)?.to_vec()?,
        &data,
        "primary context after a created one",
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn peer_copies_between_two_contexts_of_one_device() -> TestResult {
    let ctx_a = common::ctx();
    let mut rng = Rng::fresh();
    let n = 300_001;
    let data = random_u32(&mut rng, n);
    let a = DeviceBuffer::from_slice(&ctx_a, &data)?;
    let ctx_b = ctx_a.device().make_context(ContextFlags::empty())?;
    let mut b = DeviceBuffer::<u32>::uninit(&ctx_b, n)?;
    memset_d32(&ctx_b, &mut b, 0xFFFF_FFFF, n)?;
    memcpy_peer(&mut b, &ctx_b, &a, &ctx_a, n * 4)?;
    assert_same(&b.to_vec()?, &data, "memcpy_peer between contexts");

    let stream_b = Stream::new(&ctx_b, StreamFlags::NON_BLOCKING)?;
    let mut c = DeviceBuffer::<u32>::uninit(&ctx_b, n)?;
    memset_d32(&ctx_b, &mut c, 0xFFFF_FFFF, n)?;
    ctx_b.synchronize()?; // the legacy-stream memset, before the non-blocking stream
    let half = n / 2;
    memcpy_peer_async(&mut c, &ctx_b, &a, &ctx_a, half * 4, &stream_b)?;
    stream_b.synchronize()?;
    let mut want = vec![0xFFFF_FFFFu32; n];
    want[..half].copy_from_slice(&data[..half]);
    assert_same(&c.to_vec()?, &want, "memcpy_peer_async of the first half");

    let e = memcpy_peer(&mut c, &ctx_b, &a, &ctx_a, n * 4 + 1).expect_err("too long");
    assert_eq!(e.kind(), ErrorKind::Logic, "{e}");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn peer_copies_across_two_devices() -> TestResult {
    if Device::count()? < 2 {
        common::skip("one device: the cross-device peer copy needs two");
        return Ok(());
    }
    let ctx0 = common::ctx();
    let ctx1 = Device::get(1)?.primary_context()?;
    let mut rng = Rng::fresh();
    let n = (3 << 20) + 7;
    let data = random_bytes(&mut rng, n);
    let src = DeviceBuffer::from_slice(&ctx0, &data)?;
    let mut dst = DeviceBuffer::<u8>::uninit(&ctx1, n)?;
    memset_d8(&ctx1, &mut dst, 0xFF, n)?;
    memcpy_peer(&mut dst, &ctx1, &src, &ctx0, n)?;
    assert_same(&dst.to_vec()?, &data, "device 0 -> device 1");

    let stream0 = Stream::new(&ctx0, StreamFlags::NON_BLOCKING)?;
    let mut back = DeviceBuffer::<u8>::uninit(&ctx0, n)?;
    memset_d8(&ctx0, &mut back, 0xFF, n)?;
    ctx0.synchronize()?;
    memcpy_peer_async(&mut back, &ctx0, &dst, &ctx1, n, &stream0)?;
    stream0.synchronize()?;
    assert_same(&back.to_vec()?, &data, "device 1 -> device 0, async");
    Ok(())
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
    let data = random_u32(&mut rng, n);
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
    let data = random_u32(&mut rng, n);
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
    let data = random_u32(&mut rng, 1 << 20);
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
    let data = random_u32(&mut rng, n);
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
