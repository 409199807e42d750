//! `cargo xtask test`: the README's test command. It sets up what the tests need on a
//! fresh machine, then runs every test of the workspace and prints the totals.
//!
//! 1. NVIDIA's wheels ([`WHEELS`]: NVRTC, the CUDA runtime's headers, NCCL) are installed
//!    with `python3 -m pip install --target <target>/nvidia-wheels`, once: a stamp file
//!    records the versions, and a later run with the same versions installs nothing.
//!    Nothing outside `target/` is touched. A failed install says so and the tests still
//!    run, the NVRTC tests skipping with one line each.
//! 2. The tests are pointed at them: `RUCUDA_NVRTC` and `RUCUDA_NCCL` (the loaders'
//!    overrides), `RUCUDA_CUDA_INCLUDE` and `RUCUDA_NCCL_INCLUDE` (the headers the bindings
//!    freshness check reads).
//! 3. `cargo test --workspace --no-fail-fast [ARGS]` runs; its output passes through, and
//!    the `test result:` lines of every test binary (doc-tests included) are summed into a
//!    last line `N passed, N failed, N ignored`. The command fails when any test failed
//!    or cargo itself failed (a build error).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::bindgen::{CUDA_INCLUDE_ENV, NCCL_INCLUDE_ENV};
use crate::bundle::cargo;
use crate::util::{project_root, XResult};

/// The wheels the tests use, at the versions CI has used (`nvidia-cuda-runtime` for the
/// CUDA headers of the bindings check; NCCL for `rucuda-nccl`'s loader tests).
pub const WHEELS: &[&str] = &[
    "nvidia-cuda-nvrtc==13.0.88",
    "nvidia-cuda-runtime==13.0.96",
    "nvidia-nccl-cu13==2.28.9",
];

/// The stamp file inside the wheels folder: the requirement list it was installed from.
const STAMP: &str = ".rucuda-wheels";

/// Options of `cargo xtask test`.
#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// Where NVIDIA's wheels are installed (default: `<target>/nvidia-wheels`).
    #[arg(long, env = "RUCUDA_WHEELS_DIR", value_name = "DIR")]
    pub wheels_dir: Option<PathBuf>,
    /// The Python that runs pip.
    #[arg(long, env = "PYTHON", default_value = "python3")]
    pub python: String,
    /// Use the wheels already in the folder (if any); install nothing.
    #[arg(long)]
    pub no_install: bool,
    /// More arguments for `cargo test` (after `--`: test name filters, `--nocapture`).
    #[arg(last = true, value_name = "CARGO_TEST_ARGS")]
    pub cargo_args: Vec<String>,
}

/// The files the tests are pointed at, inside a wheels folder.
#[derive(Debug, Clone, PartialEq, Eq)]
struct WheelPaths {
    nvrtc: PathBuf,
    nccl: PathBuf,
    cuda_include: PathBuf,
    nccl_include: PathBuf,
}

impl WheelPaths {
    fn in_folder(dir: &Path) -> WheelPaths {
        WheelPaths {
            nvrtc: dir.join("nvidia/cu13/lib/libnvrtc.so.13"),
            nccl: dir.join("nvidia/nccl/lib/libnccl.so.2"),
            cuda_include: dir.join("nvidia/cu13/include"),
            nccl_include: dir.join("nvidia/nccl/include"),
        }
    }

    /// Every file the tests need is there.
    fn complete(&self) -> bool {
        self.nvrtc.is_file()
            && self.nccl.is_file()
            && self.cuda_include.join("cuda.h").is_file()
            && self.nccl_include.join("nccl.h").is_file()
    }

    /// The environment for the tests: one variable per file that is there.
    fn env(&self) -> Vec<(&'static str, PathBuf)> {
        let mut out = Vec::new();
        if self.nvrtc.is_file() {
            out.push(("RUCUDA_NVRTC", self.nvrtc.clone()));
        }
        if self.nccl.is_file() {
            out.push(("RUCUDA_NCCL", self.nccl.clone()));
        }
        if self.cuda_include.join("cuda.h").is_file() {
            out.push((CUDA_INCLUDE_ENV, self.cuda_include.clone()));
        }
        if self.nccl_include.join("nccl.h").is_file() {
            out.push((NCCL_INCLUDE_ENV, self.nccl_include.clone()));
        }
        out
    }
}

/// The requirement list as the stamp file holds it.
fn stamp_text() -> String {
    WHEELS.join("\n") + "\n"
}

/// `<target>/nvidia-wheels`, `<target>` being `CARGO_TARGET_DIR` or the workspace's.
fn default_wheels_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| project_root().join("target"));
    target.join("nvidia-wheels")
}

