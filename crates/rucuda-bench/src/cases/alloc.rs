//! Allocation overhead: host microseconds to allocate and free 1 MiB, averaged over a batch
//! of pairs, median over batches; synchronous (`cuMemAlloc`/`cuMemFree`) and stream-ordered
//! (`cuMemAllocAsync`/`cuMemFreeAsync` on one stream, synchronized at the end of a batch).

use rucuda_driver_sys::CUdevice_attribute;

use rucuda_driver::{DeviceBuffer, Stream as RucudaStream, StreamFlags};

use super::{rucuda_context, Case, RAW, RUCUDA};
use crate::config::Config;
use crate::cuda::{check, Error, Gpu, Result, Stream};
use crate::harness::{host_seconds, Measurement};

/// The size allocated by these cases.
const BYTES: usize = 1 << 20;

/// Registers the allocation cases.
pub fn register(cases: &mut Vec<Case>) {
    cases.push(Case {
        name: "alloc_free_us",
        lib: RAW,
        run: raw_alloc_free,
    });
    cases.push(Case {
        name: "alloc_free_us",
        lib: RUCUDA,
        run: rucuda_alloc_free,
    });
    cases.push(Case {
        name: "alloc_free_async_us",
        lib: RAW,
        run: raw_alloc_free_async,
    });
    cases.push(Case {
        name: "alloc_free_async_us",
        lib: RUCUDA,
        run: rucuda_alloc_free_async,
    });
}

fn rucuda_alloc_free(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let per_batch = config.allocs_per_batch();
    let samples = host_seconds(config.overhead_sampling(), || {
        for _ in 0..per_batch {
            drop(DeviceBuffer::<u8>::uninit(&ctx, BYTES)?);
        }
        Ok(())
    })?;
    Ok(Measurement::micros_per(&samples, per_batch, BYTES as u64))
}

fn rucuda_alloc_free_async(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let stream = RucudaStream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let per_batch = config.allocs_per_batch();
    let samples = host_seconds(config.overhead_sampling(), || {
        for _ in 0..per_batch {
            drop(DeviceBuffer::<u8>::uninit_async(&stream, BYTES)?);
        }
        Ok(stream.synchronize()?)
    })?;
    Ok(Measurement::micros_per(&samples, per_batch, BYTES as u64))
}

fn raw_alloc_free(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let (alloc, free) = (gpu.driver.cuMemAlloc_v2()?, gpu.driver.cuMemFree_v2()?);
    let per_batch = config.allocs_per_batch();
    let samples = host_seconds(config.overhead_sampling(), || {
        for _ in 0..per_batch {
            let mut ptr = 0;
            // SAFETY: writes one device address; the primary context is current.
            check("cuMemAlloc", unsafe { alloc(&mut ptr, BYTES) })?;
            // SAFETY: frees the allocation just made, once.
            check("cuMemFree", unsafe { free(ptr) })?;
        }
        Ok(())
    })?;
    Ok(Measurement::micros_per(&samples, per_batch, BYTES as u64))
}

fn raw_alloc_free_async(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    if gpu.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)? == 0 {
        return Err(Error(
            "this device does not support stream-ordered allocation (memory pools)".into(),
        ));
    }
    let (alloc, free) = (gpu.driver.cuMemAllocAsync()?, gpu.driver.cuMemFreeAsync()?);
    let stream = Stream::new(gpu)?;
    let per_batch = config.allocs_per_batch();
    let samples = host_seconds(config.overhead_sampling(), || {
        for _ in 0..per_batch {
            let mut ptr = 0;
            // SAFETY: writes one device address, allocated in stream order on a live stream.
            check("cuMemAllocAsync", unsafe {
                alloc(&mut ptr, BYTES, stream.raw)
            })?;
            // SAFETY: frees that allocation once, on the same stream.
            check("cuMemFreeAsync", unsafe { free(ptr, stream.raw) })?;
        }
        stream.synchronize()
    })?;
    Ok(Measurement::micros_per(&samples, per_batch, BYTES as u64))
}
