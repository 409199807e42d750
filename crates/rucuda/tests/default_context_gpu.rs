//! GPU tests of the default context's device rules through the real driver: the file
//! `~/.cuda-device`, a file naming a device that does not exist, `CUDA_DEVICE` winning
//! over the file, and round robin when neither says.
//!
//! The default context is chosen once per process and the rules read the process's
//! environment, so each test runs its checks in a child process: the test binary again,
//! with `--exact` the same test, `HOME` pointing at a temporary folder and `CUDA_DEVICE`
//! set or removed. The parent only prepares the folder and checks the child passed.
//! (Every rule is also tested without a GPU, by the unit tests of
//! `src/tools/default_context.rs`.)

use std::path::{Path, PathBuf};

use rucuda::driver::{Device, ErrorKind};
use rucuda::tools::{
    autoinit, autoprimaryctx, make_default_context, DefaultContextError, DeviceOrigin,
};

/// Set in the child: the test runs its checks instead of starting a child.
const CHILD_ENV: &str = "RUCUDA_TEST_DEFAULT_CONTEXT_CHILD";
/// What the child prints after its last check.
const CHILD_OK: &str = "default-context child: all checks passed";

/// A temporary home folder, removed on drop.
struct TempHome(tempfile::TempDir);

impl TempHome {
    fn new(test: &str) -> TempHome {
        let dir = tempfile::Builder::new()
            .prefix(&format!("rucuda-default-context-gpu-{test}-"))
            .tempdir()
            .expect("a temporary home folder");
        TempHome(dir)
    }

    fn with_device_file(test: &str, contents: &str) -> TempHome {
        let home = TempHome::new(test);
        std::fs::write(home.0.path().join(".cuda-device"), contents).expect("the device file");
        home
    }
}

/// True in the child process.
fn is_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// Runs `test` again in a child process with `HOME=home` and `CUDA_DEVICE` set to
/// `cuda_device` (removed when `None`), and checks that it ran and passed.
fn run_child(test: &str, home: &Path, cuda_device: Option<&str>) {
    let mut cmd = rucuda_testkit::child_test(test);
    cmd.env(CHILD_ENV, "1").env("HOME", home);
    match cuda_device {
        Some(v) => cmd.env("CUDA_DEVICE", v),
        None => cmd.env_remove("CUDA_DEVICE"),
    };
    let out = cmd.output().expect("the child process starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!(
        "--- child (HOME={}, CUDA_DEVICE={cuda_device:?}) stdout\n{stdout}--- child stderr\n{stderr}---",
        home.display()
    );
    assert!(out.status.success(), "the child failed: {}", out.status);
    assert!(stdout.contains("running 1 test"), "the child ran no test");
    assert!(
        stdout.contains(CHILD_OK),
        "the child did not finish its checks"
    );
}

/// Device `n`, for comparisons.
fn device(n: usize) -> Device {
    Device::get(n).expect("a CUDA device")
}