/// Installs [`WHEELS`] into `dir` unless the stamp says they are there.
fn install(python: &str, dir: &Path) -> XResult<()> {
    let stamp = dir.join(STAMP);
    let paths = WheelPaths::in_folder(dir);
    if paths.complete() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == stamp_text()) {
        eprintln!("xtask test: NVIDIA's wheels already in {}", dir.display());
        return Ok(());
    }
    eprintln!(
        "xtask test: installing {} into {}",
        WHEELS.join(" "),
        dir.display()
    );
    std::fs::create_dir_all(dir)?;
    let out = Command::new(python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-warn-script-location",
            "--upgrade",
            "--target",
        ])
        .arg(dir)
        .args(WHEELS)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("could not run `{python} -m pip`: {e}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("(no message)");
        return Err(format!("`{python} -m pip install` failed ({}): {last}", out.status).into());
    }
    if !paths.complete() {
        return Err(format!(
            "pip finished but {} lacks some of the expected files",
            dir.display()
        )
        .into());
    }
    std::fs::write(stamp, stamp_text())?;
    Ok(())
}

/// The counts of one `test result:` line, or of many summed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Totals {
    passed: u64,
    failed: u64,
    ignored: u64,
}

impl Totals {
    /// Adds the counts of a libtest summary line
    /// (`test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; ...`);
    /// false for any other line.
    fn add_line(&mut self, line: &str) -> bool {
        let Some(rest) = line.trim().strip_prefix("test result: ") else {
            return false;
        };
        let Some((_, counts)) = rest.split_once(". ") else {
            return false;
        };
        for part in counts.split(';') {
            let mut words = part.split_whitespace();
            let (Some(n), Some(what)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<u64>() else { continue };
            match what {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                "ignored" => self.ignored += n,
                _ => {}
            }
        }
        true
    }
}

/// Entry point.
pub fn main(args: TestArgs) -> XResult<()> {
    let dir = args.wheels_dir.clone().unwrap_or_else(default_wheels_dir);
    if !args.no_install {
        if let Err(e) = install(&args.python, &dir) {
            eprintln!(
                "xtask test: could not install NVIDIA's wheels: {e}\n\
                 xtask test: the tests run without them; those that need NVRTC skip, saying so"
            );
        }
    }
    let env = WheelPaths::in_folder(&dir).env();
    for (name, value) in &env {
        eprintln!("xtask test: {name}={}", value.display());
    }

    let mut cmd = cargo();
    cmd.current_dir(project_root())
        .args(["test", "--workspace", "--no-fail-fast"])
        .args(&args.cargo_args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_os_str())))
        .stdout(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("could not run cargo test: {e}"))?;
    let stdout = child.stdout.take().ok_or("cargo test has no stdout")?;
    let mut totals = Totals::default();
    let mut skipped = 0u64;
    let mut out = std::io::stdout().lock();
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        totals.add_line(&line);
        if line.starts_with("RUCUDA_SKIPPED:") {
            skipped += 1;
        }
        writeln!(out, "{line}")?;
    }
    drop(out);
    let status = child.wait()?;
    if skipped > 0 {
        println!("({skipped} of the passed tests skipped, saying why: RUCUDA_SKIPPED lines above)");
    }
    println!(
        "{} passed, {} failed, {} ignored",
        totals.passed, totals.failed, totals.ignored
    );
    if totals.failed > 0 {
        return Err(format!("{} test(s) failed", totals.failed).into());
    }
    if !status.success() {
        return Err(format!("cargo test failed ({status})").into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_lines_are_summed() {
        let mut t = Totals::default();
        assert!(t.add_line(
            "test result: ok. 12 passed; 0 failed; 3 ignored; 0 measured; 0 filtered out; finished in 0.01s"
        ));
        assert!(t.add_line(
            "test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.00s"
        ));
        assert!(!t.add_line("test foo ... ok"));
        assert_eq!(
            t,
            Totals {
                passed: 13,
                failed: 2,
                ignored: 3
            }
        );
    }

    #[test]
    fn the_environment_names_only_files_that_exist() {
        let dir = std::env::temp_dir().join(format!("xtask-wheels-{}", std::process::id()));
        let paths = WheelPaths::in_folder(&dir);
        assert!(paths.env().is_empty());
        assert!(!paths.complete());
        std::fs::create_dir_all(paths.nvrtc.parent().unwrap()).unwrap();
        std::fs::write(&paths.nvrtc, b"").unwrap();
        assert_eq!(paths.env(), [("RUCUDA_NVRTC", paths.nvrtc.clone())]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
