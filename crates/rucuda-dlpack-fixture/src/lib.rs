//! A C-ABI shared library for the DLPack round trip with CuPy (rucuda-array's
//! `tests/dlpack_gpu.rs` runs `tests/dlpack_gpu/cupy_roundtrip.py`, which loads this
//! library with ctypes beside CuPy, in one process, so device pointers mean the same on
//! both sides). Built into the GPU bundle's `cdylib/` folder by `cargo xtask gpu-test`.
//!
//! Every function works on device 0's primary context (CuPy's, through the runtime API)
//! and the legacy default stream; failures print to stderr and return a null pointer or
//! a NaN.

use std::ptr::NonNull;
use std::sync::Mutex;

use rucuda_array::dlpack::ffi::DLManagedTensor;
use rucuda_array::ops::BinaryOp;
use rucuda_array::{ArrayError, GpuArray, Order};
use rucuda_driver::{Device, DevicePtr, Stream};

/// The array last exported, kept so that its elements can be read back through rucuda
/// after CuPy wrote them.
static KEPT: Mutex<Option<GpuArray<f32>>> = Mutex::new(None);

fn stream() -> Result<Stream, ArrayError> {
    let ctx = Device::get(0)?.primary_context()?;
    Ok(Stream::null(&ctx))
}

/// The device address of an array's element 0 (for identity checks).
fn element0(a: &GpuArray<f32>) -> u64 {
    a.buffer().device_range().address() + (a.layout().offset() * 4) as u64
}

fn report<T>(what: &str, r: Result<T, ArrayError>) -> Option<T> {
    r.map_err(|e| eprintln!("rucuda-dlpack-fixture: {what}: {e}"))
        .ok()
}

/// Uploads `rows x cols` f32 values (row-major at `host`) into a new array, in column-major
/// order when `fortran` is nonzero, keeps a handle to it, writes its element 0's device
/// address to `*data_out`, and exports it as a `DLManagedTensor` (null on failure).
///
/// # Safety
/// `host` holds `rows * cols` floats; `data_out` is writable.
#[no_mangle]
pub unsafe extern "C" fn rucuda_fixture_export(
    host: *const f32,
    rows: u64,
    cols: u64,
    fortran: i32,
    data_out: *mut u64,
) -> *mut DLManagedTensor {
    let run = || -> Result<NonNull<DLManagedTensor>, ArrayError> {
        let s = stream()?;
        let n = (rows * cols) as usize;
        // SAFETY: the caller's contract.
        let data = unsafe { std::slice::from_raw_parts(host, n) };
        let c = GpuArray::from_shape_slice(&s, &[rows as usize, cols as usize], data)?;
        let a = if fortran != 0 {
            c.copy_order(Order::F)?
        } else {
            c
        };
        // SAFETY: the caller's contract.
        unsafe { *data_out = element0(&a) };
        let t = a.to_dlpack()?;
        *KEPT.lock().unwrap_or_else(|p| p.into_inner()) = Some(a);
        Ok(t)
    };
    report("export", run()).map_or(std::ptr::null_mut(), NonNull::as_ptr)
}

/// The sum (in f64) of the kept array's elements read through rucuda, then forgets it;
/// NaN when there is none.
#[no_mangle]
pub extern "C" fn rucuda_fixture_kept_sum() -> f64 {
    let kept = KEPT.lock().unwrap_or_else(|p| p.into_inner()).take();
    let Some(a) = kept else {
        return f64::NAN;
    };
    report("kept sum", a.to_vec()).map_or(f64::NAN, |v| v.iter().map(|&x| f64::from(x)).sum())
}

/// Imports a `DLManagedTensor` of f32 (consumed: its deleter runs before this returns),
/// writes its element 0's device address as rucuda sees it to `*data_out` and its
/// F-contiguity to `*fortran_out`, doubles every element in place on the device, and
/// returns the sum (in f64) of the doubled elements read back through rucuda (NaN on
/// failure).
///
/// # Safety
/// `tensor` is a live tensor the caller hands over; the out pointers are writable.
#[no_mangle]
pub unsafe extern "C" fn rucuda_fixture_import_double(
    tensor: *mut DLManagedTensor,
    data_out: *mut u64,
    fortran_out: *mut i32,
) -> f64 {
    let run = || -> Result<f64, ArrayError> {
        let s = stream()?;
        let t = NonNull::new(tensor)
            .ok_or_else(|| ArrayError::InvalidArgument("null tensor".into()))?;
        // SAFETY: the caller's contract.
        let mut a = unsafe { GpuArray::<f32>::from_dlpack(&s, t) }?;
        // SAFETY: the caller's contract.
        unsafe {
            *data_out = element0(&a);
            *fortran_out = i32::from(a.is_f_contiguous() && !a.is_c_contiguous());
        }
        a.binary_assign(BinaryOp::Mul, 2.0f32)?;
        let sum = a.to_vec()?.iter().map(|&x| f64::from(x)).sum();
        s.synchronize()?;
        Ok(sum)
    };
    report("import", run()).unwrap_or(f64::NAN)
}
