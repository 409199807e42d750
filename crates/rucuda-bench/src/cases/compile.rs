//! Run-time compilation: the first compile and load of a small kernel (a source never seen
//! before, so no cache can answer), the same source again from the disk cache (the
//! in-process memo cleared), and again from the in-process memo. Host time, medians.
//!
//! The raw floor is NVRTC straight to a cubin for the device's architecture through the
//! loaded NVRTC table (`nvrtcCreateProgram`, `nvrtcCompileProgram`, `nvrtcGetCUBIN`), then
//! `cuModuleLoadData` and `cuModuleGetFunction`: what any wrapper must at least do.

use std::ffi::{c_char, CString};
use std::sync::atomic::{AtomicU64, Ordering};

use rucuda_driver::DeviceAttribute;
use rucuda_jit::{CompileOptions, SourceModule};

use super::{rucuda_context, Case, RAW, RUCUDA};
use crate::config::Config;
use crate::cuda::{check, Error, Gpu, Result};
use crate::harness::{host_seconds, Measurement, Sampling};

/// Registers the compile cases.
pub fn register(cases: &mut Vec<Case>) {
    cases.push(Case {
        name: "compile_first_ms",
        lib: RAW,
        run: raw_compile_first,
    });
    cases.push(Case {
        name: "compile_first_ms",
        lib: RUCUDA,
        run: rucuda_compile_first,
    });
    cases.push(Case {
        name: "compile_disk_hit_ms",
        lib: RUCUDA,
        run: rucuda_compile_disk_hit,
    });
    cases.push(Case {
        name: "compile_memo_hit_us",
        lib: RUCUDA,
        run: rucuda_compile_memo_hit,
    });
}

static SALT: AtomicU64 = AtomicU64::new(0);

/// A small kernel, different text every call (a counter and the process id in its name).
fn fresh_source() -> (String, String) {
    let tag = SALT.fetch_add(1, Ordering::Relaxed);
    let name = format!("saxpy_{}_{tag}", std::process::id());
    let src = format!(
        "extern \"C\" __global__ void {name}(float a, const float *x, float *y, int n) {{\n  \
         int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * x[i] + y[i];\n}}\n"
    );
    (name, src)
}

fn compile_sampling(config: &Config) -> Sampling {
    if config.quick {
        Sampling { warmup: 1, reps: 3 }
    } else {
        Sampling {
            warmup: 2,
            reps: 11,
        }
    }
}

/// A fresh temporary folder for this case's kernel cache (its `cache` subfolder does not
/// exist yet), removed when the guard drops.
fn cache_dir(what: &str) -> Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(&format!("rucuda-bench-{what}-"))
        .tempdir()
        .map_err(|e| Error(format!("a temporary cache folder: {e}")))
}

