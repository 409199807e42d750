//! GPU tests of the structured copies: memcpy2d with pitches and offsets between host,
//! device and array memory, unified addresses and async copies, memcpy3d boxes, and the
//! 3D peer copy between two contexts.
//!
//! Every test uses fresh random data, poisons what the GPU writes before it writes it,
//! and compares with a CPU reference.

use crate::common::{ctx, Rng};
use crate::POISON_U32;
use rucuda_driver::*;

/// Copies a `w` x `h` box (in elements) between two pitched linear images (pitches in
/// elements), the CPU reference of a 2D copy.
#[allow(clippy::too_many_arguments)]
fn copy_box_2d(
    src: &[u32],
    src_pitch: usize,
    (sx, sy): (usize, usize),
    dst: &mut [u32],
    dst_pitch: usize,
    (dx, dy): (usize, usize),
    w: usize,
    h: usize,
) {
    for r in 0..h {
        let s = (sy + r) * src_pitch + sx;
        let d = (dy + r) * dst_pitch + dx;
        dst[d..d + w].copy_from_slice(&src[s..s + w]);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn memcpy2d_with_pitches_and_offsets_between_host_device_and_array() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let (w, h) = (13, 6); // the box, in u32 elements and rows

    // Host (pitch 40, box at (3, 2)) -> device (pitch 64, box at (5, 1)).
    let (hp, hrows) = (40, 11);
    let host = rng.vec_u32(hp * hrows);
    let (dp, drows) = (64, 9);
    let mut dev = DeviceBuffer::from_slice(&ctx, &vec![POISON_U32; dp * drows]).expect("poison");
    Memcpy2D::new(&ctx)
        .src_host(&host)
        .src_pitch(hp * 4)
        .src_x_in_bytes(3 * 4)
        .src_y(2)
        .dst_device(&mut dev)
        .dst_pitch(dp * 4)
        .dst_x_in_bytes(5 * 4)
        .dst_y(1)
        .width_in_bytes(w * 4)
        .height(h)
        .execute()
        .expect("host -> device");
    let mut want_dev = vec![POISON_U32; dp * drows];
    copy_box_2d(&host, hp, (3, 2), &mut want_dev, dp, (5, 1), w, h);
    assert_eq!(dev.to_vec().expect("read device"), want_dev);

    // Device (the same box) -> array (24 x 10, box at (7, 3)), unaligned variant.
    let (aw, ah) = (24, 10);
    let mut array =
        CudaArray::new(&ctx, &ArrayDescriptor::new(aw, ah, ArrayFormat::U32, 1)).expect("array");
    array
        .copy_from_host(&vec![POISON_U32; aw * ah])
        .expect("poison array");
    Memcpy2D::new(&ctx)
        .src_device(&dev)
        .src_pitch(dp * 4)
        .src_x_in_bytes(5 * 4)
        .src_y(1)
        .dst_array(&mut array)
        .dst_x_in_bytes(7 * 4)
        .dst_y(3)
        .width_in_bytes(w * 4)
        .height(h)
        .execute_unaligned()
        .expect("device -> array");
    let mut want_array = vec![POISON_U32; aw * ah];
    copy_box_2d(&want_dev, dp, (5, 1), &mut want_array, aw, (7, 3), w, h);
    assert_eq!(array.to_host_vec::<u32>().expect("read array"), want_array);

    // Array (the box) -> host (pitch 30, box at (2, 4)).
    let (op, orows) = (30, 12);
    let mut out = vec![POISON_U32; op * orows];
    Memcpy2D::new(&ctx)
        .src_array(&array)
        .src_x_in_bytes(7 * 4)
        .src_y(3)
        .dst_host(&mut out)
        .dst_pitch(op * 4)
        .dst_x_in_bytes(2 * 4)
        .dst_y(4)
        .width_in_bytes(w * 4)
        .height(h)
        .execute()
        .expect("array -> host");
    let mut want_out = vec![POISON_U32; op * orows];
    copy_box_2d(&want_array, aw, (7, 3), &mut want_out, op, (2, 4), w, h);
    assert_eq!(out, want_out);

    // A box past the end of the host slice is refused before the driver sees it.
    let short = vec![0u32; hp * 7];
    let e = Memcpy2D::new(&ctx)
        .src_host(&short)
        .src_pitch(hp * 4)
        .src_y(2)
        .dst_device(&mut dev)
        .dst_pitch(dp * 4)
        .width_in_bytes(w * 4)
        .height(h)
        .execute()
        .expect_err("out of bounds");
    assert!(e.to_string().contains("source host memory"), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn memcpy2d_unified_addresses_and_async() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING).expect("stream");
    let (w, h, hp, dp) = (9, 7, 12, 16);
    let host = rng.vec_u32(hp * h);
    let mut dev = DeviceBuffer::from_slice(&ctx, &vec![POISON_U32; dp * h]).expect("poison");
    let copy = Memcpy2D::new(&ctx)
        .src_unified(&host)
        .src_pitch(hp * 4)
        .src_x_in_bytes(2 * 4)
        .dst_device(&mut dev)
        .dst_pitch(dp * 4)
        .dst_x_in_bytes(4 * 4)
        .width_in_bytes(w * 4)
        .height(h);
    // SAFETY: `host` and `dev` outlive the stream synchronisation below.
    unsafe { copy.execute_async(&stream) }.expect("unified -> device, async");
    stream.synchronize().expect("sync");
    let mut want_dev = vec![POISON_U32; dp * h];
    copy_box_2d(&host, hp, (2, 0), &mut want_dev, dp, (4, 0), w, h);
    assert_eq!(dev.to_vec().expect("read"), want_dev);

    let mut back = vec![POISON_U32; w * h];
    let copy = Memcpy2D::new(&ctx)
        .src_device(&dev)
        .src_pitch(dp * 4)
        .src_x_in_bytes(4 * 4)
        .dst_unified(&mut back)
        .width_in_bytes(w * 4)
        .height(h);
    // SAFETY: `dev` and `back` outlive the stream synchronisation below.
    unsafe { copy.execute_async(&stream) }.expect("device -> unified, async");
    stream.synchronize().expect("sync");
    let mut want_back = vec![POISON_U32; w * h];
    copy_box_2d(&host, hp, (2, 0), &mut want_back, w, (0, 0), w, h);
    assert_eq!(back, want_back);
}

/// A 3D box copy between pitched volumes (pitches in elements, `sh`/`dh` rows per slice).
#[allow(clippy::too_many_arguments)]
fn copy_box_3d(
    src: &[u32],
    (sp, sh): (usize, usize),
    (sx, sy, sz): (usize, usize, usize),
    dst: &mut [u32],
    (dp, dh): (usize, usize),
    (dx, dy, dz): (usize, usize, usize),
    (w, h, d): (usize, usize, usize),
) {
    for k in 0..d {
        for r in 0..h {
            let s = ((sz + k) * sh + sy + r) * sp + sx;
            let t = ((dz + k) * dh + dy + r) * dp + dx;
            dst[t..t + w].copy_from_slice(&src[s..s + w]);
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn memcpy3d_boxes_between_host_array_and_device() {
    let ctx = ctx();
    let mut rng = Rng::fresh();
    let boxed = (6, 4, 3); // w (elements), h, d

    // Host volume: pitch 20 elements, 9 rows per slice, 5 slices; box at (2, 3, 1).
    let (hp, hh, hd) = (20, 9, 5);
    let host = rng.vec_u32(hp * hh * hd);
    // Array 10 x 7 x 6, box at (3, 2, 2).
    let (aw, ah, ad) = (10, 7, 6);
    let mut array = CudaArray::new_3d(
        &ctx,
        &ArrayDescriptor3D::d3(aw, ah, ad, ArrayFormat::U32, 1),
    )
    .expect("3D array");
    array
        .copy_from_host(&vec![POISON_U32; aw * ah * ad])
        .expect("poison");
    Memcpy3D::new(&ctx)
        .src_host(&host)
        .src_pitch(hp * 4)
        .src_height(hh)
        .src_x_in_bytes(2 * 4)
        .src_y(3)
        .src_z(1)
        .dst_array(&mut array)
        .dst_x_in_bytes(3 * 4)
        .dst_y(2)
        .dst_z(2)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2)
        .execute()
        .expect("host -> array");
    let mut want_array = vec![POISON_U32; aw * ah * ad];
    copy_box_3d(
        &host,
        (hp, hh),
        (2, 3, 1),
        &mut want_array,
        (aw, ah),
        (3, 2, 2),
        boxed,
    );
    assert_eq!(array.to_host_vec::<u32>().expect("read"), want_array);

    // Array box -> device volume: pitch 16 elements, 6 rows per slice, 4 slices; at (1, 1, 1).
    let (dp, dh, dd) = (16, 6, 4);
    let mut dev = DeviceBuffer::from_slice(&ctx, &vec![POISON_U32; dp * dh * dd]).expect("poison");
    Memcpy3D::new(&ctx)
        .src_array(&array)
        .src_x_in_bytes(3 * 4)
        .src_y(2)
        .src_z(2)
        .dst_device(&mut dev)
        .dst_pitch(dp * 4)
        .dst_height(dh)
        .dst_x_in_bytes(4)
        .dst_y(1)
        .dst_z(1)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2)
        .execute()
        .expect("array -> device");
    let mut want_dev = vec![POISON_U32; dp * dh * dd];
    copy_box_3d(
        &want_array,
        (aw, ah),
        (3, 2, 2),
        &mut want_dev,
        (dp, dh),
        (1, 1, 1),
        boxed,
    );
    assert_eq!(dev.to_vec().expect("read"), want_dev);

    // Device box -> tight host volume, asynchronously.
    let stream = Stream::new(&ctx, StreamFlags::DEFAULT).expect("stream");
    let mut out = vec![POISON_U32; boxed.0 * boxed.1 * boxed.2];
    let copy = Memcpy3D::new(&ctx)
        .src_device(&dev)
        .src_pitch(dp * 4)
        .src_height(dh)
        .src_x_in_bytes(4)
        .src_y(1)
        .src_z(1)
        .dst_host(&mut out)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2);
    // SAFETY: `dev` and `out` outlive the synchronisation below.
    unsafe { copy.execute_async(&stream) }.expect("device -> host, async");
    stream.synchronize().expect("sync");
    let mut want_out = vec![POISON_U32; out.len()];
    copy_box_3d(
        &want_dev,
        (dp, dh),
        (1, 1, 1),
        &mut want_out,
        (boxed.0, boxed.1),
        (0, 0, 0),
        boxed,
    );
    assert_eq!(out, want_out);

    // A box past the array's slices is refused.
    let e = Memcpy3D::new(&ctx)
        .src_array(&array)
        .src_z(4)
        .dst_host(&mut out)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2)
        .execute()
        .expect_err("past the last slice");
    assert!(e.to_string().contains("src_z + depth"), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn memcpy3d_peer_between_two_contexts() {
    let ctx = ctx();
    let other = ctx
        .device()
        .make_context(ContextFlags::SCHED_AUTO)
        .expect("a second context");
    let mut rng = Rng::fresh();
    let boxed = (10, 4, 2);
    let (sp, sh, sd) = (32, 6, 3);
    let data = rng.vec_u32(sp * sh * sd);
    let src = DeviceBuffer::from_slice(&ctx, &data).expect("upload");
    let n = boxed.0 * boxed.1 * boxed.2;
    let mut dst = DeviceBuffer::from_slice(&other, &vec![POISON_U32; n]).expect("poison");
    Memcpy3DPeer::new(&other, &ctx)
        .src_context(&ctx)
        .dst_context(&other)
        .src_device(&src)
        .src_pitch(sp * 4)
        .src_height(sh)
        .src_x_in_bytes(3 * 4)
        .src_y(1)
        .src_z(1)
        .dst_device(&mut dst)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2)
        .execute()
        .expect("peer copy");
    let mut want = vec![POISON_U32; n];
    copy_box_3d(
        &data,
        (sp, sh),
        (3, 1, 1),
        &mut want,
        (boxed.0, boxed.1),
        (0, 0, 0),
        boxed,
    );
    assert_eq!(dst.to_vec().expect("read"), want);

    // Back again through Memcpy3D::peer, into an array of the first context.
    let mut array = CudaArray::new_3d(
        &ctx,
        &ArrayDescriptor3D::d3(boxed.0, boxed.1, boxed.2, ArrayFormat::U32, 1),
    )
    .expect("array");
    array.copy_from_host(&vec![POISON_U32; n]).expect("poison");
    Memcpy3D::new(&ctx)
        .src_device(&dst)
        .dst_array(&mut array)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2)
        .peer(&other, &ctx)
        .execute()
        .expect("peer copy into an array");
    assert_eq!(array.to_host_vec::<u32>().expect("read"), want);

    // An array named with the wrong context is refused.
    let mut host = vec![0u32; n];
    let e = Memcpy3DPeer::new(&other, &other)
        .src_array(&array)
        .dst_host(&mut host)
        .width_in_bytes(boxed.0 * 4)
        .height(boxed.1)
        .depth(boxed.2)
        .execute()
        .expect_err("wrong context");
    assert!(e.to_string().contains("another context"), "{e}");
}
