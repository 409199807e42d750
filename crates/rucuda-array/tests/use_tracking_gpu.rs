//! GPU tests of use tracking through arrays: an array that sees another's memory as
//! another type (`reinterpret`, `real`) hands out a buffer whose uses must reach the
//! owner's log, so that the owner's stream-ordered free waits for work queued through it;
//! work on other streams and from other threads is ordered after the writes noted first;
//! index and value arrays dropped right after a gather or scatter that reads them; a
//! histogram's input and edges dropped right after it is queued.

mod common;
#[path = "../../rucuda-driver/tests/kernels/spin.rs"]
mod spin;

use rucuda_array::{Complex, GpuArray};
use rucuda_driver::*;

const N: usize = 1 << 20;

/// A copy out of `reinterpret().buffer()` queued on a busy stream, then both
/// arrays dropped and the memory reused on the home stream.
#[test]
#[ignore = "needs a CUDA device"]
fn a_copy_through_a_reinterpreted_buffer_delays_the_owners_free() {
    let c = common::ctx();
    let m = spin::core_kernels(&c);
    let home = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let other = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let a = GpuArray::<f32>::full(&home, &[N], 1.5).unwrap();
    home.synchronize().unwrap();
    let bits = a.reinterpret::<u32>().unwrap();
    let mut out = DeviceBuffer::<u32>::zeros(&c, N).unwrap();
    spin::spin(&m, &other);
    memcpy_dtod_async(&mut out, bits.buffer(), &other).unwrap();
    drop(bits);
    drop(a); // freed on `home`
    let again = GpuArray::<u32>::full(&home, &[N], 7).unwrap();
    home.synchronize().unwrap();
    other.synchronize().unwrap();
    let got = out.to_vec().unwrap();
    let want = 1.5f32.to_bits();
    assert!(
        got.iter().all(|&v| v == want),
        "the copy read the next owner's data ({} elements differ)",
        got.iter().filter(|&&v| v != want).count()
    );
    drop(again);
    c.check_deferred_errors().unwrap();
}

/// The same through `real()`: the view's buffer is an alias of the complex array's memory.
#[test]
#[ignore = "needs a CUDA device"]
fn a_copy_through_a_real_part_buffer_delays_the_owners_free() {
    let c = common::ctx();
    let m = spin::core_kernels(&c);
    let home = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let other = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let z = GpuArray::<Complex<f32>>::full(&home, &[N / 2], Complex::new(2.5, -1.0)).unwrap();
    home.synchronize().unwrap();
    let re = z.real().unwrap();
    let mut out = DeviceBuffer::<f32>::zeros(&c, N).unwrap();
    spin::spin(&m, &other);
    memcpy_dtod_async(&mut out, re.buffer(), &other).unwrap();
    drop(re);
    drop(z);
    let again = GpuArray::<f32>::full(&home, &[N], 7.0).unwrap();
    home.synchronize().unwrap();
    other.synchronize().unwrap();
    let got = out.to_vec().unwrap();
    for (i, v) in got.iter().enumerate() {
        let want = if i % 2 == 0 { 2.5 } else { -1.0 };
        assert_eq!(*v, want, "element {i}: the copy read the next owner's data");
    }
    drop(again);
    c.check_deferred_errors().unwrap();
}

/// An array written on its home stream and read by a kernel on another stream at once:
/// the other stream waits for the write.
#[test]
#[ignore = "needs a CUDA device"]
fn an_array_read_on_another_stream_waits_for_its_home_streams_write() {
    let c = common::ctx();
    let m = spin::core_kernels(&c);
    let home = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let other = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let a = GpuArray::<u32>::zeros(&home, &[N]).unwrap();
    home.synchronize().unwrap();
    spin::spin(&m, &home);
    a.fill(11).unwrap(); // on `home`, behind the spin
    let mut out = DeviceBuffer::<u32>::zeros(&c, N).unwrap();
    memcpy_dtod_async(&mut out, a.buffer(), &other).unwrap();
    other.synchronize().unwrap();
    assert!(
        out.to_vec().unwrap().iter().all(|&v| v == 11),
        "read before the fill"
    );
    c.check_deferred_errors().unwrap();
}

