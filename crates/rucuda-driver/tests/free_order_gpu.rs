//! GPU tests of the rule "memory is never freed while work on another stream may still
//! use it" (`memory/mod.rs`, "When memory is freed").
//!
//! Each test queues, on a second stream, a long spin and then a write into a buffer,
//! drops the buffer at once, allocates the same size again and fills it with a pattern.
//! When the driver hands the freed memory out again (the usual case: same size, same
//! pool) and the free did not wait for the second stream, the late write lands in the
//! new buffer and the pattern is off by one. Reuse is printed, so a pass that proved
//! nothing (no reuse) shows.

mod common;

use common::{core_module, ctx};
use rucuda_driver::*;

const N: usize = 1 << 20;
/// Roughly 0.2 to 0.5 s of spinning on current GPUs.
const SPIN_CYCLES: u64 = 500_000_000;

fn streams(c: &Context) -> (Stream, Stream) {
    (
        Stream::new(c, StreamFlags::NON_BLOCKING).unwrap(),
        Stream::new(c, StreamFlags::NON_BLOCKING).unwrap(),
    )
}

fn spin(m: &Module, stream: &Stream) {
    let spin = m.function("spin").unwrap();
    // SAFETY: spin(unsigned long long cycles) touches no memory.
    unsafe {
        spin.launch(LaunchConfig::linear(1, 1), stream, (SPIN_CYCLES,))
            .unwrap()
    };
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_kernel_on_another_stream_delays_a_stream_ordered_free() {
    let c = ctx();
    let m = core_module(&c);
    let add_one = m.function("add_one").unwrap();
    let (home, other) = streams(&c);
    let mut b = DeviceBuffer::<i32>::uninit_async(&home, N).unwrap();
    // Initialised, so that add_one reads set memory (initcheck).
    memset_d32_async(&mut b, 1, N, &home).unwrap();
    home.synchronize().unwrap();
    let old = b.device_range().address();
    spin(&m, &other);
    // SAFETY: add_one(int* x, int n) touches x[0..n).
    unsafe {
        add_one
            .launch(LaunchConfig::for_elements(N, 256), &other, (&b, N as i32))
            .unwrap()
    };
    drop(b); // freed on `home`, after `other` reaches this point
    let mut again = DeviceBuffer::<i32>::uninit_async(&home, N).unwrap();
    memset_d32_async(&mut again, 7, N, &home).unwrap();
    home.synchronize().unwrap();
    other.synchronize().unwrap();
    println!("memory reused: {}", again.device_range().address() == old);
    let got = again.to_vec().unwrap();
    assert!(
        got.iter().all(|&v| v == 7),
        "the late kernel wrote into the new buffer"
    );
    c.check_deferred_errors().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_safe_async_copy_on_another_stream_delays_a_stream_ordered_free() {
    let c = ctx();
    let m = core_module(&c);
    let (home, other) = streams(&c);
    let ones = DeviceBuffer::from_slice(&c, &vec![1u32; N]).unwrap();
    let mut b = DeviceBuffer::<u32>::uninit_async(&home, N).unwrap();
    home.synchronize().unwrap();
    let old = b.device_range().address();
    spin(&m, &other);
    // Safe calls only from here: a copy into a view of `b` queued behind the spin.
    memcpy_dtod_async(&mut b.slice_mut(..).unwrap(), &ones, &other).unwrap();
    drop(b);
    let mut again = DeviceBuffer::<u32>::uninit_async(&home, N).unwrap();
    memset_d32_async(&mut again, 5, N, &home).unwrap();
    home.synchronize().unwrap();
    other.synchronize().unwrap();
    println!("memory reused: {}", again.device_range().address() == old);
    let got = again.to_vec().unwrap();
    assert!(
        got.iter().all(|&v| v == 5),
        "the late copy wrote into the new buffer"
    );
    c.check_deferred_errors().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_synchronous_free_waits_for_work_on_other_streams() {
    // What the rule relies on for `cuMemAlloc` memory: cuMemFree synchronizes.
    let c = ctx();
    let m = core_module(&c);
    let add_one = m.function("add_one").unwrap();
    let (_, other) = streams(&c);
    let b = DeviceBuffer::<i32>::zeros(&c, N).unwrap();
    let old = b.device_range().address();
    spin(&m, &other);
    // SAFETY: add_one(int* x, int n) touches x[0..n).
    unsafe {
        add_one
            .launch(LaunchConfig::for_elements(N, 256), &other, (&b, N as i32))
            .unwrap()
    };
    drop(b);
    let mut again = DeviceBuffer::<i32>::uninit(&c, N).unwrap();
    memset_d32(&c, &mut again, 7, N).unwrap();
    other.synchronize().unwrap();
    println!("memory reused: {}", again.device_range().address() == old);
    let got = again.to_vec().unwrap();
    assert!(
        got.iter().all(|&v| v == 7),
        "cuMemFree did not wait for the kernel"
    );
    c.check_deferred_errors().unwrap();
}
