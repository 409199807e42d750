//! GPU tests of DLPack: export and import within rucuda for every element type and
//! layout (no copy: the same device address), the deleter's timing, the refusals, and the
//! round trip with CuPy in one process (`dlpack_gpu/cupy_roundtrip.py` loads the
//! `rucuda-dlpack-fixture` shared library with ctypes beside CuPy).

mod common;

use std::os::raw::c_void;
use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{stream, RandomElement, RandomVec, Rng};
use rucuda_array::dlpack::ffi::{
    DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor,
    DLPACK_FLAG_BITMASK_READ_ONLY,
};
use rucuda_array::dlpack::{dl_data_type, dtype_of};
use rucuda_array::{bf16, f16, Complex, GpuArray, Order, SliceArg};
use rucuda_driver::DevicePtr;

fn element0<T: rucuda_array::Element>(a: &GpuArray<T>) -> u64 {
    a.buffer().device_range().address() + (a.layout().offset() * T::DTYPE.size_bytes()) as u64
}

fn round_trip<T: RandomElement + std::fmt::Debug>(rng: &mut Rng) {
    let s = stream();
    let host: Vec<T> = rng.vec(6 * 7);
    let c = GpuArray::from_shape_slice(&s, &[6, 7], &host).unwrap();
    let f = c.copy_order(Order::F).unwrap();
    let strided = c
        .slice(&[
            SliceArg::stepped(None, None, 2),
            SliceArg::stepped(None, None, -3),
        ])
        .unwrap();
    for (what, a) in [("C", c.view()), ("F", f), ("strided reversed", strided)] {
        let want = a.to_vec().unwrap();
        let t = a.to_dlpack().unwrap();
        // SAFETY: the tensor just made, read only.
        let dl = unsafe { &t.as_ref().dl_tensor };
        assert_eq!(dl.device.device_type, DLDeviceType::CUDA);
        assert_eq!(dl.device.device_id, 0);
        assert_eq!(dtype_of(dl.dtype), Some(T::DTYPE));
        assert_eq!(dl.data as usize as u64, element0(&a), "{what}");
        // SAFETY: the tensor holds ndim strides.
        let strides = unsafe { std::slice::from_raw_parts(dl.strides, a.ndim()) };
        let want_strides: Vec<i64> = a.strides().iter().map(|&v| v as i64).collect();
        assert_eq!(
            strides,
            want_strides.as_slice(),
            "{what}: strides in elements"
        );
        // SAFETY: our own live tensor, handed over once.
        let b = unsafe { GpuArray::<T>::from_dlpack(&s, t) }.unwrap();
        assert_eq!(b.shape(), a.shape());
        assert_eq!(b.strides(), a.strides(), "{what}");
        assert_eq!(element0(&b), element0(&a), "{what}: no copy");
        assert_eq!(b.to_vec().unwrap(), want, "{} {what}", T::DTYPE);
        // The versioned ABI too.
        let v = a.to_dlpack_versioned().unwrap();
        // SAFETY: as above.
        let b = unsafe { GpuArray::<T>::from_dlpack_versioned(&s, v) }.unwrap();
        assert_eq!(b.to_vec().unwrap(), want, "{} {what} versioned", T::DTYPE);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_dtype_and_layout_round_trips_without_a_copy() {
    let mut rng = Rng::fresh();
    round_trip::<bool>(&mut rng);
    round_trip::<i8>(&mut rng);
    round_trip::<i16>(&mut rng);
    round_trip::<i32>(&mut rng);
    round_trip::<i64>(&mut rng);
    round_trip::<u8>(&mut rng);
    round_trip::<u16>(&mut rng);
    round_trip::<u32>(&mut rng);
    round_trip::<u64>(&mut rng);
    round_trip::<f16>(&mut rng);
    round_trip::<bf16>(&mut rng);
    round_trip::<f32>(&mut rng);
    round_trip::<f64>(&mut rng);
    round_trip::<Complex<f32>>(&mut rng);
    round_trip::<Complex<f64>>(&mut rng);
}

#[test]
#[ignore = "needs a CUDA device"]
fn writes_through_an_import_reach_the_exporter_and_the_export_keeps_memory_alive() {
    let s = stream();
    let mut rng = Rng::fresh();
    let host: Vec<f32> = rng.vec(1000);
    let a = GpuArray::from_slice(&s, &host).unwrap();
    let t = a.to_dlpack().unwrap();
    let address = element0(&a);
    drop(a); // the tensor's view keeps the memory
             // SAFETY: our own live tensor, handed over once.
    let mut b = unsafe { GpuArray::<f32>::from_dlpack(&s, t) }.unwrap();
    assert_eq!(element0(&b), address);
    assert_eq!(b.to_vec().unwrap(), host);
    b.binary_assign(rucuda_array::ops::BinaryOp::Add, 1.0f32)
        .unwrap();
    let want: Vec<f32> = host.iter().map(|x| x + 1.0).collect();
    assert_eq!(b.to_vec().unwrap(), want);
    drop(b); // calls the deleter, which drops the last view and frees the memory
    s.synchronize().unwrap();
    common::ctx().check_deferred_errors().unwrap();
}

static DELETED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_deletion(_: *mut DLManagedTensor) {
    DELETED.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn count_versioned_deletion(_: *mut DLManagedTensorVersioned) {
    DELETED.fetch_add(1, Ordering::SeqCst);
}

/// A hand-made tensor over `a`'s elements (C-contiguous, no strides).
fn hand_made(a: &GpuArray<f32>, shape: &mut [i64], device: DLDevice) -> DLTensor {
    DLTensor {
        data: element0(a) as usize as *mut c_void,
        device,
        ndim: shape.len() as i32,
        dtype: dl_data_type(rucuda_array::DType::F32).unwrap(),
        shape: shape.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn refused_imports_are_typed_errors_and_still_call_the_deleter_once() {
    let s = stream();
    let a = GpuArray::<f32>::arange(&s, 0.0, 12.0, 1.0).unwrap();
    let cuda = DLDevice {
        device_type: DLDeviceType::CUDA,
        device_id: 0,
    };
    let mut shape = [3i64, 4];
    let before = DELETED.load(Ordering::SeqCst);
    let mut managed = DLManagedTensor {
        dl_tensor: hand_made(&a, &mut shape, cuda),
        manager_ctx: std::ptr::null_mut(),
        deleter: Some(count_deletion),
    };
    // The right type: imported, row-major without strides, deleted when dropped.
    // SAFETY: a tensor over `a`'s live memory, which outlives the import.
    let b = unsafe { GpuArray::<f32>::from_dlpack(&s, NonNull::from(&mut managed)) }.unwrap();
    assert_eq!(b.shape(), &[3, 4]);
    assert!(b.is_c_contiguous());
    assert_eq!(b.to_vec().unwrap(), a.to_vec().unwrap());
    assert_eq!(DELETED.load(Ordering::SeqCst), before);
    drop(b);
    assert_eq!(DELETED.load(Ordering::SeqCst), before + 1);
    // The wrong element type.
    // SAFETY: as above.
    let e = unsafe { GpuArray::<i32>::from_dlpack(&s, NonNull::from(&mut managed)) }.unwrap_err();
    assert!(
        e.to_string().contains("float32") && e.to_string().contains("as int32"),
        "{e}"
    );
    assert_eq!(DELETED.load(Ordering::SeqCst), before + 2);
    // Host memory.
    managed.dl_tensor.device = DLDevice {
        device_type: DLDeviceType::CPU,
        device_id: 0,
    };
    // SAFETY: as above (refused before any use).
    let e = unsafe { GpuArray::<f32>::from_dlpack(&s, NonNull::from(&mut managed)) }.unwrap_err();
    assert!(e.to_string().contains("device type 1"), "{e}");
    assert_eq!(DELETED.load(Ordering::SeqCst), before + 3);
    // A read-only versioned tensor, and another major version.
    let mut versioned = DLManagedTensorVersioned {
        version: DLPackVersion { major: 1, minor: 0 },
        manager_ctx: std::ptr::null_mut(),
        deleter: Some(count_versioned_deletion),
        flags: DLPACK_FLAG_BITMASK_READ_ONLY,
        dl_tensor: hand_made(&a, &mut shape, cuda),
    };
    // SAFETY: as above.
    let e = unsafe { GpuArray::<f32>::from_dlpack_versioned(&s, NonNull::from(&mut versioned)) }
        .unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");
    versioned.flags = 0;
    versioned.version.major = 2;
    // SAFETY: as above.
    let e = unsafe { GpuArray::<f32>::from_dlpack_versioned(&s, NonNull::from(&mut versioned)) }
        .unwrap_err();
    assert!(e.to_string().contains("2.0"), "{e}");
    assert_eq!(DELETED.load(Ordering::SeqCst), before + 5);
}

/// The shared library the CuPy script loads: `RUCUDA_DLPACK_FIXTURE`, else the bundle's
/// `cdylib/` beside `bin/`, else cargo's target folder (`target/<profile>/`).
fn fixture() -> Option<PathBuf> {
    const NAME: &str = "librucuda_dlpack_fixture.so";
    if let Some(p) = std::env::var_os("RUCUDA_DLPACK_FIXTURE") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [
        dir.join("../cdylib").join(NAME),
        dir.join("..").join(NAME),
        dir.join(NAME),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

#[test]
#[ignore = "needs a CUDA device"]
fn cupy_round_trip_in_one_process_without_copies() {
    let Some(lib) = fixture() else {
        rucuda_testkit::skip_test!(
            "librucuda_dlpack_fixture.so not found (built into the bundle by `cargo xtask \
             gpu-test`; or `cargo build -p rucuda-dlpack-fixture`, or set RUCUDA_DLPACK_FIXTURE)"
        );
    };
    let script = include_str!("dlpack_gpu/cupy_roundtrip.py");
    let out = match std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&lib)
        .output()
    {
        Ok(out) => out,
        Err(e) => rucuda_testkit::skip_test!("python3 could not be started: {e}"),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    if let Some(line) = stdout.lines().find(|l| l.starts_with("RUCUDA_SKIPPED:")) {
        rucuda_testkit::skip_test!("{}", line.trim_start_matches("RUCUDA_SKIPPED:").trim());
    }
    assert!(
        out.status.success(),
        "the CuPy round trip failed ({})",
        out.status
    );
    assert!(stdout.contains("all DLPack round-trip checks passed"));
}
