//! Tests of the bundle's `run.sh` on a bundle of fake test binaries: shell scripts that
//! answer libtest's `--list` and `--exact` the way a real test binary does. They need bash
//! and coreutils, no GPU and no Rust build.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Answers like a libtest binary with three tests: one passing, one ignored that fails
/// (with output JSON must escape), one ignored that prints the skip marker; plus a benchmark
/// that must not be run.
const FAKE_TEST_BINARY: &str = r#"#!/usr/bin/env bash
if [[ $1 == --list ]]; then
    if [[ " $* " == *" --ignored "* ]]; then
        printf '%s: test\n' gpu::fails gpu::skips
    else
        printf '%s: test\n' passes gpu::fails gpu::skips
        echo 'bench_thing: benchmark'
    fi
    exit 0
fi
[[ $1 == --exact && " $* " == *" --include-ignored "* && " $* " == *" --nocapture "* ]] || exit 64
echo
echo 'running 1 test'
case $2 in
    passes) echo 'test passes ... ok' ;;
    gpu::fails) printf 'test gpu::fails ... \nboom "quoted" \\ tab\there\n'; exit 101 ;;
    gpu::skips) printf 'test gpu::skips ... \nRUCUDA_SKIPPED: no device here\nok\n' ;;
    *) exit 65 ;;
esac
"#;

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
        write_executable(&dir.join("run.sh"), crate::bundle::RUN_SH);
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
        let out = Command::new("bash")
            .arg(self.dir.join("run.sh"))
            .args(args)
            .env("OUT", self.dir.join("out"))
            // One pass with no device, whatever this machine has.
            .env("CUDA_VISIBLE_DEVICES", "")
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

#[test]
fn every_test_in_its_own_process_with_pass_fail_skip() {
    if !have_bash() {
        return;
    }
    let bundle = FakeBundle::new("all");
    let (out, summary) = bundle.run(&[]);
    assert_eq!(last_line(&out), "2 passed, 1 failed, 1 skipped", "{out:?}");
    assert_eq!(out.status.code(), Some(1));
    let tests = summary["tests"].as_array().unwrap();
    let by_name = |name: &str| tests.iter().find(|t| t["name"] == name).unwrap();
    assert_eq!(tests.len(), 4, "the benchmark is not run: {tests:?}");
    assert_eq!(by_name("passes")["status"], "passed");
    assert_eq!(by_name("passes")["ignored"], false);
    let failed = by_name("gpu::fails");
    assert_eq!(
        (&failed["status"], &failed["ignored"]),
        (&"failed".into(), &true.into())
    );
    assert_eq!(failed["reason"], "exit status 101");
    assert!(failed["output_tail"]
        .as_str()
        .unwrap()
        .contains("boom \"quoted\" \\ tab\there"));
    let skipped = by_name("gpu::skips");
    assert_eq!(
        (&skipped["status"], &skipped["reason"]),
        (&"skipped".into(), &"no device here".into())
    );
    let example = by_name("(example) --say hi");
    assert_eq!(
        (&example["binary"], &example["status"]),
        (&"fake__example".into(), &"passed".into())
    );
    assert_eq!(
        (&summary["passed"], &summary["failed"], &summary["skipped"]),
        (&2.into(), &1.into(), &1.into())
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("---- FAILED fake__tests gpu::fails"),
        "{stdout}"
    );
}

#[test]
fn filter_keeps_matching_tests_only() {
    if !have_bash() {
        return;
    }
    let bundle = FakeBundle::new("filter");
    let (out, summary) = bundle.run(&["filter", "skips"]);
    assert_eq!(last_line(&out), "0 passed, 0 failed, 1 skipped", "{out:?}");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(summary["tests"].as_array().unwrap().len(), 1);
}
