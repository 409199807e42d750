//! Launch overhead: host microseconds per launch of a kernel that does nothing, averaged
//! over a batch of launches followed by one synchronize (so queued work never leaks into the
//! next batch), median over batches. Grid and block are 1x1x1, the stream is the null stream.

use std::ffi::c_void;
use std::ptr;

use rucuda_driver_sys::{CUdeviceptr, CUfunction};

use rucuda_driver::{DeviceBuffer, LaunchConfig, Stream};

use super::{rucuda_context, Case, RAW, RUCUDA};
use crate::config::Config;
use crate::cuda::{check, DeviceMemory, Gpu, Module, Result};
use crate::harness::{host_seconds, Measurement};

/// Registers the launch cases.
pub fn register(cases: &mut Vec<Case>) {
    cases.push(Case {
        name: "launch_empty_us",
        lib: RAW,
        run: raw_launch_empty,
    });
    cases.push(Case {
        name: "launch_empty_us",
        lib: RUCUDA,
        run: rucuda_launch_empty,
    });
    cases.push(Case {
        name: "launch_args4_us",
        lib: RAW,
        run: raw_launch_args4,
    });
    cases.push(Case {
        name: "launch_args4_us",
        lib: RUCUDA,
        run: rucuda_launch_args4,
    });
    // A prepared launch's floor is the same raw 4-argument launch.
    cases.push(Case {
        name: "launch_prepared_us",
        lib: RAW,
        run: raw_launch_args4,
    });
    cases.push(Case {
        name: "launch_prepared_us",
        lib: RUCUDA,
        run: rucuda_launch_prepared,
    });
}

/// Two empty kernels, written by hand. PTX ISA 8.0 (CUDA 12.0 and later drivers) for
/// `sm_75`, the oldest architecture CUDA 13 supports: the driver compiles it for the device
/// at load time, sm_90 (H100, H200) and newer included.
pub const PTX: &str = r#"
.version 8.0
.target sm_75
.address_size 64

.visible .entry rucuda_bench_empty()
{
    ret;
}

.visible .entry rucuda_bench_args4(
    .param .u64 rucuda_bench_args4_x,
    .param .u64 rucuda_bench_args4_y,
    .param .f32 rucuda_bench_args4_a,
    .param .u32 rucuda_bench_args4_n
)
{
    ret;
}
"#;

/// Launches `function` in batches and reports host microseconds per launch.
///
/// `params` holds one pointer per kernel parameter (empty for none).
fn launch_batches(
    gpu: &Gpu,
    config: &Config,
    function: CUfunction,
    params: &mut [*mut c_void],
) -> Result<Measurement> {
    let launch = gpu.driver.cuLaunchKernel()?;
    let per_batch = config.launches_per_batch();
    let params = if params.is_empty() {
        ptr::null_mut()
    } else {
        params.as_mut_ptr()
    };
    let samples = host_seconds(config.overhead_sampling(), || {
        for _ in 0..per_batch {
            // SAFETY: `function` belongs to a module the caller keeps loaded; `params` is null
            // for the parameterless kernel or points at one pointer per parameter, each to a
            // live value of that parameter's size; the null stream of the current context.
            let code = unsafe {
                launch(
                    function,
                    1,
                    1,
                    1,
                    1,
                    1,
                    1,
                    0,
                    ptr::null_mut(),
                    params,
                    ptr::null_mut(),
                )
            };
            check("cuLaunchKernel", code)?;
        }
        gpu.synchronize()
    })?;
    Ok(Measurement::micros_per(
        &samples,
        per_batch,
        per_batch as u64,
    ))
}

fn raw_launch_empty(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let module = Module::load_ptx(gpu, PTX)?;
    let function = module.function("rucuda_bench_empty")?;
    launch_batches(gpu, config, function, &mut [])
}

fn raw_launch_args4(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let module = Module::load_ptx(gpu, PTX)?;
    let function = module.function("rucuda_bench_args4")?;
    let buffer = DeviceMemory::new(gpu, 1 << 12)?;
    let (mut x, mut y): (CUdeviceptr, CUdeviceptr) = (buffer.ptr, buffer.ptr + 2048);
    let (mut a, mut n): (f32, u32) = (2.0, 512);
    let mut params = [
        (&raw mut x).cast::<c_void>(),
        (&raw mut y).cast::<c_void>(),
        (&raw mut a).cast::<c_void>(),
        (&raw mut n).cast::<c_void>(),
    ];
    launch_batches(gpu, config, function, &mut params)
}

/// Launches in batches through rucuda, `launch_one` making one launch.
fn rucuda_batches(
    ctx: &rucuda_driver::Context,
    config: &Config,
    mut launch_one: impl FnMut() -> rucuda_driver::Result<()>,
) -> Result<Measurement> {
    let per_batch = config.launches_per_batch();
    let samples = host_seconds(config.overhead_sampling(), || {
        for _ in 0..per_batch {
            launch_one()?;
        }
        Ok(ctx.synchronize()?)
    })?;
    Ok(Measurement::micros_per(
        &samples,
        per_batch,
        per_batch as u64,
    ))
}

fn rucuda_launch_empty(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let module = rucuda_driver::Module::load_data(&ctx, PTX.as_bytes())?;
    let f = module.function("rucuda_bench_empty")?;
    let stream = Stream::null(&ctx);
    let cfg = LaunchConfig::linear(1, 1);
    // SAFETY: the kernel takes no arguments and touches no memory.
    rucuda_batches(&ctx, config, || unsafe { f.launch(cfg, &stream, ()) })
}

fn rucuda_launch_args4(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let module = rucuda_driver::Module::load_data(&ctx, PTX.as_bytes())?;
    let f = module.function("rucuda_bench_args4")?;
    let (x, y) = (
        DeviceBuffer::<f32>::zeros(&ctx, 512)?,
        DeviceBuffer::<f32>::zeros(&ctx, 512)?,
    );
    let stream = Stream::null(&ctx);
    let cfg = LaunchConfig::linear(1, 1);
    // SAFETY: the kernel takes (ptr, ptr, f32, u32) and touches no memory.
    rucuda_batches(&ctx, config, || unsafe {
        f.launch(cfg, &stream, (&x, &y, 2.0f32, 512u32))
    })
}

fn rucuda_launch_prepared(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let module = rucuda_driver::Module::load_data(&ctx, PTX.as_bytes())?;
    let f = module.function("rucuda_bench_args4")?;
    let (x, y) = (
        DeviceBuffer::<f32>::zeros(&ctx, 512)?,
        DeviceBuffer::<f32>::zeros(&ctx, 512)?,
    );
    let stream = Stream::null(&ctx);
    let prepared = f.prepare(LaunchConfig::linear(1, 1), &[8, 8, 4, 4])?;
    // SAFETY: the kernel takes (ptr, ptr, f32, u32) and touches no memory.
    rucuda_batches(&ctx, config, || unsafe {
        prepared.launch(&stream, (&x, &y, 2.0f32, 512u32))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_declares_both_kernels_with_four_params() {
        assert!(PTX.contains(".entry rucuda_bench_empty()"));
        let args4 = PTX.split(".entry rucuda_bench_args4(").nth(1).unwrap();
        let params = args4.split(')').next().unwrap();
        assert_eq!(params.matches(".param").count(), 4);
        assert!(!PTX.contains('\0'));
    }
}
