//! Every rule of the default device, without a GPU: `choose_device` over fake
//! environments (a value for `CUDA_DEVICE`, a temporary home folder) and a fake
//! "try device n" that fails where told to.

use std::ffi::OsStr;
use std::path::Path;

use rucuda_driver::sys::CUresult;
use rucuda_driver::{DriverError, Error, ErrorKind};

use super::{choose_device, DefaultContextError, DeviceOrigin};

/// A temporary home folder, removed on drop.
struct TempHome(tempfile::TempDir);

impl TempHome {
    fn new() -> TempHome {
        let dir = tempfile::Builder::new()
            .prefix("rucuda-default-context-")
            .tempdir()
            .unwrap();
        TempHome(dir)
    }

    /// The home folder with `name` holding `contents`.
    fn with(name: &str, contents: &str) -> TempHome {
        let home = TempHome::new();
        home.write(name, contents);
        home
    }

    fn write(&self, name: &str, contents: &str) {
        std::fs::write(self.0.path().join(name), contents).unwrap();
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn file(&self, name: &str) -> DeviceOrigin {
        DeviceOrigin::File(self.0.path().join(name))
    }
}

fn driver_error(code: CUresult, name: &'static str) -> Error {
    Error::Driver(DriverError {
        code,
        call: "cuCtxCreate_v4",
        name,
        message: "fake".into(),
    })
}

/// Runs the rules with a fake driver of `count` devices of which those in `failing` give
/// no context (out of memory); returns the result and the devices tried, in order.
fn run(
    env: Option<&str>,
    home: Option<&Path>,
    count: usize,
    failing: &[usize],
) -> (Result<usize, DefaultContextError>, Vec<usize>) {
    let mut tried = Vec::new();
    let got = choose_device(env.map(OsStr::new), home, count, |n| {
        tried.push(n);
        if failing.contains(&n) {
            Err(driver_error(
                CUresult::CUDA_ERROR_OUT_OF_MEMORY,
                "CUDA_ERROR_OUT_OF_MEMORY",
            ))
        } else {
            Ok(format!("context on {n}"))
        }
    })
    .map(|(n, ctx)| {
        assert_eq!(ctx, format!("context on {n}"), "what try_device gave");
        n
    });
    (got, tried)
}

/// [`run`] where a device must be chosen: the device and the devices tried.
fn pick(
    env: Option<&str>,
    home: Option<&Path>,
    count: usize,
    failing: &[usize],
) -> (usize, Vec<usize>) {
    let (got, tried) = run(env, home, count, failing);
    match got {
        Ok(n) => (n, tried),
        Err(e) => panic!("no device chosen: {e:?} (tried {tried:?})"),
    }
}

#[test]
fn cuda_device_names_the_device_and_wins_over_the_file() {
    let home = TempHome::with(".cuda-device", "0");
    assert_eq!(pick(Some("2"), Some(home.path()), 4, &[]), (2, vec![2]));
    // White space around the number is allowed (PyCUDA strips it too).
    assert_eq!(pick(Some(" 1\n"), None, 4, &[]), (1, vec![1]));
    // The file is not read at all: one that does not parse does not matter.
    let bad = TempHome::with(".cuda-device", "not a number");
    assert_eq!(pick(Some("0"), Some(bad.path()), 1, &[]), (0, vec![0]));
}

#[test]
fn a_cuda_device_that_is_not_a_number_is_a_typed_error() {
    for value in ["zero", "", "-1", "1.0", "0x1", "1 2"] {
        let (got, tried) = run(Some(value), None, 2, &[]);
        match got {
            Err(DefaultContextError::NotADeviceNumber { origin, value: v }) => {
                assert_eq!(origin, DeviceOrigin::EnvVar);
                assert_eq!(v, value);
            }
            other => panic!("CUDA_DEVICE={value:?}: {other:?}"),
        }
        assert!(tried.is_empty(), "no device is tried");
    }
    let e = run(Some("zero"), None, 2, &[]).0.unwrap_err();
    assert_eq!(
        e.to_string(),
        "the environment variable CUDA_DEVICE holds \"zero\", which is not a device number \
         (a non-negative integer)"
    );
    assert_eq!(e.kind(), ErrorKind::Logic);
}

#[test]
fn a_cuda_device_past_the_last_device_is_a_typed_error() {
    let (got, tried) = run(Some("2"), None, 2, &[]);
    let e = got.unwrap_err();
    assert!(
        matches!(
            &e,
            DefaultContextError::NoSuchDevice {
                origin: DeviceOrigin::EnvVar,
                device: 2,
                count: 2
            }
        ),
        "{e:?}"
    );
    assert!(tried.is_empty());
    assert_eq!(
        e.to_string(),
        "the environment variable CUDA_DEVICE names device 2, but only devices 0 to 1 are visible"
    );
    // Larger than any C int: still the same error, not an overflow.
    let (got, _) = run(Some("99999999999999"), None, 1, &[]);
    assert!(matches!(
        got,
        Err(DefaultContextError::NoSuchDevice {
            device: 99_999_999_999_999,
            count: 1,
            ..
        })
    ));
}

#[test]
fn the_file_is_used_when_cuda_device_is_unset() {
    let home = TempHome::with(".cuda-device", "3\n");
    assert_eq!(pick(None, Some(home.path()), 4, &[]), (3, vec![3]));
    let home = TempHome::with(".cuda-device", "  0  ");
    assert_eq!(pick(None, Some(home.path()), 4, &[]), (0, vec![0]));
}

#[test]
fn pycudas_file_name_is_read_when_the_documented_one_is_absent() {
    // PyCUDA documents `~/.cuda-device`; its code reads `~/.cuda_device`.
    let home = TempHome::with(".cuda_device", "1");
    assert_eq!(pick(None, Some(home.path()), 2, &[]), (1, vec![1]));
    // Both present: the documented name wins.
    home.write(".cuda-device", "0");
    assert_eq!(pick(None, Some(home.path()), 2, &[]), (0, vec![0]));
    // Errors name the file that was read.
    let home = TempHome::with(".cuda_device", "5");
    let e = run(None, Some(home.path()), 2, &[]).0.unwrap_err();
    assert!(
        matches!(&e, DefaultContextError::NoSuchDevice { origin, device: 5, count: 2 } if *origin == home.file(".cuda_device")),
        "{e:?}"
    );
}

#[test]
fn a_file_that_is_not_a_number_is_a_typed_error_naming_the_file_and_value() {
    for contents in ["gpu1\n", "", "\n", "-1", "1,2", "\u{feff}0"] {
        let home = TempHome::with(".cuda-device", contents);
        let (got, tried) = run(None, Some(home.path()), 2, &[]);
        let e = got.unwrap_err();
        match &e {
            DefaultContextError::NotADeviceNumber { origin, value } => {
                assert_eq!(*origin, home.file(".cuda-device"));
                assert_eq!(value, contents);
            }
            other => panic!("{contents:?}: {other:?}"),
        }
        assert!(tried.is_empty(), "no device is tried, no round robin");
        let text = e.to_string();
        let path = home.path().join(".cuda-device");
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains(&format!("{contents:?}")), "{text}");
        assert_eq!(e.kind(), ErrorKind::Logic);
    }
    // Not UTF-8: read lossily, still the same error.
    let home = TempHome::new();
    std::fs::write(home.path().join(".cuda-device"), [0xff, b'1']).unwrap();
    assert!(matches!(
        run(None, Some(home.path()), 2, &[]).0,
        Err(DefaultContextError::NotADeviceNumber { .. })
    ));
}

