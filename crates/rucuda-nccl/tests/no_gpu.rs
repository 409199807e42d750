//! What needs no GPU: finding NCCL (and saying what to install when it is missing), the
//! unique id's forms, the element-type mapping. These run in CI.

use std::process::Command;
use std::time::Duration;

use rucuda_array::DType;
use rucuda_nccl::{
    DataType, ElementLayout, Error, LoadError, Nccl, ReduceOp, UniqueId, NCCL_ENV, UNIQUE_ID_BYTES,
};

const CHILD_ENV: &str = "RUCUDA_NCCL_TEST_MISSING_CHILD";

/// With `RUCUDA_NCCL` naming a file that does not exist, nothing else is tried and every
/// entry point says what is missing and what to install. Runs in a child process: the
/// library is looked for once per process.
#[test]
fn a_missing_library_is_a_clear_error() {
    let exe = std::env::current_exe().expect("the test executable");
    let out = Command::new(exe)
        .args([
            "--exact",
            "missing_library_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .env(NCCL_ENV, "/nonexistent/rucuda/libnccl.so.2")
        .output()
        .expect("the child starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the child failed");
    assert!(stdout.contains("1 passed"), "the child did not run");
}

/// The child of `a_missing_library_is_a_clear_error`; does nothing on its own.
#[test]
fn missing_library_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let e = Nccl::get().expect_err("no library at that path");
    let LoadError::NotFound(not_found) = &e else {
        panic!("expected NotFound, got {e:?}");
    };
    let tried = &not_found.tried;
    assert_eq!(tried.len(), 1, "only the explicit path is tried: {tried:?}");
    assert_eq!(tried[0].candidate, "/nonexistent/rucuda/libnccl.so.2");
    let text = e.to_string();
    for needle in [
        "libnccl.so.2",
        "pip install nvidia-nccl-cu13",
        NCCL_ENV,
        "/nonexistent/rucuda/libnccl.so.2",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from: {text}");
    }
    // Every entry point reports the same error, typed.
    let id = UniqueId::new().expect_err("no NCCL");
    assert!(matches!(id, Error::NotLoaded(_)), "{id:?}");
    assert!(matches!(rucuda_nccl::version(), Err(Error::NotLoaded(_))));
    assert!(!Nccl::is_present());
    println!("missing library child: {text}");
}

/// Where NCCL is installed (CI installs NVIDIA's wheel) it is found and reports a 2.x
/// version; where it is not, the error names the places searched and the fix.
#[test]
fn the_library_is_found_or_the_error_says_how_to_install_it() {
    match Nccl::get() {
        Ok(nccl) => {
            let v = nccl.version();
            println!("NCCL {v} from {}", nccl.opened_as());
            assert_eq!(v.major, 2, "{v}");
            assert!(v.at_least(2, 10), "bfloat16 and avg need 2.10; found {v}");
            assert!(nccl.ncclGetUniqueId().is_ok());
            assert!(nccl.functions().ncclAllReduce.is_some());
            // The same file opens again on its own.
            if nccl.opened_as().starts_with('/') {
                let again = Nccl::open_path(nccl.opened_as()).expect("opens by path");
                assert_eq!(again.version(), v);
            }
        }
        Err(e) => {
            let text = e.to_string();
            println!("no NCCL here: {text}");
            assert!(text.contains("pip install nvidia-nccl-cu13"), "{text}");
            assert!(text.contains("libnccl.so.2"), "{text}");
        }
    }
}

#[test]
fn unique_ids_travel_as_bytes_hex_json_and_files() {
    let mut bytes = [0u8; UNIQUE_ID_BYTES];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (255 - i) as u8;
    }
    let id = UniqueId::from_bytes(bytes);
    assert_eq!(id.as_bytes(), &bytes);
    assert_eq!(UniqueId::from_slice(&bytes).unwrap(), id);
    let hex = id.to_string();
    assert_eq!(hex.len(), 2 * UNIQUE_ID_BYTES);
    assert!(hex.starts_with("fffefdfc"), "{hex}");
    assert_eq!(hex.parse::<UniqueId>().unwrap(), id);
    assert_eq!(UniqueId::from_hex(&hex.to_uppercase()).unwrap(), id);

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Job {
        id: UniqueId,
        nranks: usize,
    }
    let job = Job { id, nranks: 8 };
    let json = serde_json::to_string(&job).unwrap();
    assert!(json.contains(&hex), "{json}");
    assert_eq!(serde_json::from_str::<Job>(&json).unwrap(), job);

    let dir = tempfile::Builder::new()
        .prefix("rucuda-nccl-idfile-")
        .tempdir()
        .unwrap();
    let path = dir.path().join("id");
    id.save(&path).unwrap();
    assert_eq!(
        UniqueId::load_waiting(&path, Duration::from_secs(1)).unwrap(),
        id
    );
    drop(dir);

    for bad in ["", "00", &hex[1..], &format!("{}g", &hex[1..])] {
        assert!(
            matches!(bad.parse::<UniqueId>(), Err(Error::InvalidArgument(_))),
            "{bad:?}"
        );
    }
}

#[test]
fn every_array_dtype_has_a_wire_type() {
    for dtype in DType::ALL {
        let layout = ElementLayout::of_dtype(dtype);
        let (wire, count) = layout.wire("broadcast", None, 10).unwrap();
        assert_eq!(
            wire.size_bytes() * count,
            10 * dtype.size_bytes(),
            "{dtype}"
        );
        for op in ReduceOp::ALL {
            let reduced = layout.wire("all_reduce", Some(op), 10);
            let expected = match dtype {
                DType::I16 | DType::U16 => false,
                DType::Bool => matches!(op, ReduceOp::Max | ReduceOp::Min),
                DType::C64 | DType::C128 => matches!(op, ReduceOp::Sum | ReduceOp::Avg),
                _ => true,
            };
            assert_eq!(reduced.is_ok(), expected, "{dtype} {op:?}: {reduced:?}");
            if let Err(e) = reduced {
                assert!(
                    matches!(
                        e,
                        Error::UnsupportedType {
                            call: "all_reduce",
                            ..
                        }
                    ),
                    "{e}"
                );
            }
        }
    }
    assert_eq!(
        ElementLayout::of_dtype(DType::F16)
            .wire("all_reduce", Some(ReduceOp::Sum), 3)
            .unwrap(),
        (DataType::Float16, 3)
    );
    assert_eq!(
        ElementLayout::of_dtype(DType::BF16).scalar,
        Some(DataType::Bfloat16)
    );
}

#[test]
fn device_data_types_map_by_their_c_type() {
    use rucuda_driver::vector::{Double2, Float2, Uint4};
    assert_eq!(
        ElementLayout::of_repr::<Float2>().scalar,
        Some(DataType::Float32)
    );
    assert_eq!(ElementLayout::of_repr::<Double2>().lanes, 2);
    assert_eq!(
        ElementLayout::of_repr::<Uint4>().scalar,
        Some(DataType::Uint32)
    );
    assert_eq!(
        ElementLayout::of_repr::<[u8; 3]>()
            .wire("all_reduce", Some(ReduceOp::Min), 2)
            .unwrap(),
        (DataType::Uint8, 6)
    );
    let e = ElementLayout::of_repr::<i16>()
        .wire("reduce_scatter", Some(ReduceOp::Sum), 2)
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("reduce_scatter cannot work on short"),
        "{e}"
    );
}
