//! `cargo xtask gpu-test [--no-run] [RUN_SH_ARGS...]`: builds every test executable of the
//! workspace (profile `gpu-test`) into the bundle under `target/gpu-bundle/`, with the
//! examples, the test fixture libraries (`cdylib/`, see `fixtures.rs`) and the `run.sh`
//! that runs each test in its own process on a GPU machine.
//! Without `--no-run`, on a machine with a GPU, it then runs `run.sh RUN_SH_ARGS`.

use std::collections::BTreeSet;
use std::path::Path;

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
    let shared_libraries = crate::fixtures::build(ws)?;
    let tests: Vec<String> = tests.into_iter().collect();
    let to_run = examples_to_run(&ws.root.join(EXAMPLES_LIST), &examples)?;
    bundle::write_list(&dir.join("tests.txt"), &tests)?;
    bundle::write_list(&dir.join("examples.txt"), &to_run)?;
    println!(
        "{} test binaries, {} examples ({} run, as {EXAMPLES_LIST} says), {shared_libraries} \
         test fixture libraries",
        tests.len(),
        examples.len(),
        to_run.len()
    );
    Ok(())
}

/// The committed list of the examples the bundle runs, with their arguments.
const EXAMPLES_LIST: &str = "xtask/gpu-examples.txt";

/// The lines of the examples list (comments and blank lines dropped), each checked to name
/// a built example.
fn examples_to_run(list: &Path, built: &BTreeSet<String>) -> XResult<Vec<String>> {
    let text = match std::fs::read_to_string(list) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", list.display()).into()),
    };
    let mut lines = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name = line.split_whitespace().next().unwrap_or_default();
        if !built.contains(name) {
            return Err(format!(
                "{}: no example {name} was built (built: {})",
                list.display(),
                built.iter().cloned().collect::<Vec<_>>().join(", ")
            )
            .into());
        }
        lines.push(line.to_owned());
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_examples_list_is_checked_against_the_built_examples() {
        let list = std::env::temp_dir().join(format!("xtask-examples-{}.txt", std::process::id()));
        std::fs::write(&list, "# comment\n\na__one --flag 2\n").unwrap();
        let built: BTreeSet<String> = ["a__one".to_owned(), "a__two".to_owned()].into();
        assert_eq!(examples_to_run(&list, &built).unwrap(), ["a__one --flag 2"]);
        std::fs::write(&list, "a__three\n").unwrap();
        let err = examples_to_run(&list, &built).unwrap_err().to_string();
        assert!(err.contains("no example a__three"), "{err}");
        let _ = std::fs::remove_file(&list);
        assert!(examples_to_run(&list, &built).unwrap().is_empty());
    }

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
