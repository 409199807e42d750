//! `run.sh sanitize`: one sanitizer process per binary, its output split into tests, the
//! reruns alone after errors or failures, crashes and timeouts.

use super::*;

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
