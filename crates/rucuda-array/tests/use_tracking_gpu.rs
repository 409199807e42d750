//! GPU tests of use tracking through arrays: an array that sees another's memory as
//! another type (`reinterpret`, `real`) hands out a buffer whose uses must reach the
//! owner's log, so that the owner's stream-ordered free waits for work queued through it;
//! work on other streams and from other threads is ordered after the writes noted first.

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