/// The window between taking an address and queueing the work: one thread takes `x`'s
/// address for a write on `s1` and queues the write only later (a kernel behind a busy
/// stream); another thread reads `x` on `s2` meanwhile. The read must come after the
/// write that was noted first: the use stays pending until the write is queued, since an
/// event recorded on `s1` before then would let the reader see the old values.
#[test]
#[ignore = "needs a CUDA device"]
fn a_read_on_another_thread_waits_for_a_write_noted_but_not_yet_queued() {
    let c = common::ctx();
    let m = spin::core_kernels(&c);
    let saxpy = m.function("saxpy").unwrap();
    let s1 = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let s2 = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let x = GpuArray::<f32>::full(&s1, &[N], 1.0).unwrap();
    let zeros = DeviceBuffer::<f32>::zeros(&c, N).unwrap();
    let twos = DeviceBuffer::from_slice(&c, &vec![2.0f32; N]).unwrap();
    s1.synchronize().unwrap();
    let mut out = DeviceBuffer::<f32>::zeros(&c, N).unwrap();
    let (noted_tx, noted_rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        s.spawn(|| {
            let used = x.use_on(&s1, Access::Write).unwrap();
            noted_tx.send(()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(300));
            spin::spin(&m, &s1);
            // SAFETY: saxpy(a, x, y, out, n) reads x[0..n), y[0..n) and writes
            // out[0..n); every buffer holds N floats.
            unsafe {
                saxpy
                    .launch(
                        LaunchConfig::for_elements(N, 256),
                        &s1,
                        (0.0f32, &zeros, &twos, &used, N as u64),
                    )
                    .unwrap()
            };
            drop(used);
        });
        noted_rx.recv().unwrap();
        memcpy_dtod_async(&mut out, x.buffer(), &s2).unwrap();
    });
    s2.synchronize().unwrap();
    s1.synchronize().unwrap();
    let got = out.to_vec().unwrap();
    assert!(
        got.iter().all(|&v| v == 2.0),
        "the read did not wait for the write noted before it ({} of {N} elements old)",
        got.iter().filter(|&&v| v != 2.0).count()
    );
    c.check_deferred_errors().unwrap();
}

/// `take_along_axis` queued behind a busy stream reads an index array that lives on
/// another stream; the index array is dropped right after the call (its memory freed on
/// its own stream) and that stream at once fills fresh arrays of the same size. The
/// gather must still read the indices it was given: their free waits for it.
#[test]
#[ignore = "needs a CUDA device"]
fn indices_dropped_right_after_take_along_axis_are_kept_until_it_reads_them() {
    use rucuda_array::ops::TakeMode;
    let c = common::ctx();
    let m = spin::core_kernels(&c);
    let home = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let other = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let (rows, cols) = (1024usize, 1024usize);
    let values: Vec<u32> = (0..(rows * cols) as u32).collect();
    let a = GpuArray::from_shape_slice(&home, &[rows, cols], &values).unwrap();
    // Each row reversed: index cols - 1 - j, the indices made on `other`.
    let rev: Vec<i64> = (0..rows * cols)
        .map(|k| (cols - 1 - k % cols) as i64)
        .collect();
    let idx = GpuArray::from_shape_slice(&other, &[rows, cols], &rev).unwrap();
    home.synchronize().unwrap();
    other.synchronize().unwrap();
    spin::spin(&m, &home);
    // Wrap: no wait on the host (Raise reads its flag back, which would wait).
    let out = a.take_along_axis(&idx, 1, TakeMode::Wrap);
    drop(idx); // freed on `other` while the gather waits behind the spin on `home`
    let reuse: Vec<GpuArray<i64>> = (0..4)
        .map(|_| GpuArray::full(&other, &[rows, cols], -7i64).unwrap())
        .collect();
    let got = out.unwrap().to_vec().unwrap();
    let want: Vec<u32> = values
        .chunks(cols)
        .flat_map(|r| r.iter().rev().copied())
        .collect();
    assert_eq!(got, want, "the gather read indices freed under it");
    drop(reuse);
    c.check_deferred_errors().unwrap();
}

