//! Copy bandwidth. Device-to-device and pinned transfers are timed on a stream with events;
//! pageable transfers, which the driver stages through its own pinned buffers, with the host
//! clock around the synchronous call and a context synchronize (what a caller waits for).
//! `n` is the buffer size in bytes; device-to-device counts read + write bytes.

use rucuda_driver::{
    memcpy_dtod_async, memcpy_dtoh_async, memcpy_htod_async, DeviceBuffer, HostAllocFlags,
    PinnedHostBuffer, Stream as RucudaStream, StreamFlags,
};

use super::{rucuda_context, rucuda_device_seconds, Case, RAW, RUCUDA};
use crate::config::Config;
use crate::cuda::{check, DeviceMemory, Gpu, PinnedHost, Result, Stream};
use crate::harness::{device_seconds, host_seconds, Measurement};
use crate::report::COPY_CASE;

/// Registers the device-to-device copy (run first: it is the reference of the ratios).
pub fn register_device_copy(cases: &mut Vec<Case>) {
    cases.push(Case {
        name: COPY_CASE,
        lib: RAW,
        run: raw_d2d_copy,
    });
    cases.push(Case {
        name: COPY_CASE,
        lib: RUCUDA,
        run: rucuda_d2d_copy,
    });
}

/// Registers the host-device transfers.
pub fn register_transfers(cases: &mut Vec<Case>) {
    cases.push(Case {
        name: "h2d_pageable_GBps",
        lib: RAW,
        run: raw_h2d_pageable,
    });
    cases.push(Case {
        name: "h2d_pageable_GBps",
        lib: RUCUDA,
        run: rucuda_h2d_pageable,
    });
    cases.push(Case {
        name: "d2h_pageable_GBps",
        lib: RAW,
        run: raw_d2h_pageable,
    });
    cases.push(Case {
        name: "d2h_pageable_GBps",
        lib: RUCUDA,
        run: rucuda_d2h_pageable,
    });
    cases.push(Case {
        name: "h2d_pinned_GBps",
        lib: RAW,
        run: raw_h2d_pinned,
    });
    cases.push(Case {
        name: "h2d_pinned_GBps",
        lib: RUCUDA,
        run: rucuda_h2d_pinned,
    });
    cases.push(Case {
        name: "d2h_pinned_GBps",
        lib: RAW,
        run: raw_d2h_pinned,
    });
    cases.push(Case {
        name: "d2h_pinned_GBps",
        lib: RUCUDA,
        run: rucuda_d2h_pinned,
    });
}

fn raw_d2d_copy(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let bytes = config.copy_bytes;
    let (src, dst) = (
        DeviceMemory::new(gpu, bytes)?,
        DeviceMemory::new(gpu, bytes)?,
    );
    let stream = Stream::new(gpu)?;
    let copy = gpu.driver.cuMemcpyDtoDAsync_v2()?;
    let samples = device_seconds(gpu, &stream, config.device_copy_sampling(), || {
        // SAFETY: both allocations hold `bytes` bytes and outlive the synchronized samples.
        check("cuMemcpyDtoDAsync", unsafe {
            copy(dst.ptr, src.ptr, bytes, stream.raw)
        })
    })?;
    Ok(Measurement::gbps(&samples, 2 * bytes, bytes as u64))
}

fn raw_h2d_pageable(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let bytes = config.copy_bytes;
    let host = vec![1u8; bytes];
    let device = DeviceMemory::new(gpu, bytes)?;
    let copy = gpu.driver.cuMemcpyHtoD_v2()?;
    let samples = host_seconds(config.transfer_sampling(), || {
        // SAFETY: `host` holds `bytes` readable bytes, `device` as many; both outlive the call.
        check("cuMemcpyHtoD", unsafe {
            copy(device.ptr, host.as_ptr().cast(), bytes)
        })?;
        gpu.synchronize()
    })?;
    Ok(Measurement::gbps(&samples, bytes, bytes as u64))
}

fn raw_d2h_pageable(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let bytes = config.copy_bytes;
    let mut host = vec![1u8; bytes];
    let device = DeviceMemory::new(gpu, bytes)?;
    let copy = gpu.driver.cuMemcpyDtoH_v2()?;
    let samples = host_seconds(config.transfer_sampling(), || {
        // SAFETY: `host` holds `bytes` writable bytes, `device` as many; both outlive the call.
        check("cuMemcpyDtoH", unsafe {
            copy(host.as_mut_ptr().cast(), device.ptr, bytes)
        })?;
        gpu.synchronize()
    })?;
    Ok(Measurement::gbps(&samples, bytes, bytes as u64))
}

