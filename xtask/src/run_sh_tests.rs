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
const FAKE_LIBTEST: &str = r#"#!/usr/bin/env bash
TESTS='@TESTS@'
mapfile -t spec < <(printf '%s\n' "$TESTS" | grep . | sort)
if [[ $1 == --list ]]; then
    only_ignored=0
    [[ " $* " == *" --ignored "* ]] && only_ignored=1
    for line in "${spec[@]}"; do
        read -r name ignored _ <<<"$line"
        ((only_ignored && !ignored)) && continue
        printf '%s: test\n' "$name"
    done
    ((only_ignored)) || echo 'bench_thing: benchmark'
    exit 0
fi
[[ -n $FAKE_RAN ]] && echo "${0##*/} $* [RUCUDA_SANITIZER=$RUCUDA_SANITIZER]" >>"$FAKE_RAN"
[[ " $* " == *" --test-threads=1 "* && " $* " == *" --nocapture "* ]] || exit 64
exact=0 ignored_only=0 include_ignored=0 filters=()
for a in "$@"; do
    case $a in
        --exact) exact=1 ;;
        --ignored) ignored_only=1 ;;
        --include-ignored) include_ignored=1 ;;
        --test-threads=1 | --nocapture) ;;
        -*) echo "unknown option $a" >&2; exit 64 ;;
        *) filters+=("$a") ;;
    esac
done
selected=()
for line in "${spec[@]}"; do
    read -r name ignored behaviour <<<"$line"
    ((ignored_only && !ignored)) && continue
    ((!ignored_only && !include_ignored && ignored)) && continue
    if ((${#filters[@]})); then
        hit=0
        for f in "${filters[@]}"; do
            if ((exact)); then [[ $name == "$f" ]] && hit=1; else [[ $name == *"$f"* ]] && hit=1; fi
        done
        ((hit)) || continue
    fi
    selected+=("$name $behaviour")
done
echo
if ((${#selected[@]} == 1)); then echo 'running 1 test'; else echo "running ${#selected[@]} tests"; fi
failed=()
for line in "${selected[@]}"; do
    read -r name behaviour <<<"$line"
    if [[ $behaviour == should_panic ]]; then
        printf 'test %s - should panic ... ' "$name"
    else
        printf 'test %s ... ' "$name"
    fi
    case $behaviour in
        should_panic) echo "thread '$name' panicked: as it should"; echo ok ;;
        quiet) echo ok ;;
        pass) printf 'random seed 42\nchecked ok\n'; echo ok ;;
        skip) printf '\nRUCUDA_SKIPPED: no device here\n'; echo ok ;;
        fail)
            printf '\nboom "quoted" \\ tab\there\n'
            echo "thread '$name' panicked at src/lib.rs:1:1:" >&2
            echo 'assertion failed' >&2
            echo FAILED
            failed+=("$name")
            ;;
        fail_together)
            if ((${#selected[@]} > 1)); then
                echo 'the previous test left a mess'
                echo FAILED
                failed+=("$name")
            else
                echo ok
            fi
            ;;
        sanerr) echo FAKE_SANITIZER_ERROR; echo ok ;;
        skip_nocuda) printf '\nRUCUDA_SKIPPED: provokes errors\nFAKE_NO_CUDA_CALL\n'; echo ok ;;
        sanerr_together)
            ((${#selected[@]} > 1)) && echo FAKE_SANITIZER_ERROR
            echo ok
            ;;
        crash) echo 'about to crash'; exit 134 ;;
        hang) echo 'hanging'; sleep 60; echo ok ;;
        *) exit 65 ;;
    esac
