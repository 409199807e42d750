//! `rucuda-bench`: the benchmark binary that `cargo xtask bench` puts in the GPU bundle and
//! `run.sh bench` runs.
//!
//! It runs every registered case ([`cases::registry`]) on one device, merges the JSON lines
//! of the peers run before it (`--peer-results`: CuPy, NVIDIA's CUDA C++), computes ratios
//! within the run, writes `bench.jsonl` and `bench.md` to the output folder and prints the
//! table. Exit status: 0 when every case ran, 1 when some failed, 2 when no device could be
//! used (no driver, bad arguments).

mod cases;
mod config;
mod cuda;
mod harness;
mod report;

use config::Config;
use report::Record;

fn main() {
    // Help exits 0, a bad argument 2 (with the usage), as the exit statuses above say.
    let config = Config::parse(std::env::args_os()).unwrap_or_else(|e| e.exit());
    if config.list {
        for case in cases::registry() {
            println!("{} {}", case.name, case.lib);
        }
        return;
    }
    std::process::exit(run(&config));
}

fn run(config: &Config) -> i32 {
    let gpu = match cuda::Gpu::open(config.device) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("rucuda-bench: {e}");
            eprintln!("rucuda-bench: nothing was measured; run it on a machine with an NVIDIA GPU and driver");
            return 2;
        }
    };
    let date = report::utc_timestamp();
    eprintln!(
        "rucuda-bench: device {} ({}), copies of {} MiB{}",
        config.device,
        gpu.name,
        config.copy_bytes >> 20,
        if config.quick { ", quick" } else { "" }
    );

    let mut records = Vec::new();
    let mut failed = 0;
    for case in cases::registry()
        .into_iter()
        .filter(|c| config.selects(c.name))
    {
        eprint!("  {:<24} {:<7}", case.name, case.lib);
        match (case.run)(&gpu, config) {
            Ok(m) => {
                eprintln!("{:>12.4} {}", m.value, m.unit);
                for point in m.points() {
                    if point.n != m.n {
                        eprintln!(
                            "  {:<24} {:<7}{:>12.4} {}  (n = {})",
                            "", "", point.value, point.unit, point.n
                        );
                    }
                    records.push(Record {
                        case: case.name.to_owned(),
                        lib: case.lib.to_owned(),
                        n: point.n,
                        value: point.value,
                        unit: point.unit.to_owned(),
                        ratio: None,
                        device: gpu.name.clone(),
                        date: date.clone(),
                    });
                }
            }
            Err(e) if e.is_skip() => eprintln!("  {e}"),
            Err(e) => {
                eprintln!("  FAILED: {e}");
                failed += 1;
            }
        }
    }
    for path in &config.peer_results {
        match report::read_peer_file(path, &gpu.name, &date) {
            Ok(peer) => records.extend(peer.into_iter().filter(|r| config.selects(&r.case))),
            Err(e) => {
                eprintln!("rucuda-bench: peer results left out: {e}");
                failed += 1;
            }
        }
    }
    report::fill_ratios(&mut records);

    let table = report::table(&records, &gpu.name, &date);
    println!("\n{table}");
    let written = std::fs::create_dir_all(&config.out_dir)
        .map_err(|e| cuda::Error(format!("{}: {e}", config.out_dir.display())))
        .and_then(|()| report::write_jsonl(&config.out_dir.join("bench.jsonl"), &records))
        .and_then(|()| {
            let path = config.out_dir.join("bench.md");
            std::fs::write(&path, &table)
                .map_err(|e| cuda::Error(format!("{}: {e}", path.display())))
        });
    match written {
        Ok(()) => eprintln!(
            "rucuda-bench: wrote {}",
            config.out_dir.join("bench.jsonl").display()
        ),
        Err(e) => {
            eprintln!("rucuda-bench: {e}");
            failed += 1;
        }
    }
    if failed > 0 {
        eprintln!("rucuda-bench: {failed} case(s) or peer file(s) failed");
        1
    } else {
        0
    }
}
