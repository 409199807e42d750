//! GPU tests of memsets and copies: pitched allocations and 2D memsets, memsets of exact
//! ranges, staged pageable copies (odd sizes, several threads, created contexts), peer
//! copies between contexts and devices.
//!
//! Every output is poisoned before the operation and compared with a CPU reference on
//! fresh random data.

use crate::common;
use crate::common::Rng;
use crate::{assert_same, assert_same_bits, random_bytes, TestResult};
use rucuda_driver::*;

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
    let mut want32 = rng.vec_u32(n32);
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
    // 65 MiB and more: the device-to-host copy-out uses non-temporal stores.
    for size in [
        (1 << 20) - 1,
        1 << 20,
        (3 << 20) + 5,
        (37 << 20) + 3,
        (65 << 20) + 9,
    ] {
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
    let data = rng.vec_u32(n);
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
