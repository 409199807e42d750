//! `run.sh` without the sanitizer: each test in its own process, filter, exclude, list, and
//! `--jobs` (plain runs dealt to workers, and the checks of its value).

use super::*;

#[test]
fn every_test_in_its_own_process_with_pass_fail_skip() {
    if !have_bash() {
        return;
    }
    let bundle = FakeBundle::new("all");
    let (out, summary) = bundle.run(&[]);
    assert_whole_fake_run(&out, &summary);
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
}

/// What every plain run of the whole fake bundle reports: its last line and exit status,
/// the summary's counts, and the kept failure with its output tail.
fn assert_whole_fake_run(out: &std::process::Output, summary: &serde_json::Value) {
    assert_eq!(last_line(out), "2 passed, 1 failed, 1 skipped", "{out:?}");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        (&summary["passed"], &summary["failed"], &summary["skipped"]),
        (&2.into(), &1.into(), &1.into())
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("---- FAILED fake__tests gpu::fails"),
        "the kept failure is reported: {stdout}"
    );
    assert!(stdout.contains("boom"), "with its output tail: {stdout}");
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
fn jobs_must_be_a_positive_number() {
    if !have_bash_and_awk() {
        return;
    }
    let bundle = SanitizeBundle::new("jobs", &[("fake__gpu", GPU_AND_CPU)]);
    for args in [
        &["sanitize", "--jobs", "0"][..],
        &["sanitize", "--jobs=x"],
        &["--jobs", "0"],
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

#[test]
fn a_plain_run_dealt_to_workers_gives_the_same_results_and_report() {
    if !have_bash() {
        return;
    }
    for (args, env) in [
        (&["--jobs", "3"][..], &[][..]),
        (&[][..], &[("RUCUDA_TEST_JOBS", "2")][..]),
    ] {
        let bundle = FakeBundle::new("jobs");
        let (out, summary) = bundle.run_with(args, env);
        assert_whole_fake_run(&out, &summary);
        let mut names: Vec<&str> = summary["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        names.sort_unstable();
        assert_eq!(
            names,
            ["(example) --say hi", "gpu::fails", "gpu::skips", "passes"],
            "every test once: {summary}"
        );
    }
}

#[test]
fn out_of_memory_tests_run_alone_after_the_workers() {
    if !have_bash() {
        return;
    }
    let bundle = FakeBundle::new("alone");
    let marks = bundle.dir.join("marks");
    fs::create_dir_all(&marks).unwrap();
    let (out, summary) =
        bundle.run_with(&["--jobs", "3"], &[("FAKE_MARKS", marks.to_str().unwrap())]);
    let alone: Vec<&serde_json::Value> = summary["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] == "gpu::out_of_memory_alone")
        .collect();
    assert_eq!(alone.len(), 1, "it ran once: {summary}");
    assert_eq!(
        alone[0]["status"], "passed",
        "after the others, without RUCUDA_TEST_SHARED_GPU: {out:?}"
    );
    assert_eq!(last_line(&out), "3 passed, 1 failed, 1 skipped", "{out:?}");
}