done
if ((${#failed[@]})); then
    printf '\nfailures:\n\nfailures:\n'
    printf '    %s\n' "${failed[@]}"
    printf '\ntest result: FAILED. %d passed; %d failed; 0 ignored\n\n' \
        $((${#selected[@]} - ${#failed[@]})) ${#failed[@]}
    exit 101
fi
printf '\ntest result: ok. %d passed; 0 failed; 0 ignored\n\n' ${#selected[@]}
"#;

/// A compute-sanitizer: checks the options run.sh must pass, runs the program with its
/// output streamed, turns each line FAKE_SANITIZER_ERROR into an error report and ends
/// with the error summary; exit status 99 (the --error-exitcode) when it saw errors, else
/// the program's; 255 with the real tool's message when the program printed
/// FAKE_NO_CUDA_CALL (it made no CUDA call). Each call appends its arguments to
/// FAKE_SANITIZER_LOG.
const FAKE_SANITIZER: &str = r#"#!/usr/bin/env bash
echo "$*" >>"$FAKE_SANITIZER_LOG"
[[ $1 == --tool && $3 == --error-exitcode && $5 == --report-api-errors && $6 == no ]] || exit 70
code=$4
shift 6
# memcheck also gets --track-stream-ordered-races all.
if [[ $1 == --track-stream-ordered-races ]]; then shift 2; fi
echo '========= COMPUTE-SANITIZER'
errors_file=$(mktemp)
nocuda_file=$(mktemp)
"$@" 2>&1 | while IFS= read -r line || [[ -n $line ]]; do
    if [[ $line == *FAKE_NO_CUDA_CALL* ]]; then
        echo >>"$nocuda_file"
    elif [[ $line == *FAKE_SANITIZER_ERROR* ]]; then
        echo >>"$errors_file"
        echo '========= Invalid __global__ read of size 4 bytes'
        echo '=========     at fake_kernel+0x10'
    else
        printf '%s\n' "$line"
    fi
done
rc=${PIPESTATUS[0]}
errors=$(wc -l <"$errors_file")
nocuda=$(wc -l <"$nocuda_file")
rm -f "$errors_file" "$nocuda_file"
if ((nocuda && !errors)); then
    echo '========= Error: Target application terminated before first instrumented API call'
    exit 255
fi
echo "========= ERROR SUMMARY: $errors errors"
((errors)) && exit "$code"
exit "$rc"
"#;

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

#[test]
fn sanitize_runs_only_the_gpu_tests_one_sanitizer_process_per_binary() {
    if !have_bash_and_awk() {
        return;
    }
    let bundle = SanitizeBundle::new(
        "san-one",
        &[
            ("fake__gpu", GPU_AND_CPU),
            ("fake__cpu", "cpu::only 0 pass\ncpu::other 0 fail\n"),
        ],
    );
    let (out, summary) = bundle.run(&["sanitize", "--jobs", "2"]);
    assert_eq!(last_line(&out), "3 passed, 1 failed, 1 skipped", "{out:?}");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(summary["mode"], "sanitize:memcheck");
    let tests = summary["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 5, "four GPU tests and the example: {tests:?}");
    assert!(tests.iter().all(|t| t["name"] != "cpu::passes"));
    for name in ["gpu::a_passes", "gpu::b_quiet"] {
        let t = test_record(&summary, "fake__gpu", name);
        assert_eq!(
            (&t["status"], &t["ignored"]),
            (&"passed".into(), &true.into())
        );
        assert!(t["seconds"].as_f64().is_some());
    }
    let skipped = test_record(&summary, "fake__gpu", "gpu::c_skips");
    assert_eq!(
        status_and_reason(skipped),
        ("skipped".into(), "no device here".into())
    );
    // A failed test runs again alone, which tells whether it fails there too.
    let failed = test_record(&summary, "fake__gpu", "gpu::d_fails");
    assert_eq!(
        status_and_reason(failed),
        (
            "failed".into(),
            "test failed (alone too: exit status 101)".into()
        )
    );
    let tail = failed["output_tail"].as_str().unwrap();
    assert!(
        tail.contains("boom \"quoted\" \\ tab\there") && tail.contains("panicked"),
        "{tail}"
    );
    assert!(!tail.contains("random seed"), "only its own output: {tail}");
    let example = test_record(&summary, "fake__example", "(example) --say hi");
    assert_eq!(
        (&example["status"], &example["ignored"]),
        (&"passed".into(), &false.into())
    );
    // One sanitizer process for the binary, one for the failed test alone, one for the
    // example, none for the CPU suite.
    let calls = bundle.log("sanitizer.log");
    let prefix = "--tool memcheck --error-exitcode 99 --report-api-errors no \
                  --track-stream-ordered-races all ";
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert!(calls.iter().any(|c| c.starts_with(prefix)
        && c.ends_with(
            "/bin/fake__gpu --exact gpu::d_fails --ignored --test-threads=1 --nocapture"
        )));
    assert!(calls.iter().any(|c| c.starts_with(prefix)
        && c.ends_with("/bin/fake__gpu --ignored --test-threads=1 --nocapture")));
    assert!(calls
        .iter()
        .any(|c| c.starts_with(prefix) && c.ends_with("/examples/fake__example --say hi")));
    let ran = bundle.log("ran.log");
    assert_eq!(
        ran,
        [
            "fake__gpu --ignored --test-threads=1 --nocapture [RUCUDA_SANITIZER=memcheck]",
            "fake__gpu --exact gpu::d_fails --ignored --test-threads=1 --nocapture \
             [RUCUDA_SANITIZER=memcheck]"
        ]
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("---- FAILED fake__gpu gpu::d_fails"),
        "{stdout}"
    );
}

#[test]
fn sanitizer_errors_rerun_the_binary_one_test_per_process() {
    if !have_bash_and_awk() {
        return;
    }
    let bundle = SanitizeBundle::new(
        "san-errors",
        &[
            (
                "fake__dirty",
                "gpu::clean 1 pass\ngpu::dirty 1 sanerr\ngpu::skipped 1 skip\n",
            ),
            (
                "fake__together",
                "gpu::one 1 sanerr_together\ngpu::two 1 quiet\n",
            ),
        ],
    );
    let (out, summary) = bundle.run(&["sanitize", "racecheck", "exclude", "example"]);
    assert_eq!(last_line(&out), "3 passed, 2 failed, 1 skipped", "{out:?}");
    assert_eq!(summary["mode"], "sanitize:racecheck");
    let dirty = test_record(&summary, "fake__dirty", "gpu::dirty");
    assert_eq!(
        status_and_reason(dirty),
        (
            "failed".into(),
            "compute-sanitizer (racecheck) reported errors".into()
        )
    );
    let tail = dirty["output_tail"].as_str().unwrap();
    assert!(
        tail.contains("Invalid __global__ read") && tail.contains("ERROR SUMMARY: 1 errors"),
        "{tail}"
    );
    assert_eq!(
        test_record(&summary, "fake__dirty", "gpu::clean")["status"],
        "passed"
    );
    assert_eq!(
        test_record(&summary, "fake__dirty", "gpu::skipped")["status"],
        "skipped"
    );
    // The errors show only when both tests run in one process: the whole binary fails.
    for name in ["gpu::one", "gpu::two"] {
        assert_eq!(
            test_record(&summary, "fake__together", name)["status"],
            "passed"
        );
    }
    let (status, reason) =
        status_and_reason(test_record(&summary, "fake__together", "(whole binary)"));
    assert_eq!(status, "failed");
    assert!(reason.contains("no test alone reproduced them"), "{reason}");
    // Whole runs, then each test that was not skipped alone.
    let mut calls: Vec<String> = bundle
        .log("sanitizer.log")
        .iter()
        .map(|c| c.rsplit('/').next().unwrap().to_owned())
        .collect();
    calls.sort();
    assert_eq!(
        calls,
        [
            "fake__dirty --exact gpu::clean --ignored --test-threads=1 --nocapture",
            "fake__dirty --exact gpu::dirty --ignored --test-threads=1 --nocapture",
            "fake__dirty --ignored --test-threads=1 --nocapture",
            "fake__together --exact gpu::one --ignored --test-threads=1 --nocapture",
            "fake__together --exact gpu::two --ignored --test-threads=1 --nocapture",
            "fake__together --ignored --test-threads=1 --nocapture",
        ]
    );
    // The whole runs' output is kept.
    let logs = bundle.path("out/sanitizer-logs");
    for bin in ["fake__dirty", "fake__together"] {
        let log = fs::read_to_string(logs.join(format!("{bin}.device-none.log"))).unwrap();
        assert!(log.contains("ERROR SUMMARY: 1 errors"), "{log}");
    }
}

#[test]
fn a_crash_or_timeout_fails_the_unfinished_tests_of_the_binary() {
    if !have_bash_and_awk() {
        return;
    }
    let bundle = SanitizeBundle::new(
        "san-crash",
        &[
            (
                "fake__crash",
                "gpu::a_ok 1 pass\ngpu::b_crash 1 crash\ngpu::c_later 1 pass\n",
            ),
            ("fake__hang", "gpu::a_ok 1 quiet\ngpu::b_hangs 1 hang\n"),
            (
                "fake__mess",
                "gpu::a_ok 1 quiet\ngpu::b_fails_after_a 1 fail_together\n\
                 gpu::c_should_panic 1 should_panic\n",
            ),
        ],
    );
    let (out, summary) = bundle.run_with(
        &["sanitize", "exclude", "example"],
        &[("RUCUDA_TEST_TIMEOUT", "3")],
    );
    assert_eq!(last_line(&out), "4 passed, 4 failed, 0 skipped", "{out:?}");
    assert_eq!(
        test_record(&summary, "fake__mess", "gpu::c_should_panic")["status"],
        "passed"
    );
    assert_eq!(
        test_record(&summary, "fake__crash", "gpu::a_ok")["status"],
        "passed"
    );
    let crashed = test_record(&summary, "fake__crash", "gpu::b_crash");
    assert_eq!(
        status_and_reason(crashed),
        (
            "failed".into(),
            "the binary stopped with exit status 134 while this test ran".into()
        )
    );
    assert!(crashed["output_tail"]
        .as_str()
        .unwrap()
        .contains("about to crash"));
    assert_eq!(
        status_and_reason(test_record(&summary, "fake__crash", "gpu::c_later")),
        (
            "failed".into(),
            "not run: the binary stopped with exit status 134 in gpu::b_crash".into()
        )
    );
    assert_eq!(
        test_record(&summary, "fake__hang", "gpu::a_ok")["status"],
        "passed"
    );
    assert_eq!(
        status_and_reason(test_record(&summary, "fake__hang", "gpu::b_hangs")),
        (
            "failed".into(),
            "the whole binary timed out after 3s while this test ran".into()
        )
    );
    // A test that fails only among the others: said so, still failed.
    assert_eq!(
        status_and_reason(test_record(&summary, "fake__mess", "gpu::b_fails_after_a")),
        (
            "failed".into(),
            "test failed among the binary's other tests; alone it passed".into()
        )
    );
    // No sanitizer errors: only that test runs again.
    assert_eq!(bundle.log("sanitizer.log").len(), 4);
}

#[test]
fn sanitize_filter_names_the_matching_tests_exactly() {
    if !have_bash_and_awk() {
        return;
    }
    let bundle = SanitizeBundle::new("san-filter", &[("fake__gpu", GPU_AND_CPU)]);
    let (out, summary) = bundle.run(&["sanitize", "filter", "_fails"]);
    assert_eq!(last_line(&out), "0 passed, 1 failed, 0 skipped", "{out:?}");
    assert_eq!(summary["tests"].as_array().unwrap().len(), 1);
    let calls = bundle.log("sanitizer.log");
    assert_eq!(
        calls.len(),
        2,
        "the binary, then the failed test alone: {calls:?}"
    );
    assert!(
        calls[0].ends_with(
            "/bin/fake__gpu --exact gpu::d_fails --ignored --test-threads=1 --nocapture"
        ),
        "{calls:?}"
    );
}

#[test]
fn exclude_leaves_binaries_and_examples_out() {
    if !have_bash_and_awk() {
        return;
    }
    let bundle = SanitizeBundle::new(
        "exclude",
        &[
            ("fake__gpu", GPU_AND_CPU),
            ("fake__nvrtc", "cpu::compiles 0 quiet\n"),
        ],
    );
    // Plain mode: every test of what is left, each in its own process.
    let (out, summary) = bundle.run(&["exclude", "_nvrtc", "exclude", "example"]);
    assert_eq!(last_line(&out), "3 passed, 1 failed, 1 skipped", "{out:?}");
    let tests = summary["tests"].as_array().unwrap();
    assert!(
        tests.iter().all(|t| t["binary"] == "fake__gpu"),
        "{tests:?}"
    );
    assert!(bundle.log("sanitizer.log").is_empty());
    // With filter: both apply.
    let (out, _) = bundle.run(&["filter", "fake__", "exclude", "gpu"]);
    assert_eq!(last_line(&out), "2 passed, 0 failed, 0 skipped", "{out:?}");
    // list shows what a sanitize run would run.
    let out = bundle
        .command(&["sanitize", "list", "exclude", "example"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(last_line(&out), "4 tests", "{stdout}");
    assert!(!stdout.contains("cpu::"), "{stdout}");
}

#[test]
fn jobs_must_be_a_positive_number_and_only_for_sanitize() {
    if !have_bash_and_awk() {
        return;
    }
    let bundle = SanitizeBundle::new("jobs", &[("fake__gpu", GPU_AND_CPU)]);
    for args in [
        &["sanitize", "--jobs", "0"][..],
        &["sanitize", "--jobs=x"],
        &["--jobs", "2"],
    ] {
        let out = bundle.command(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--jobs"),
            "{out:?}"
        );
    }
    // RUCUDA_SANITIZE_JOBS sets the default; one at a time gives the same results.
    let (out, summary) = bundle.run_with(&["sanitize"], &[("RUCUDA_SANITIZE_JOBS", "1")]);
    assert_eq!(last_line(&out), "3 passed, 1 failed, 1 skipped", "{out:?}");
    assert_eq!(summary["tests"].as_array().unwrap().len(), 5);
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 at once"));
}

/// A binary whose tests all skip before any CUDA call: compute-sanitizer exits 255 ("terminated
/// before first instrumented API call"), which is no failure.
#[test]
fn a_binary_that_makes_no_cuda_call_under_the_sanitizer_is_not_a_failure() {
    if !have_bash_and_awk() {
        return;
    }
    let bundle = SanitizeBundle::new(
        "san-nocuda",
        &[(
            "fake__faults",
            "faults::oom 1 skip_nocuda\nfaults::trap 1 skip_nocuda\n",
        )],
    );
    let (out, summary) = bundle.run(&["sanitize", "filter", "fake__faults"]);
    assert_eq!(last_line(&out), "0 passed, 0 failed, 2 skipped", "{out:?}");
    assert_eq!(out.status.code(), Some(0));
    let tests = summary["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 2, "no (whole binary) record: {tests:?}");
}
