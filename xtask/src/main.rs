//! `cargo xtask`: the project's own commands.
//!
//! - `bindgen [--check]`: regenerate the committed raw bindings (driver, NVRTC, NCCL).
//! - `gpu-test [--no-run]`: build the GPU test bundle under `target/gpu-bundle/`, run it where a GPU is local.
//! - `bench [--no-run]`: add the bench binary to the bundle, run it where a GPU is local.
//! - `bench-report [BENCH_JSONL]`: `docs/bench/README.md` and its plots from a bench run.
//! - `doc`: build the API docs and the guide (rustdoc warnings are errors).
//! - `fuzz [--seconds N]`: run each fuzz target of `fuzz/` for a fixed time.
//! - `testu01 [CASE...]`: TestU01's SmallCrush on `rucuda-rand`'s CPU reference streams.
//!
//! `xtask/README.md` describes the bundle and `run.sh`.

mod bench;
mod bench_report;
mod bindgen;
mod bundle;
mod doc;
mod fuzz;
mod gpu_test;
#[cfg(test)]
mod run_sh_tests;
mod testu01;
mod util;

const HELP: &str = "\
usage: cargo xtask <command>
  bindgen [--check]                 regenerate the committed raw bindings
  gpu-test [--no-run] [RUN_SH_ARGS] build the GPU test bundle (target/gpu-bundle); run it where a GPU is
  bench [--no-run] [--quick]        add the bench binary and peers to the bundle; run it where a GPU is
  bench-report [BENCH_JSONL]        docs/bench/README.md and SVG plots from a bench run (default docs/bench/h100.jsonl)
  doc                               cargo doc --workspace --no-deps with warnings as errors
  fuzz [--seconds N] [--driver auto|libfuzzer|stable] [TARGET...]
                                    run each fuzz target of fuzz/ for a fixed time
  testu01 [--seed N] [--jobs N] [--refetch] [GENERATOR[@STATES]...]
                                    TestU01 SmallCrush on rucuda-rand's CPU reference streams";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("bindgen") => bindgen::main(&args[1..]),
        Some("gpu-test") => gpu_test::main(&args[1..]),
        Some("bench") => bench::main(&args[1..]),
        Some("bench-report") => bench_report::main(&args[1..]),
        Some("doc") => doc::main(&args[1..]),
        Some("fuzz") => fuzz::main(&args[1..]),
        Some("testu01") => testu01::main(&args[1..]),
        _ => {
            eprintln!("{HELP}");
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("xtask: {e}");
        std::process::exit(1);
    }
}