/// `put_along_axis` into an array on a busy stream, with values and indices from another
/// stream dropped right after the call and their memory reused there: the scatter writes
/// what it was given, and a host read right after sees it.
#[test]
#[ignore = "needs a CUDA device"]
fn values_and_indices_dropped_right_after_put_along_axis_are_kept_until_it_runs() {
    use rucuda_array::ops::TakeMode;
    let c = common::ctx();
    let m = spin::core_kernels(&c);
    let home = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let other = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let (rows, cols) = (1024usize, 512usize);
    let dst = GpuArray::<f32>::zeros(&home, &[rows, cols]).unwrap();
    // Row r gets r + 0.5 at column (3 r) mod cols.
    let at: Vec<i32> = (0..rows).map(|r| ((3 * r) % cols) as i32).collect();
    let v: Vec<f32> = (0..rows).map(|r| r as f32 + 0.5).collect();
    let idx = GpuArray::from_shape_slice(&other, &[rows, 1], &at).unwrap();
    let vals = GpuArray::from_shape_slice(&other, &[rows, 1], &v).unwrap();
    home.synchronize().unwrap();
    other.synchronize().unwrap();
    spin::spin(&m, &home);
    // Wrap: no wait on the host (Raise reads its flag back, which would wait).
    dst.put_along_axis(&idx, &vals, 1, TakeMode::Wrap).unwrap();
    drop(idx);
    drop(vals);
    let reuse: Vec<GpuArray<f32>> = (0..4)
        .map(|_| GpuArray::full(&other, &[rows, 1], -1.0f32).unwrap())
        .collect();
    let got = dst.to_vec().unwrap(); // a host read right after: waits for the scatter
    let mut want = vec![0.0f32; rows * cols];
    for r in 0..rows {
        want[r * cols + (3 * r) % cols] = r as f32 + 0.5;
    }
    assert_eq!(
        got, want,
        "the scatter used values or indices freed under it"
    );
    drop(reuse);
    c.check_deferred_errors().unwrap();
}

/// A histogram (each kernel variant) queued behind a busy stream: the input array is
/// dropped right after the call and the explicit edges, uploaded inside it, are freed as
/// it returns; fresh arrays of the same sizes are then filled on another stream. The
/// counts read on the host right after must be those of the input and edges given.
#[test]
#[ignore = "needs a CUDA device"]
fn a_histogram_behind_a_busy_stream_keeps_its_input_and_edges_until_it_runs() {
    use rucuda_array::sort::{set_histogram_variant, HistogramVariant};
    let c = common::ctx();
    let m = spin::core_kernels(&c);
    let home = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let other = Stream::new(&c, StreamFlags::NON_BLOCKING).unwrap();
    let host: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 / 1000.0).collect();
    let edges = [0.0, 0.25, 0.5, 0.75, 1.0];
    let mut want = [0i64; 4];
    for &v in &host {
        want[edges
            .partition_point(|&e| e <= v as f64)
            .saturating_sub(1)
            .min(3)] += 1;
    }
    for variant in [HistogramVariant::Lanes, HistogramVariant::Classic] {
        set_histogram_variant(Some(variant));
        let x = GpuArray::from_slice(&home, &host).unwrap();
        home.synchronize().unwrap();
        spin::spin(&m, &home);
        let by_edges = x.histogram_edges(&edges).unwrap();
        let (even, _) = x.histogram(4, Some((0.0, 1.0))).unwrap();
        drop(x); // freed on `home` while both kernels wait behind the spin
        let reuse: Vec<GpuArray<f32>> = (0..4)
            .map(|_| GpuArray::full(&other, &[N], 9.0f32).unwrap())
            .chain((0..4).map(|_| GpuArray::full(&other, &[edges.len()], -1.0f32).unwrap()))
            .collect();
        assert_eq!(
            by_edges.to_vec().unwrap(),
            want,
            "{variant:?}: explicit edges"
        );
        assert_eq!(even.to_vec().unwrap(), want, "{variant:?}: even bins");
        drop(reuse);
    }
    set_histogram_variant(None);
    c.check_deferred_errors().unwrap();
}
