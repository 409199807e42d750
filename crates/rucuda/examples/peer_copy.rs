//! A copy between two GPUs (PyCUDA's `memcpy_peer` and `Context.enable_peer_access`):
//! random data on device 0 is copied to device 1 (directly where the devices can reach
//! each other, else staged by the driver), timed with events on device 1, copied back
//! asynchronously and checked on the CPU.
//!
//! On a machine with one GPU it prints a skip line (`RUCUDA_SKIPPED: ...`, which the GPU
//! bundle's run.sh counts as a skip) and exits 0.
//!
//! Run: `cargo run -p rucuda --example peer_copy`

mod common;

use rucuda::driver::{memcpy_peer, memcpy_peer_async};
use rucuda::prelude::*;
use rucuda::sys::CUresult;

fn main() {
    common::main("peer_copy", false, run);
}

fn run() -> common::ExampleResult {
    let count = Device::count()?;
    if count < 2 {
        println!("peer_copy needs two CUDA devices; this machine shows {count}. Nothing to do.");
        println!("RUCUDA_SKIPPED: peer_copy needs 2 devices, found {count}");
        return Ok(());
    }
    let (dev0, dev1) = (Device::get(0)?, Device::get(1)?);
    println!("device 0: {} ({})", dev0.name()?, dev0.pci_bus_id()?);
    println!("device 1: {} ({})", dev1.name()?, dev1.pci_bus_id()?);
    let (ctx0, ctx1) = (dev0.primary_context()?, dev1.primary_context()?);

    // Direct access both ways where the hardware allows it (NVLink or PCIe P2P).
    let direct = dev0.can_access_peer(dev1)? && dev1.can_access_peer(dev0)?;
    if direct {
        enable(&ctx0, &ctx1)?;
        enable(&ctx1, &ctx0)?;
    }
    println!(
        "peer access: {} ({:?})",
        if direct {
            "enabled both ways"
        } else {
            "not possible, the driver stages through the host"
        },
        dev0.p2p_info(dev1)?
    );

    let n = 32 << 20; // 128 MiB of floats
    let bytes = n * 4;
    let host = common::random_f32(n, common::fresh_seed());
    let on0 = DeviceBuffer::from_slice(&ctx0, &host)?;
    let mut on1 = DeviceBuffer::<f32>::zeros(&ctx1, n)?;

    // Device 0 -> device 1, timed on a stream of device 1.
    let stream1 = Stream::new(&ctx1, StreamFlags::NON_BLOCKING)?;
    let (start, end) = (
        Event::new(&ctx1, EventFlags::DEFAULT)?,
        Event::new(&ctx1, EventFlags::DEFAULT)?,
    );
    memcpy_peer(&mut on1, &ctx1, &on0, &ctx0, bytes)?; // warm-up, synchronous
    start.record(&stream1)?;
    for _ in 0..5 {
        memcpy_peer_async(&mut on1, &ctx1, &on0, &ctx0, bytes, &stream1)?;
    }
    end.record(&stream1)?;
    end.synchronize()?;
    let seconds = f64::from(end.time_since(&start)?) / 1e3 / 5.0;
    println!(
        "device 0 -> 1: {} MiB in {:.3} ms, {:.1} GB/s",
        bytes >> 20,
        seconds * 1e3,
        bytes as f64 / seconds / 1e9
    );

    // Back to a fresh buffer on device 0, asynchronously on a stream of device 0.
    let stream0 = Stream::new(&ctx0, StreamFlags::NON_BLOCKING)?;
    let mut back = DeviceBuffer::from_slice(&ctx0, &vec![f32::NAN; n])?;
    memcpy_peer_async(&mut back, &ctx0, &on1, &ctx1, bytes, &stream0)?;
    stream0.synchronize()?;
    common::compare("device 1's copy", &on1.to_vec()?, &host, 0.0)?;
    common::compare("the copy back on device 0", &back.to_vec()?, &host, 0.0)?;
    println!("{n} floats match on both devices");
    println!("peer_copy: OK");
    Ok(())
}

/// Lets `ctx`'s kernels and copies reach `peer`'s memory; already enabled is fine.
fn enable(ctx: &Context, peer: &Context) -> common::ExampleResult {
    match ctx.enable_peer_access(peer) {
        Ok(()) => Ok(()),
        Err(e) if e.code() == Some(CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) => Ok(()),
        Err(e) => Err(e.into()),
    }
}
