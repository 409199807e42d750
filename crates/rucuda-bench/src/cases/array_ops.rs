//! Array operations through rucuda-array:
//!
//! - `axpy_fused_GBps`: `2*x + y` on 2^28 `f32` (2^24 in quick mode) written as one
//!   expression through the fusion API, the result allocated by each evaluation (as an
//!   array expression allocates its result), device time by events, 12 bytes per element
//!   (read x, read y, write the result).
//! - `put_f32_GBps`: `dst.put(&idx, &values, IndexMode::Clip)` on 2^28 `f32` (2^24 in
//!   quick mode) with `i32` indices that are unique (the reversed order, so the scattered
//!   writes stay coalesced and the case measures the scatter kernel, whose stores are
//!   relaxed gpu-scope stores, `st.relaxed.gpu.b32`; they should run at plain-store
//!   speed, i.e. near `d2d_copy_GBps`), device time by events, 12 bytes per element
//!   (read the index, read the value, write the destination).
//! - `small_add_us`: `&a + &b` on 1000 `f32` with the result allocated (stream-ordered)
//!   and dropped, host microseconds per operation over a batch followed by one stream
//!   synchronize, median over batches. Its `raw` floor is the same work through
//!   rucuda-driver-sys alone: `cuMemAllocAsync`, a hand-written PTX add kernel launched with
//!   `cuLaunchKernel`, `cuMemFreeAsync`.

use std::ffi::c_void;
use std::ptr;

use rucuda_driver_sys::CUdeviceptr;

use rucuda_array::ops::IndexMode;
use rucuda_array::{fuse, GpuArray};
use rucuda_driver::{Stream as RucudaStream, StreamFlags};

use super::reduce::array_device_seconds;
use super::{rucuda_context, Case, RAW, RUCUDA};
use crate::config::Config;
use crate::cuda::{check, DeviceMemory, Error, Gpu, Module, Result, Stream};
use crate::harness::{host_seconds, Measurement};

/// Elements of the small operation.
const SMALL: usize = 1000;

/// Registers the array cases.
pub fn register(cases: &mut Vec<Case>) {
    cases.push(Case {
        name: "axpy_fused_GBps",
        lib: RUCUDA,
        run: rucuda_axpy_fused,
    });
    cases.push(Case {
        name: "put_f32_GBps",
        lib: RUCUDA,
        run: rucuda_put_f32,
    });
    cases.push(Case {
        name: "small_add_us",
        lib: RAW,
        run: raw_small_add,
    });
    cases.push(Case {
        name: "small_add_us",
        lib: RUCUDA,
        run: rucuda_small_add,
    });
}

fn rucuda_axpy_fused(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let stream = RucudaStream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let n = super::reduce::array_elements(config);
    let x = GpuArray::<f32>::full(&stream, &[n], 1.5)?;
    let y = GpuArray::<f32>::full(&stream, &[n], -0.25)?;
    // Compile outside the timed runs, and check the result once.
    let z: GpuArray<f32> = fuse!(x, y => 2.0 * x + y).eval()?;
    let last = z.slice(&[rucuda_array::SliceArg::index(-1)])?.to_vec()?;
    if last != [2.75] {
        return Err(Error(format!(
            "fused 2*x + y gave {last:?}, expected [2.75]"
        )));
    }
    drop(z);
    let samples = array_device_seconds(&stream, config.device_copy_sampling(), || {
        drop(fuse!(x, y => 2.0 * x + y).eval::<f32>()?);
        Ok(())
    })?;
    Ok(Measurement::gbps(&samples, 12 * n, n as u64))
}

fn rucuda_put_f32(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let stream = RucudaStream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let n = super::reduce::array_elements(config);
    let last = i32::try_from(n - 1).map_err(|_| Error(format!("{n} elements for i32 indices")))?;
    let reversed: Vec<i32> = (0..=last).rev().collect();
    let idx = GpuArray::from_slice(&stream, &reversed)?;
    drop(reversed);
    let host: Vec<f32> = (0..n).map(|j| (j % 4096) as f32).collect();
    let values = GpuArray::from_slice(&stream, &host)?;
    drop(host);
    let dst = GpuArray::<f32>::zeros(&stream, &[n])?;
    // Compile outside the timed runs, and check the result once: dst[n - 1 - j] = j % 4096.
    dst.put(&idx, &values, IndexMode::Clip)?;
    let ends = [
        dst.slice(&[rucuda_array::SliceArg::index(0)])?.to_vec()?,
        dst.slice(&[rucuda_array::SliceArg::index(-1)])?.to_vec()?,
    ];
    let want = [((n - 1) % 4096) as f32, 0.0];
    if ends != [[want[0]], [want[1]]] {
        return Err(Error(format!("put gave ends {ends:?}, expected {want:?}")));
    }
    let samples = array_device_seconds(&stream, config.device_copy_sampling(), || {
        dst.put(&idx, &values, IndexMode::Clip)
    })?;
    Ok(Measurement::gbps(&samples, 12 * n, n as u64))
}