#[test]
#[ignore = "needs a CUDA device"]
fn default_context_follows_the_cuda_device_file() {
    const NAME: &str = "default_context_follows_the_cuda_device_file";
    if !is_child() {
        let home = TempHome::with_device_file(NAME, "0\n");
        run_child(NAME, home.0.path(), None);
        return;
    }
    assert!(std::env::var_os("CUDA_DEVICE").is_none());
    let auto = autoinit().expect("autoinit with ~/.cuda-device holding 0");
    assert_eq!(auto.device, device(0));
    assert_eq!(auto.context.device(), device(0));
    assert!(!auto.context.is_primary());
    assert!(std::ptr::eq(auto, autoinit().unwrap()), "decided once");
    let made = make_default_context().unwrap();
    assert_eq!(made.device().ordinal(), 0);
    assert!(!made.is_primary());
    let primary = autoprimaryctx().unwrap();
    assert_eq!(primary.device, device(0));
    assert!(primary.context.is_primary());
    // The file is what decides: the default of get_default_device is not used.
    #[allow(deprecated)]
    let d = rucuda::tools::get_default_device(usize::MAX).unwrap();
    assert_eq!(d, device(0));
    println!("{CHILD_OK}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn default_context_reports_a_cuda_device_file_naming_no_device() {
    const NAME: &str = "default_context_reports_a_cuda_device_file_naming_no_device";
    const NO_SUCH_DEVICE: usize = 4096;
    if !is_child() {
        let home = TempHome::with_device_file(NAME, &format!("{NO_SUCH_DEVICE}\n"));
        run_child(NAME, home.0.path(), None);
        // The same for a file that does not hold a number.
        let home = TempHome::with_device_file(&format!("{NAME}-nan"), "gpu0\n");
        run_child(NAME, home.0.path(), None);
        return;
    }
    let path = PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cuda-device");
    let contents = std::fs::read_to_string(&path).unwrap();
    let count = Device::count().unwrap();
    let check = |e: &DefaultContextError| {
        match (contents.trim(), e) {
            (
                "gpu0",
                DefaultContextError::NotADeviceNumber {
                    origin: DeviceOrigin::File(p),
                    value,
                },
            ) => {
                assert_eq!(*p, path);
                assert_eq!(*value, contents);
            }
            (
                _,
                DefaultContextError::NoSuchDevice {
                    origin: DeviceOrigin::File(p),
                    device,
                    count: c,
                },
            ) => {
                assert_eq!(*p, path);
                assert_eq!((*device, *c), (NO_SUCH_DEVICE, count));
            }
            _ => panic!("file {contents:?}: unexpected error {e:?}"),
        }
        let text = e.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains(contents.trim()), "{text}");
        assert_eq!(e.kind(), ErrorKind::Logic);
    };
    check(&make_default_context().unwrap_err());
    // autoinit and autoprimaryctx return the error, and the same one again.
    check(&autoinit().unwrap_err());
    check(&autoinit().unwrap_err());
    check(&autoprimaryctx().unwrap_err());
    #[allow(deprecated)]
    let e = rucuda::tools::get_default_device(0).unwrap_err();
    check(&e);
    // Into the driver's error, through `?`: the text is kept.
    let as_driver: rucuda::driver::Error = make_default_context().unwrap_err().into();
    assert!(as_driver.to_string().contains(&path.display().to_string()));
    println!("{CHILD_OK}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn default_context_cuda_device_wins_over_the_file() {
    const NAME: &str = "default_context_cuda_device_wins_over_the_file";
    if !is_child() {
        // The file names no device; the variable names device 0 and wins.
        let home = TempHome::with_device_file(NAME, "4096\n");
        run_child(NAME, home.0.path(), Some("0"));
        return;
    }
    assert_eq!(std::env::var("CUDA_DEVICE").as_deref(), Ok("0"));
    let auto = autoinit().expect("CUDA_DEVICE=0 wins over the file");
    assert_eq!(auto.device, device(0));
    assert_eq!(make_default_context().unwrap().device(), device(0));
    assert_eq!(autoprimaryctx().unwrap().device, device(0));
    println!("{CHILD_OK}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn default_context_without_variable_or_file_takes_the_first_device_that_works() {
    const NAME: &str = "default_context_without_variable_or_file_takes_the_first_device_that_works";
    if !is_child() {
        let home = TempHome::new(NAME);
        run_child(NAME, home.0.path(), None);
        return;
    }
    let home = PathBuf::from(std::env::var_os("HOME").expect("HOME"));
    assert!(!home.join(".cuda-device").exists() && !home.join(".cuda_device").exists());
    assert!(std::env::var_os("CUDA_DEVICE").is_none());
    let auto = autoinit().expect("round robin finds a device");
    assert_eq!(
        auto.device,
        device(0),
        "device 0 works, so it is the one chosen"
    );
    assert_eq!(make_default_context().unwrap().device(), device(0));
    let primary = autoprimaryctx().unwrap();
    assert_eq!(primary.device, device(0));
    assert!(primary.context.is_primary());
    println!("{CHILD_OK}");
}
