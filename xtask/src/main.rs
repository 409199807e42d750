//! `cargo xtask`: the project's own commands.
//!
//! - `test [-- CARGO_TEST_ARGS]`: the README's test command: installs NVIDIA's wheels under
//!   `target/`, runs every test of the workspace, prints the totals.
//! - `bindgen [--check]`: regenerate the committed raw bindings (driver, NVRTC, NCCL).
//! - `gpu-test [--no-run]`: build the GPU test bundle under `target/gpu-bundle/`, run it where a GPU is local.
//! - `bench [--no-run]`: add the bench binary to the bundle, run it where a GPU is local.
//! - `bench-report [BENCH_JSONL]`: `docs/bench/README.md` and its plots from a bench run.
//! - `doc`: build the API docs and the guide (rustdoc warnings are errors).
//! - `fuzz [--seconds N]`: run each fuzz target of `fuzz/` for a fixed time.
//! - `wheel [--test] [--bundle]`: the `rucuda` Python wheel into `target/wheels/` (maturin
//!   from PyPI); `--test` runs its Python tests, `--bundle` adds it and PyCUDA's tests to
//!   the GPU bundle.
//! - `testu01 [CASE...]`: TestU01's SmallCrush on `rucuda-rand`'s CPU reference streams.
//!
//! The command line is parsed by clap; the commands older than `test` still read their
//! own options from the arguments passed through to them. `xtask/README.md` describes
//! the bundle and `run.sh`.

mod bench;
mod bench_report;
mod bindgen;
mod bundle;
mod doc;
mod fixtures;
mod fuzz;
mod gpu_test;
#[cfg(test)]
mod run_sh_tests;
mod test_all;
mod testu01;
mod util;
mod wheel;

use clap::{Parser, Subcommand};

/// The project's own commands.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about = "rucuda's own commands")]
struct Cli {
    #[command(subcommand)]
    command: XCommand,
}

/// One command, with the arguments each older command parses itself.
#[derive(Debug, Subcommand)]
enum XCommand {
    /// The README's test command: NVIDIA's wheels under target/, every test, the totals.
    Test(test_all::TestArgs),
    /// Regenerate the committed raw bindings (`--check`: fail when they are stale).
    Bindgen {
        /// Compare with the committed files instead of writing them.
        #[arg(long)]
        check: bool,
    },
    /// Build the GPU test bundle (target/gpu-bundle); run it where a GPU is
    /// (`--no-run`, then run.sh's arguments).
    GpuTest(PassThrough),
    /// Add the bench binary and peers to the bundle; run it where a GPU is
    /// (`--no-run`, `--quick`).
    Bench(PassThrough),
    /// docs/bench/README.md and SVG plots from a bench run (`[BENCH_JSONL]`, default
    /// docs/bench/h100.jsonl).
    BenchReport(PassThrough),
    /// cargo doc --workspace --no-deps with warnings as errors.
    Doc,
    /// Run each fuzz target of fuzz/ for a fixed time
    /// (`--seconds N`, `--driver auto|libfuzzer|stable`, `TARGET...`).
    Fuzz(PassThrough),
    /// TestU01 SmallCrush on rucuda-rand's CPU reference streams
    /// (`--seed N`, `--jobs N`, `--refetch`, `GENERATOR[@STATES]...`).
    Testu01(PassThrough),
    /// The rucuda Python wheel into target/wheels (`--test`: its CPU tests; `--bundle`:
    /// into the GPU bundle with PyCUDA's own tests).
    Wheel(wheel::WheelArgs),
}

/// Arguments handed as they are to a command that parses its own.
#[derive(Debug, clap::Args)]
struct PassThrough {
    /// The command's own arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        XCommand::Test(args) => test_all::main(args),
        XCommand::Bindgen { check } => bindgen::main(&if check {
            vec!["--check".into()]
        } else {
            vec![]
        }),
        XCommand::GpuTest(p) => gpu_test::main(&p.args),
        XCommand::Bench(p) => bench::main(&p.args),
        XCommand::BenchReport(p) => bench_report::main(&p.args),
        XCommand::Doc => doc::main(&[]),
        XCommand::Fuzz(p) => fuzz::main(&p.args),
        XCommand::Testu01(p) => testu01::main(&p.args),
        XCommand::Wheel(args) => wheel::main(args),
    };
    if let Err(e) = result {
        eprintln!("xtask: {e}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn pass_through_keeps_options() {
        let cli = Cli::try_parse_from(["xtask", "gpu-test", "--no-run", "sanitize"]).unwrap();
        match cli.command {
            XCommand::GpuTest(p) => assert_eq!(p.args, ["--no-run", "sanitize"]),
            other => panic!("{other:?}"),
        }
        let cli = Cli::try_parse_from(["xtask", "test", "--", "--test", "x"]).unwrap();
        match cli.command {
            XCommand::Test(t) => assert_eq!(t.cargo_args, ["--test", "x"]),
            other => panic!("{other:?}"),
        }
    }
}