fn rucuda_small_add(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let stream = RucudaStream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let a = GpuArray::<f32>::full(&stream, &[SMALL], 1.0)?;
    let b = GpuArray::<f32>::full(&stream, &[SMALL], 2.0)?;
    let c = (&a + &b)?; // compile and load once
    if c.to_vec()?.iter().any(|&v| v != 3.0) {
        return Err(Error("a + b gave a wrong result".into()));
    }
    let per_batch = config.launches_per_batch();
    let samples = host_seconds(config.overhead_sampling(), || {
        for _ in 0..per_batch {
            let c = (&a + &b)?;
            drop(c);
        }
        Ok(stream.synchronize()?)
    })?;
    Ok(Measurement::micros_per(&samples, per_batch, SMALL as u64))
}

/// `c[i] = a[i] + b[i]` for `i < n`, one element per thread, written by hand. PTX ISA 8.0
/// for `sm_75`; the driver compiles it for the device at load time.
const ADD_PTX: &str = r#"
.version 8.0
.target sm_75
.address_size 64

.visible .entry rucuda_bench_add_f32(
    .param .u64 rucuda_bench_add_a,
    .param .u64 rucuda_bench_add_b,
    .param .u64 rucuda_bench_add_c,
    .param .u64 rucuda_bench_add_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<12>;

    ld.param.u64 %rd1, [rucuda_bench_add_a];
    ld.param.u64 %rd2, [rucuda_bench_add_b];
    ld.param.u64 %rd3, [rucuda_bench_add_c];
    ld.param.u64 %rd4, [rucuda_bench_add_n];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd5, %r1, %r2;
    cvt.u64.u32 %rd6, %r3;
    add.s64 %rd5, %rd5, %rd6;
    setp.ge.u64 %p1, %rd5, %rd4;
    @%p1 bra DONE;
    shl.b64 %rd7, %rd5, 2;
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    cvta.to.global.u64 %rd3, %rd3;
    add.s64 %rd8, %rd1, %rd7;
    add.s64 %rd9, %rd2, %rd7;
    add.s64 %rd10, %rd3, %rd7;
    ld.global.f32 %f1, [%rd8];
    ld.global.f32 %f2, [%rd9];
    add.rn.f32 %f3, %f1, %f2;
    st.global.f32 [%rd10], %f3;
DONE:
    ret;
}
"#;

fn raw_small_add(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let module = Module::load_ptx(gpu, ADD_PTX)?;
    let function = module.function("rucuda_bench_add_f32")?;
    let (alloc, free, launch) = (
        gpu.driver.cuMemAllocAsync()?,
        gpu.driver.cuMemFreeAsync()?,
        gpu.driver.cuLaunchKernel()?,
    );
    let inputs = DeviceMemory::new(gpu, 2 * SMALL * 4)?;
    let stream = Stream::new(gpu)?;
    let (mut a, mut b): (CUdeviceptr, CUdeviceptr) = (inputs.ptr, inputs.ptr + (SMALL * 4) as u64);
    let mut n = SMALL as u64;
    let per_batch = config.launches_per_batch();
    let blocks = SMALL.div_ceil(256) as u32;
    let samples = host_seconds(config.overhead_sampling(), || {
        for _ in 0..per_batch {
            let mut c: CUdeviceptr = 0;
            // SAFETY: writes one device address, allocated in stream order on a live stream.
            check("cuMemAllocAsync", unsafe {
                alloc(&mut c, SMALL * 4, stream.raw)
            })?;
            let mut params = [
                (&raw mut a).cast::<c_void>(),
                (&raw mut b).cast::<c_void>(),
                (&raw mut c).cast::<c_void>(),
                (&raw mut n).cast::<c_void>(),
            ];
            // SAFETY: the kernel takes three pointers and a u64 count and touches elements
            // 0..n of each; a and b hold n floats each inside `inputs`, c was just
            // allocated with n floats on this stream; each parameter pointer addresses a
            // live value of the parameter's size.
            check("cuLaunchKernel", unsafe {
                launch(
                    function,
                    blocks,
                    1,
                    1,
                    256,
                    1,
                    1,
                    0,
                    stream.raw,
                    params.as_mut_ptr(),
                    ptr::null_mut(),
                )
            })?;
            // SAFETY: frees that allocation once, on the stream that used it.
            check("cuMemFreeAsync", unsafe { free(c, stream.raw) })?;
        }
        stream.synchronize()
    })?;
    Ok(Measurement::micros_per(&samples, per_batch, SMALL as u64))
}
