//! `cargo xtask gpu-test [--no-run] [RUN_SH_ARGS...]`: builds every test executable of the
//! workspace (profile `gpu-test`) into the bundle under `target/gpu-bundle/`, with the
//! examples and the `run.sh` that runs each test in its own process on a GPU machine.
//! Without `--no-run`, on a machine with a GPU, it then runs `run.sh RUN_SH_ARGS`.

use std::collections::BTreeSet;

use crate::bundle::{self, Workspace};
use crate::util::XResult;

/// Options shared by `gpu-test` and `bench`: `--no-run`, the rest goes to `run.sh`.
pub struct RunOptions {
    /// Only build the bundle.
    pub no_run: bool,
    /// Arguments for `run.sh` when it runs here.
    pub forward: Vec<String>,
}

impl RunOptions {
    /// Parses `[--no-run] [ARGS...]`; `--` ends xtask's own flags.
    pub fn parse(args: &[String]) -> Self {
        let mut no_run = false;
        let mut forward = Vec::new();
        let mut rest = args.iter();
        for arg in rest.by_ref() {
            match arg.as_str() {
                "--no-run" => no_run = true,
                "--" => break,
                _ => forward.push(arg.clone()),
            }
        }
        forward.extend(rest.cloned());
        Self { no_run, forward }
    }
}

/// Entry point.
pub fn main(args: &[String]) -> XResult<()> {
    let options = RunOptions::parse(args);
    let ws = Workspace::load()?;
    build(&ws)?;
    bundle::finish(&ws)?;
    if options.no_run {
        println!("run it on a GPU machine: bash target/gpu-bundle/run.sh");
        return Ok(());
    }
    bundle::run_in_place(&ws, &options.forward)
}

/// Builds the test executables and examples and puts them in the bundle, replacing the
/// ones a previous build put there (the bench binary and peers stay).
fn build(ws: &Workspace) -> XResult<()> {
    // xtask's own tests are host-only (bindgen, file generation) and pull in libclang's
    // bindings: they run in CI, not in the bundle.
    let built = bundle::build_executables(
        ws,
        bundle::cargo().args([
            "test",
            "--workspace",
            "--exclude",
            "xtask",
            "--profile",
            bundle::PROFILE,
            "--no-run",
        ]),
    )?;
    let dir = ws.bundle_dir();
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin)?;
    for entry in std::fs::read_dir(&bin)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().contains("__") {
            std::fs::remove_file(entry.path())?;
        }
    }
    bundle::clear_dir(&dir.join("examples"))?;

    let mut tests = BTreeSet::new();
    let mut examples = BTreeSet::new();
    for exe in &built {
        let (folder, names) = if exe.test {
            ("bin", &mut tests)
        } else if exe.kind == "example" {
            ("examples", &mut examples)
        } else {
            continue;
        };
        let name = exe.bundle_name();
        if !names.insert(name.clone()) {
            return Err(format!("two executables would both be named {folder}/{name}").into());
        }
        bundle::copy_executable(&exe.path, &dir.join(folder).join(&name))?;
    }
    let tests: Vec<String> = tests.into_iter().collect();
    let examples: Vec<String> = examples.into_iter().collect();
    bundle::write_list(&dir.join("tests.txt"), &tests)?;
    bundle::write_list(&dir.join("examples.txt"), &examples)?;
    println!("{} test binaries, {} examples", tests.len(), examples.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_split_at_double_dash() {
        let args: Vec<String> = ["--no-run", "filter", "x", "--", "--no-run"]
            .map(String::from)
            .to_vec();
        let o = RunOptions::parse(&args);
        assert!(o.no_run);
        assert_eq!(o.forward, ["filter", "x", "--no-run"]);
    }
}
