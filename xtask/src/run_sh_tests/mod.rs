//! Tests of the bundle's `run.sh` on a bundle of fake test binaries: shell scripts that
//! answer libtest's `--list` and `--exact` the way a real test binary does. They need bash
//! and coreutils, no GPU and no Rust build. The fakes are the scripts of `fakes/`; the
//! plain runs' tests are in `plain.rs`, the sanitizer's in `sanitize.rs`.

mod plain;
mod sanitize;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Answers like a libtest binary with three tests: one passing, one ignored that fails
/// (with output JSON must escape), one ignored that prints the skip marker; plus a benchmark
/// that must not be run.
const FAKE_TEST_BINARY: &str = include_str!("fakes/test_binary.sh");

struct FakeBundle {
    dir: PathBuf,
}

impl FakeBundle {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("xtask-run-sh-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("bin")).unwrap();
        fs::create_dir_all(dir.join("examples")).unwrap();
        fs::create_dir_all(dir.join("out")).unwrap();
        crate::bundle::write_runner(&dir).unwrap();
        write_executable(&dir.join("bin/fake__tests"), FAKE_TEST_BINARY);
        write_executable(
            &dir.join("examples/fake__example"),
            "#!/bin/sh\necho example ran\n",
        );
        fs::write(dir.join("tests.txt"), "fake__tests\n").unwrap();
        fs::write(
            dir.join("examples.txt"),
            "# comment\nfake__example --say hi\n",
        )
        .unwrap();
        Self { dir }
    }

    fn run(&self, args: &[&str]) -> (Output, Value) {
        self.run_with(args, &[])
    }

    fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> (Output, Value) {
        let out = Command::new("bash")
            .arg(self.dir.join("run.sh"))
            .args(args)
            .env("OUT", self.dir.join("out"))
            // One pass with no device, whatever this machine has.
            .env("CUDA_VISIBLE_DEVICES", "")
            .env_remove("RUCUDA_TEST_JOBS")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        let summary = fs::read_to_string(self.dir.join("out/summary.json")).unwrap();
        (out, serde_json::from_str(&summary).unwrap())
    }
}

impl Drop for FakeBundle {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn write_executable(path: &Path, text: &str) {
    fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn last_line(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or("")
        .to_owned()
}

fn have_bash() -> bool {
    cfg!(unix)
        && Command::new("bash")
            .arg("-c")
            .arg("command -v timeout")
            .output()
            .is_ok_and(|o| o.status.success())
}

/// A libtest binary whose tests are the lines `NAME IGNORED(0|1) BEHAVIOUR` put in place of
/// `@TESTS@`. It answers `--list`, and runs the selected tests (`--ignored`,
/// `--include-ignored`, `--exact` and name filters) one after the other the way libtest
/// does with `--test-threads=1 --nocapture`: "test NAME ... ", the test's output, "ok" or
/// "FAILED", then the failures' names and "test result:". Behaviours: `quiet` (prints
/// nothing), `pass`, `should_panic` (libtest's "test NAME - should panic ... "), `skip`
/// (the skip marker), `skip_nocuda` (skips before any CUDA call, which the fake
/// compute-sanitizer answers as the real one does), `fail`, `sanerr` (a line the fake
/// compute-sanitizer turns into an error report), `sanerr_together` (the same, only when
/// run with other tests), `fail_together` (fails only when run with other tests), `crash`
/// (exit 134 mid-test), `hang` (sleeps a minute). With
/// FAKE_RAN set, each run appends its arguments and RUCUDA_SANITIZER to that file.
const FAKE_LIBTEST: &str = include_str!("fakes/libtest.sh");

/// A compute-sanitizer: checks the options run.sh must pass, runs the program with its
/// output streamed, turns each line FAKE_SANITIZER_ERROR into an error report and ends
/// with the error summary; exit status 99 (the --error-exitcode) when it saw errors, else
/// the program's; 255 with the real tool's message when the program printed
/// FAKE_NO_CUDA_CALL (it made no CUDA call). Each call appends its arguments to
/// FAKE_SANITIZER_LOG.
const FAKE_SANITIZER: &str = include_str!("fakes/compute-sanitizer.sh");

/// A bundle of fake libtest binaries (name and test lines each), one example, and the
/// fake compute-sanitizer on PATH.
struct SanitizeBundle {
    bundle: FakeBundle,
}

impl SanitizeBundle {
    fn new(name: &str, binaries: &[(&str, &str)]) -> Self {
        let bundle = FakeBundle::new(name);
        let dir = &bundle.dir;
        let mut list = String::new();
        for (bin, tests) in binaries {
            write_executable(
                &dir.join("bin").join(bin),
                &FAKE_LIBTEST.replace("@TESTS@", tests),
            );
            list.push_str(bin);
            list.push('\n');
        }
        fs::write(dir.join("tests.txt"), list).unwrap();
        fs::create_dir_all(dir.join("fake-path")).unwrap();
        write_executable(&dir.join("fake-path/compute-sanitizer"), FAKE_SANITIZER);
        Self { bundle }
    }

    fn command(&self, args: &[&str]) -> Command {
        let dir = &self.bundle.dir;
        let path = format!(
            "{}:{}",
            dir.join("fake-path").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new("bash");
        cmd.arg(dir.join("run.sh"))
            .args(args)
            .env("OUT", dir.join("out"))
            .env("CUDA_VISIBLE_DEVICES", "")
            .env("PATH", path)
            .env("FAKE_SANITIZER_LOG", dir.join("sanitizer.log"))
            .env("FAKE_RAN", dir.join("ran.log"))
            .env_remove("RUCUDA_TEST_TIMEOUT")
            .env_remove("RUCUDA_SANITIZE_JOBS");
        cmd
    }

    fn run(&self, args: &[&str]) -> (Output, Value) {
        self.run_with(args, &[])
    }

    fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> (Output, Value) {
        let mut cmd = self.command(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let summary = fs::read_to_string(self.bundle.dir.join("out/summary.json"))
            .unwrap_or_else(|e| panic!("no summary.json ({e}): {out:?}"));
        (out, serde_json::from_str(&summary).unwrap())
    }

    /// The lines of one of the logs the fakes write (sanitizer.log, ran.log).
    fn log(&self, name: &str) -> Vec<String> {
        fs::read_to_string(self.bundle.dir.join(name))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.bundle.dir.join(rel)
    }
}

fn have_bash_and_awk() -> bool {
    have_bash()
        && Command::new("bash")
            .arg("-c")
            .arg("command -v awk")
            .output()
            .is_ok_and(|o| o.status.success())
}

/// The record of one test (binary and name) in a summary; panics when there is none.
fn test_record<'a>(summary: &'a Value, binary: &str, name: &str) -> &'a Value {
    summary["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["binary"] == binary && t["name"] == name)
        .unwrap_or_else(|| panic!("no record of {binary} {name}: {summary}"))
}

fn status_and_reason(record: &Value) -> (String, String) {
    (
        record["status"].as_str().unwrap_or("").to_owned(),
        record["reason"].as_str().unwrap_or("").to_owned(),
    )
}

const GPU_AND_CPU: &str = "cpu::passes 0 pass\ngpu::a_passes 1 pass\ngpu::b_quiet 1 quiet\n\
                           gpu::c_skips 1 skip\ngpu::d_fails 1 fail\n";
