//! `cargo xtask bench [--no-run] [RUN_SH_BENCH_ARGS...]`: builds the `rucuda-bench`
//! binary (profile `gpu-test`) into the bundle as `bin/rucuda-bench`, with the peer
//! programs from `crates/rucuda-bench/peers/`. Without `--no-run`, on a machine with a
//! GPU, it then runs `run.sh bench ARGS` (for example `--quick`).

use crate::bundle::{self, Workspace};
use crate::gpu_test::RunOptions;
use crate::util::XResult;

/// Entry point.
pub fn main(args: &[String]) -> XResult<()> {
    let options = RunOptions::parse(args);
    let ws = Workspace::load()?;
    build(&ws)?;
    bundle::finish(&ws)?;
    if options.no_run {
        println!("run it on a GPU machine: bash target/gpu-bundle/run.sh bench");
        return Ok(());
    }
    let mut forward = vec!["bench".to_owned()];
    forward.extend(options.forward);
    bundle::run_in_place(&ws, &forward)
}

fn build(ws: &Workspace) -> XResult<()> {
    let built = bundle::build_executables(
        ws,
        bundle::cargo().args([
            "build",
            "--package",
            "rucuda-bench",
            "--bin",
            "rucuda-bench",
            "--profile",
            bundle::PROFILE,
        ]),
    )?;
    let exe = built
        .iter()
        .find(|e| e.kind == "bin" && e.target == "rucuda-bench" && !e.test)
        .ok_or("cargo built no rucuda-bench binary")?;
    let dir = ws.bundle_dir();
    bundle::copy_executable(&exe.path, &dir.join("bin/rucuda-bench"))?;

    let peers = dir.join("peers");
    bundle::clear_dir(&peers)?;
    let source = ws.root.join("crates/rucuda-bench/peers");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&source)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), peers.join(entry.file_name()))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    println!("bench binary and peers: {}", names.join(", "));
    Ok(())
}