fn raw_h2d_pinned(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let bytes = config.copy_bytes;
    let host = PinnedHost::new(gpu, bytes, 1)?;
    let device = DeviceMemory::new(gpu, bytes)?;
    let stream = Stream::new(gpu)?;
    let copy = gpu.driver.cuMemcpyHtoDAsync_v2()?;
    let samples = device_seconds(gpu, &stream, config.transfer_sampling(), || {
        // SAFETY: both buffers hold `bytes` bytes and outlive the synchronized samples.
        check("cuMemcpyHtoDAsync", unsafe {
            copy(device.ptr, host.ptr(), bytes, stream.raw)
        })
    })?;
    Ok(Measurement::gbps(&samples, bytes, bytes as u64))
}

fn raw_d2h_pinned(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let bytes = config.copy_bytes;
    let host = PinnedHost::new(gpu, bytes, 1)?;
    let device = DeviceMemory::new(gpu, bytes)?;
    let stream = Stream::new(gpu)?;
    let copy = gpu.driver.cuMemcpyDtoHAsync_v2()?;
    let samples = device_seconds(gpu, &stream, config.transfer_sampling(), || {
        // SAFETY: both buffers hold `bytes` bytes and outlive the synchronized samples.
        check("cuMemcpyDtoHAsync", unsafe {
            copy(host.ptr(), device.ptr, bytes, stream.raw)
        })
    })?;
    Ok(Measurement::gbps(&samples, bytes, bytes as u64))
}

fn rucuda_d2d_copy(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let bytes = config.copy_bytes;
    let ctx = rucuda_context()?;
    let src = DeviceBuffer::<u8>::uninit(&ctx, bytes)?;
    let mut dst = DeviceBuffer::<u8>::uninit(&ctx, bytes)?;
    let stream = RucudaStream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let samples = rucuda_device_seconds(&stream, config.device_copy_sampling(), || {
        memcpy_dtod_async(&mut dst, &src, &stream)
    })?;
    Ok(Measurement::gbps(&samples, 2 * bytes, bytes as u64))
}

fn rucuda_h2d_pageable(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let bytes = config.copy_bytes;
    let ctx = rucuda_context()?;
    let host = vec![1u8; bytes];
    let mut device = DeviceBuffer::<u8>::uninit(&ctx, bytes)?;
    let samples = host_seconds(config.transfer_sampling(), || {
        device.copy_from_host(&host)?;
        Ok(ctx.synchronize()?)
    })?;
    Ok(Measurement::gbps(&samples, bytes, bytes as u64))
}

fn rucuda_d2h_pageable(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let bytes = config.copy_bytes;
    let ctx = rucuda_context()?;
    let mut host = vec![1u8; bytes];
    let device = DeviceBuffer::<u8>::zeros(&ctx, bytes)?;
    let samples = host_seconds(config.transfer_sampling(), || {
        device.copy_to_host(&mut host)?;
        Ok(ctx.synchronize()?)
    })?;
    Ok(Measurement::gbps(&samples, bytes, bytes as u64))
}

fn rucuda_h2d_pinned(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let bytes = config.copy_bytes;
    let ctx = rucuda_context()?;
    let host = PinnedHostBuffer::<u8>::zeros(&ctx, bytes, HostAllocFlags::empty())?;
    let mut device = DeviceBuffer::<u8>::uninit(&ctx, bytes)?;
    let stream = RucudaStream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let samples = rucuda_device_seconds(&stream, config.transfer_sampling(), || {
        memcpy_htod_async(&mut device, &host, &stream)
    })?;
    Ok(Measurement::gbps(&samples, bytes, bytes as u64))
}

fn rucuda_d2h_pinned(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let bytes = config.copy_bytes;
    let ctx = rucuda_context()?;
    let mut host = PinnedHostBuffer::<u8>::zeros(&ctx, bytes, HostAllocFlags::empty())?;
    let device = DeviceBuffer::<u8>::zeros(&ctx, bytes)?;
    let stream = RucudaStream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let samples = rucuda_device_seconds(&stream, config.transfer_sampling(), || {
        memcpy_dtoh_async(&mut host, &device, &stream)
    })?;
    Ok(Measurement::gbps(&samples, bytes, bytes as u64))
}