#[test]
fn a_file_naming_a_device_past_the_last_is_a_typed_error_naming_the_file_and_value() {
    let home = TempHome::with(".cuda-device", "7\n");
    let (got, tried) = run(None, Some(home.path()), 2, &[]);
    let e = got.unwrap_err();
    assert!(
        matches!(&e, DefaultContextError::NoSuchDevice { origin, device: 7, count: 2 } if *origin == home.file(".cuda-device")),
        "{e:?}"
    );
    assert!(tried.is_empty());
    assert_eq!(
        e.to_string(),
        format!(
            "the file {} names device 7, but only devices 0 to 1 are visible",
            home.path().join(".cuda-device").display()
        )
    );
    let e = run(None, Some(home.path()), 1, &[]).0.unwrap_err();
    assert!(
        e.to_string()
            .ends_with("names device 7, but only device 0 is visible"),
        "{e}"
    );
}

#[test]
fn a_file_that_cannot_be_read_is_a_typed_error() {
    let home = TempHome::new();
    std::fs::create_dir(home.path().join(".cuda-device")).unwrap();
    let (got, tried) = run(None, Some(home.path()), 2, &[]);
    match got {
        Err(DefaultContextError::UnreadableFile { path, message }) => {
            assert_eq!(path, home.path().join(".cuda-device"));
            assert!(!message.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert!(tried.is_empty());
}

#[test]
fn without_variable_or_file_the_first_device_that_gives_a_context_is_chosen() {
    let empty = TempHome::new();
    assert_eq!(pick(None, Some(empty.path()), 3, &[]), (0, vec![0]));
    // Device 0 fails: device 1 is chosen, device 2 is not tried.
    assert_eq!(pick(None, Some(empty.path()), 3, &[0]), (1, vec![0, 1]));
    assert_eq!(
        pick(None, Some(empty.path()), 3, &[0, 1]),
        (2, vec![0, 1, 2])
    );
    // No home folder at all: the same.
    assert_eq!(pick(None, None, 2, &[0]), (1, vec![0, 1]));
}

#[test]
fn when_no_device_gives_a_context_the_error_lists_each_failure() {
    let (got, tried) = run(None, None, 3, &[0, 1, 2]);
    assert_eq!(tried, [0, 1, 2]);
    let e = got.unwrap_err();
    match &e {
        DefaultContextError::NoDeviceGaveAContext { failures } => {
            let devices: Vec<usize> = failures.iter().map(|(n, _)| *n).collect();
            assert_eq!(devices, [0, 1, 2]);
            assert!(failures
                .iter()
                .all(|(_, e)| e.code() == Some(CUresult::CUDA_ERROR_OUT_OF_MEMORY)));
        }
        other => panic!("{other:?}"),
    }
    let text = e.to_string();
    for n in 0..3 {
        assert!(
            text.contains(&format!(
                "device {n}: cuCtxCreate_v4 failed: CUDA_ERROR_OUT_OF_MEMORY"
            )),
            "{text}"
        );
    }
    assert_eq!(e.kind(), ErrorKind::Memory, "the first failure's kind");
}

#[test]
fn no_device_at_all_is_its_own_error() {
    let home = TempHome::with(".cuda-device", "0");
    for (env, home) in [(None, None), (Some("0"), None), (None, Some(home.path()))] {
        let (got, tried) = run(env, home, 0, &[]);
        assert!(matches!(got, Err(DefaultContextError::NoDevice)), "{got:?}");
        assert!(tried.is_empty());
    }
    let e: Error = DefaultContextError::NoDevice.into();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_NO_DEVICE));
    assert_eq!(e.kind(), ErrorKind::NoDriver);
}

#[test]
fn a_named_device_that_fails_is_not_replaced_by_another() {
    let (got, tried) = run(Some("1"), None, 3, &[1]);
    assert_eq!(tried, [1], "no round robin after the named device fails");
    let e = got.unwrap_err();
    assert!(
        matches!(
            &e,
            DefaultContextError::DeviceFailed {
                device: 1,
                origin: DeviceOrigin::EnvVar,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().starts_with(
        "device 1, named by the environment variable CUDA_DEVICE, gave no context: cuCtxCreate_v4 failed"
    ));
    assert_eq!(e.kind(), ErrorKind::Memory);
    let home = TempHome::with(".cuda-device", "0");
    let (got, tried) = run(None, Some(home.path()), 2, &[0]);
    assert_eq!(tried, [0]);
    assert!(matches!(
        got,
        Err(DefaultContextError::DeviceFailed {
            device: 0,
            origin: DeviceOrigin::File(_),
            ..
        })
    ));
}

#[test]
fn conversion_into_the_driver_error_keeps_codes_and_text() {
    let oom = driver_error(
        CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        "CUDA_ERROR_OUT_OF_MEMORY",
    );
    let e: Error = DefaultContextError::DeviceFailed {
        device: 0,
        origin: DeviceOrigin::EnvVar,
        error: oom.clone(),
    }
    .into();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_OUT_OF_MEMORY));
    let e: Error = DefaultContextError::Driver(oom).into();
    assert_eq!(e.kind(), ErrorKind::Memory);
    let bad = DefaultContextError::NotADeviceNumber {
        origin: DeviceOrigin::EnvVar,
        value: "x".into(),
    };
    let text = bad.to_string();
    let e: Error = bad.into();
    assert!(
        matches!(&e, Error::InvalidArgument(t) if *t == text),
        "{e:?}"
    );
    // `?` from a function returning the driver's error.
    fn uses_question_mark() -> rucuda_driver::Result<()> {
        Err(DefaultContextError::NoDevice)?;
        Ok(())
    }
    assert_eq!(
        uses_question_mark().unwrap_err().kind(),
        ErrorKind::NoDriver
    );
}
