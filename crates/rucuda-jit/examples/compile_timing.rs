//! Times a small kernel's compile on the CPU: a cold NVRTC compile to a cubin (a fresh
//! source each run, so no cache), and a disk-cache hit, each the median of several runs
//! after a warm-up. Needs no GPU.
//!
//! ```text
//! cargo run --release -p rucuda-jit --example compile_timing -- [--arch sm_90] [--runs 20]
//! ```

use std::time::Instant;

use rucuda_jit::{compile, Arch, CompileOptions};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn source(tag: u64) -> String {
    format!(
        "__global__ void saxpy_{tag}(float a, const float *x, float *y, int n) {{\n  \
         int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * x[i] + y[i];\n}}\n"
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut arch = Arch::SM_90;
    let mut runs = 20usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--arch" => arch = args.next().ok_or("--arch needs a value")?.parse()?,
            "--runs" => runs = args.next().ok_or("--runs needs a value")?.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let tmp = tempfile::Builder::new()
        .prefix("rucuda-jit-timing-")
        .tempdir()?;
    let dir = tmp.path().join("cache");
    let opts = CompileOptions::new().arch(arch).cache_dir(Some(dir));
    let salt = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_nanos() as u64;

    // Warm-up: loads NVRTC once.
    compile(&source(salt), &opts)?;
    let mut cold = Vec::new();
    for i in 0..runs {
        let src = source(salt + 1 + i as u64);
        let t = Instant::now();
        let c = compile(&src, &opts)?;
        cold.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(!c.cache.is_hit());
    }
    let src = source(salt);
    let mut hit = Vec::new();
    for _ in 0..runs.max(100) {
        let t = Instant::now();
        let c = compile(&src, &opts)?;
        hit.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(c.cache.is_hit());
    }
    let nvrtc = rucuda_jit::nvrtc::Nvrtc::get()?;
    println!(
        "NVRTC {:?} ({}), target {arch}",
        nvrtc.version(),
        nvrtc.opened_as()
    );
    println!(
        "compile_first_ms (cold NVRTC compile + cache store): {:.2}",
        median(cold)
    );
    println!(
        "compile_disk_hit_ms (key + read + verify): {:.4}",
        median(hit)
    );
    Ok(())
}
