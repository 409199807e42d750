//! Running one test of the current test binary again, in a child process.

use std::process::Command;

/// A command that runs exactly the test `name` of this test binary in a new process: GPU
/// (ignored) tests included, output not captured, one thread. Add the environment the child
/// reads, then run it.
///
/// ```no_run
/// let out = rucuda_testkit::child_test("ipc_child")
///     .env("MY_HANDLE", "00ff")
///     .output()
///     .unwrap();
/// assert!(out.status.success());
/// ```
///
/// # Panics
/// When the path of the current executable cannot be read (test code only).
pub fn child_test(name: &str) -> Command {
    let exe = std::env::current_exe().expect("the path of the test executable");
    let mut cmd = Command::new(exe);
    cmd.args([
        "--exact",
        name,
        "--include-ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    cmd
}
