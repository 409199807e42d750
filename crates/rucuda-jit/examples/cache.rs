//! Shows the kernel cache's folder, entry count and size, or clears it.
//!
//! ```text
//! cargo run -p rucuda-jit --example cache -- [--clear] [--evict] [--dir DIR]
//! ```
//!
//! The folder is `RUCUDA_CACHE_DIR`, else `~/.cache/rucuda`; its cap is
//! `RUCUDA_CACHE_MAX_SIZE` (default 1 GiB).

use std::process::ExitCode;

use rucuda_jit::cache::DiskCache;

fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

fn run() -> Result<(), String> {
    let mut clear = false;
    let mut evict = false;
    let mut dir = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--clear" => clear = true,
            "--evict" => evict = true,
            "--dir" => dir = Some(args.next().ok_or("--dir needs a folder")?),
            other => {
                return Err(format!(
                    "unknown argument {other:?}; usage: cache [--clear] [--evict] [--dir DIR]"
                ))
            }
        }
    }
    let cache = match dir {
        Some(d) => DiskCache::new(d, rucuda_jit::cache::default_max_bytes()),
        None => DiskCache::default_location().ok_or(
            "the cache is off (RUCUDA_DISABLE_CACHE is set, or there is no user cache folder)",
        )?,
    };
    let stats = cache
        .stats()
        .map_err(|e| format!("{}: {e}", cache.dir().display()))?;
    println!("cache folder: {}", cache.dir().display());
    println!(
        "entries: {}, size: {} ({} bytes), cap: {}",
        stats.entries,
        human(stats.bytes),
        stats.bytes,
        human(cache.max_bytes())
    );
    if evict {
        let removed = cache.evict_to_cap().map_err(|e| e.to_string())?;
        println!(
            "evicted {} entries ({})",
            removed.entries,
            human(removed.bytes)
        );
    }
    if clear {
        let removed = cache.clear().map_err(|e| e.to_string())?;
        println!(
            "cleared {} entries ({})",
            removed.entries,
            human(removed.bytes)
        );
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
