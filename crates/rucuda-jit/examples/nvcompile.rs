//! Compiles a CUDA C++ file to a cubin (or PTX) with no GPU, through the disk cache.
//!
//! ```text
//! cargo run -p rucuda-jit --example nvcompile -- FILE.cu --arch sm_90 [--ptx] [--nvcc]
//!     [--no-extern-c] [-I DIR] [-D NAME[=VALUE]] [--out FILE] [--no-cache] [-- OPTIONS...]
//! ```
//!
//! Prints the output's size, the cache entry's path, and `cache hit` when the cache
//! already had it.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use rucuda_jit::{compile, Arch, Backend, CacheStatus, CompileOptions, OutputKind};

const USAGE: &str = "usage: nvcompile FILE.cu --arch sm_XY [--ptx] [--nvcc] [--no-extern-c] \
                     [-I DIR] [-D NAME[=VALUE]] [--out FILE] [--no-cache] [-- OPTIONS...]";

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut file: Option<PathBuf> = None;
    let mut out: Option<PathBuf> = None;
    let mut opts = CompileOptions::new();
    let mut arch: Option<Arch> = None;
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value\n{USAGE}"));
        match a.as_str() {
            "--arch" | "-arch" => {
                arch = Some(value("--arch")?.parse().map_err(|e| format!("{e}"))?)
            }
            "--ptx" => opts.output = OutputKind::Ptx,
            "--nvcc" => opts.backend = Backend::Nvcc,
            "--no-extern-c" => opts.no_extern_c = true,
            "--no-cache" => opts.cache_dir = None,
            "-I" => opts.include_dirs.push(value("-I")?.into()),
            "-D" => {
                let d = value("-D")?;
                opts.defines.push(match d.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (d, None),
                });
            }
            "--out" | "-o" => out = Some(value("--out")?.into()),
            "--" => opts.options.extend(args.by_ref()),
            "-h" | "--help" => return Err(USAGE.into()),
            other if file.is_none() && !other.starts_with('-') => file = Some(other.into()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    let file = file.ok_or(USAGE)?;
    opts.arch = Some(arch.ok_or(format!("--arch is needed (no GPU is used)\n{USAGE}"))?);
    opts.program_name = file
        .file_name()
        .map_or("kernel.cu".into(), |n| n.to_string_lossy().into_owned());
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        opts.include_dirs.insert(0, dir.to_path_buf());
    }
    let source = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let started = Instant::now();
    let compiled = compile(&source, &opts).map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();
    println!(
        "{}: {} of {} bytes for {} in {:.2} ms",
        file.display(),
        compiled.output.extension(),
        compiled.image.len(),
        compiled.arch,
        elapsed.as_secs_f64() * 1e3
    );
    match &compiled.cache {
        CacheStatus::Hit(p) => println!("cache hit: {}", p.display()),
        CacheStatus::Stored(p) => println!("cache entry: {} (compiled and stored)", p.display()),
        CacheStatus::NotStored => println!("cache: the folder cannot be written; not stored"),
        CacheStatus::Off => println!("cache: off"),
    }
    if !compiled.log.is_empty() {
        println!("compiler log:\n{}", compiled.log);
    }
    if let Some(out) = out {
        std::fs::write(&out, &compiled.image).map_err(|e| format!("{}: {e}", out.display()))?;
        println!("wrote {}", out.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