fn raw_compile_first(gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let nvrtc = rucuda_jit::nvrtc::Nvrtc::get().map_err(|e| Error(e.to_string()))?;
    let f = nvrtc.functions();
    let missing = |n: &str| Error(format!("NVRTC lacks {n}"));
    let create = f
        .nvrtcCreateProgram
        .ok_or_else(|| missing("nvrtcCreateProgram"))?;
    let compile = f
        .nvrtcCompileProgram
        .ok_or_else(|| missing("nvrtcCompileProgram"))?;
    let size = f
        .nvrtcGetCUBINSize
        .ok_or_else(|| missing("nvrtcGetCUBINSize"))?;
    let get = f.nvrtcGetCUBIN.ok_or_else(|| missing("nvrtcGetCUBIN"))?;
    let destroy = f
        .nvrtcDestroyProgram
        .ok_or_else(|| missing("nvrtcDestroyProgram"))?;
    let (load, get_fn, unload) = (
        gpu.driver.cuModuleLoadData()?,
        gpu.driver.cuModuleGetFunction()?,
        gpu.driver.cuModuleUnload()?,
    );
    let major = gpu.attribute(DeviceAttribute::ComputeCapabilityMajor.raw())?;
    let minor = gpu.attribute(DeviceAttribute::ComputeCapabilityMinor.raw())?;
    let arch = CString::new(format!("--gpu-architecture=sm_{major}{minor}"))
        .map_err(|e| Error(e.to_string()))?;
    let samples = host_seconds(compile_sampling(config), || {
        let (name, src) = fresh_source();
        let (name, src) = (
            CString::new(name).map_err(|e| Error(e.to_string()))?,
            CString::new(src).map_err(|e| Error(e.to_string()))?,
        );
        let nv = |call: &str, code: rucuda_jit::nvrtc::bindings::nvrtcResult| {
            if code.0 == 0 {
                Ok(())
            } else {
                Err(Error(format!("{call} failed ({})", code.0)))
            }
        };
        let mut prog = std::ptr::null_mut();
        let opts: [*const c_char; 1] = [arch.as_ptr()];
        let mut cubin_len = 0usize;
        // SAFETY: NVRTC's documented sequence on NUL-terminated strings and an options
        // array of one pointer; the program is destroyed below.
        unsafe {
            nv(
                "nvrtcCreateProgram",
                create(
                    &mut prog,
                    src.as_ptr(),
                    c"k.cu".as_ptr(),
                    0,
                    std::ptr::null(),
                    std::ptr::null(),
                ),
            )?;
            nv("nvrtcCompileProgram", compile(prog, 1, opts.as_ptr()))?;
            nv("nvrtcGetCUBINSize", size(prog, &mut cubin_len))?;
        }
        let mut cubin = vec![0u8; cubin_len];
        // SAFETY: the buffer holds the size NVRTC reported; then the program is freed.
        unsafe {
            nv("nvrtcGetCUBIN", get(prog, cubin.as_mut_ptr().cast()))?;
            nv("nvrtcDestroyProgram", destroy(&mut prog))?;
        }
        let mut module = std::ptr::null_mut();
        let mut func = std::ptr::null_mut();
        // SAFETY: a cubin for this device; the module is unloaded once the kernel was found.
        unsafe {
            check("cuModuleLoadData", load(&mut module, cubin.as_ptr().cast()))?;
            check(
                "cuModuleGetFunction",
                get_fn(&mut func, module, name.as_ptr()),
            )?;
            check("cuModuleUnload", unload(module))
        }
    })?;
    Ok(Measurement::millis(&samples, 1))
}

fn rucuda_compile_first(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let dir = cache_dir("compile-first")?;
    let opts = CompileOptions::new().cache_dir(Some(dir.path().join("cache")));
    let samples = host_seconds(compile_sampling(config), || {
        let (name, src) = fresh_source();
        let module =
            SourceModule::for_context(&ctx, &src, &opts).map_err(|e| Error(e.to_string()))?;
        module
            .function(&name)
            .map(drop)
            .map_err(|e| Error(e.to_string()))
    })?;
    Ok(Measurement::millis(&samples, 1))
}

fn rucuda_compile_disk_hit(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let dir = cache_dir("disk-hit")?;
    let opts = CompileOptions::new().cache_dir(Some(dir.path().join("cache")));
    let (name, src) = fresh_source();
    let reps = if config.quick { 20 } else { 200 };
    let samples = host_seconds(Sampling { warmup: 3, reps }, || {
        rucuda_jit::cache::memo::clear();
        let module =
            SourceModule::for_context(&ctx, &src, &opts).map_err(|e| Error(e.to_string()))?;
        module
            .function(&name)
            .map(drop)
            .map_err(|e| Error(e.to_string()))
    })?;
    Ok(Measurement::millis(&samples, 1))
}

fn rucuda_compile_memo_hit(_gpu: &Gpu, config: &Config) -> Result<Measurement> {
    let ctx = rucuda_context()?;
    let dir = cache_dir("memo-hit")?;
    let opts = CompileOptions::new().cache_dir(Some(dir.path().join("cache")));
    let (_, src) = fresh_source();
    SourceModule::for_context(&ctx, &src, &opts).map_err(|e| Error(e.to_string()))?;
    let per_batch = if config.quick { 1_000 } else { 10_000 };
    let samples = host_seconds(config.overhead_sampling(), || {
        for _ in 0..per_batch {
            let m =
                SourceModule::for_context(&ctx, &src, &opts).map_err(|e| Error(e.to_string()))?;
            std::hint::black_box(m);
        }
        Ok(())
    })?;
    Ok(Measurement::micros_per(
        &samples,
        per_batch,
        per_batch as u64,
    ))
}
