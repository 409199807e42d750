//! DLPack for `GPUArray.__dlpack__` and `pycuda.gpuarray.from_dlpack`: a `"dltensor"`
//! capsule over a device pointer (the array kept alive until the consumer's deleter
//! runs), and a consumed capsule (`"dltensor"` or `"dltensor_versioned"`) as a holder
//! that gives the address (`int()`) and calls the producer's deleter when it goes.
//!
//! The structs are DLPack's (`dlpack.h`, ABI 1.x), from rucuda-array's `dlpack::ffi`.

use std::ffi::{c_char, CStr};

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;

use rucuda_array::dlpack::ffi::{
    DLDataType, DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLTensor,
    DLPACK_MAJOR_VERSION,
};

use crate::errors::OrRaise;

const LEGACY: &CStr = c"dltensor";
const VERSIONED: &CStr = c"dltensor_versioned";
const USED_LEGACY: &CStr = c"used_dltensor";
const USED_VERSIONED: &CStr = c"used_dltensor_versioned";
/// What an exported tensor owns: the struct itself first (its address is the tensor's),
/// its shape and strides, and the array it shows.
#[repr(C)]
struct Export {
    managed: DLManagedTensor,
    shape: Vec<i64>,
    strides: Vec<i64>,
    _owner: Py<PyAny>,
}

/// The exported tensor's deleter: frees what [`dlpack_capsule`] boxed, and lets the array
/// go at once (under the GIL, taken if this thread lacks it; after the interpreter has
/// gone, the array's reference is left as it is).
unsafe extern "C" fn delete_export(t: *mut DLManagedTensor) {
    if t.is_null() {
        return;
    }
    // SAFETY: `t` is the first field of the `Export` boxed by `dlpack_capsule`, whose
    // address `manager_ctx` holds; the deleter runs once (DLPack's contract).
    let export = unsafe { Box::from_raw((*t).manager_ctx.cast::<Export>()) };
    let Export { _owner: owner, .. } = *export;
    // SAFETY: a query that is safe to make at any time.
    if unsafe { ffi::Py_IsInitialized() } != 0 {
        Python::with_gil(|_| drop(owner));
    } else {
        std::mem::forget(owner);
    }
}

/// The capsule's destructor: deletes the tensor unless a consumer took it (renamed the
/// capsule).
unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: called by Python on a live capsule, with the GIL held.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, LEGACY.as_ptr()) == 1 {
            let t = ffi::PyCapsule_GetPointer(capsule, LEGACY.as_ptr()).cast::<DLManagedTensor>();
            if let Some(deleter) = t.as_ref().and_then(|t| t.deleter) {
                deleter(t);
            }
        }
    }
}

/// A `"dltensor"` capsule over `ptr` (`shape`, `strides` in elements, DLPack's type
/// `(code, bits)`) on CUDA device `device_id`, keeping `owner` alive until the consumer
/// deletes the tensor (or, unconsumed, the capsule goes).
#[pyfunction]
pub fn dlpack_capsule(
    py: Python<'_>,
    owner: Py<PyAny>,
    ptr: u64,
    shape: Vec<i64>,
    strides: Vec<i64>,
    dtype: (u8, u8),
    device_id: i32,
) -> PyResult<PyObject> {
    if shape.len() != strides.len() || shape.len() > i32::MAX as usize {
        return Err(PyValueError::new_err(format!(
            "dlpack: {} dimensions but {} strides",
            shape.len(),
            strides.len()
        )));
    }
    let mut export = Box::new(Export {
        managed: DLManagedTensor {
            dl_tensor: DLTensor {
                data: std::ptr::without_provenance_mut(ptr as usize),
                device: DLDevice {
                    device_type: DLDeviceType::CUDA,
                    device_id,
                },
                ndim: shape.len() as i32,
                dtype: DLDataType {
                    code: dtype.0,
                    bits: dtype.1,
                    lanes: 1,
                },
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_export),
        },
        shape,
        strides,
        _owner: owner,
    });
    export.managed.dl_tensor.shape = export.shape.as_mut_ptr();
    export.managed.dl_tensor.strides = export.strides.as_mut_ptr();
    let raw = Box::into_raw(export);
    // SAFETY: `raw` is a live box; its first field is the managed tensor.
    unsafe { (*raw).managed.manager_ctx = raw.cast() };
    // SAFETY: the name is static; the destructor frees the box unless consumed.
    let capsule =
        unsafe { ffi::PyCapsule_New(raw.cast(), LEGACY.as_ptr(), Some(capsule_destructor)) };
    if capsule.is_null() {
        // SAFETY: the capsule was not made, so nothing else owns the box.
        unsafe { delete_export(raw.cast()) };
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference just made.
    Ok(unsafe { PyObject::from_owned_ptr(py, capsule) })
}

/// A consumed DLPack tensor: `int()` is its data address; the producer's deleter runs
/// when this goes.
#[pyclass(module = "rucuda._native", frozen)]
pub struct DLPackHolder {
    /// `DLManagedTensor*` or `DLManagedTensorVersioned*`.
    tensor: usize,
    versioned: bool,
    address: u64,
}

// SAFETY: the holder only keeps the tensor to call its deleter once, from whichever
// thread drops it; DLPack deleters may be called from any thread.
unsafe impl Send for DLPackHolder {}
// SAFETY: shared access reads only `address` (a plain integer); the tensor is touched
// only by `Drop`, which has the holder exclusively.
unsafe impl Sync for DLPackHolder {}

impl Drop for DLPackHolder {
    fn drop(&mut self) {
        // SAFETY: the tensor was taken from its capsule once (renamed "used_"), so this
        // is its only owner; its deleter is called once.
        unsafe {
            if self.versioned {
                let t = self.tensor as *mut DLManagedTensorVersioned;
                if let Some(deleter) = (*t).deleter {
                    deleter(t);
                }
            } else {
                let t = self.tensor as *mut DLManagedTensor;
                if let Some(deleter) = (*t).deleter {
                    deleter(t);
                }
            }
        }
    }
}

#[pymethods]
impl DLPackHolder {
    fn __int__(&self) -> u64 {
        self.address
    }

    fn __index__(&self) -> u64 {
        self.address
    }
}

/// What [`dlpack_take`] reads of a tensor: the holder, the shape, the strides in elements
/// (None: row-major), DLPack's type `(code, bits, lanes)` and device `(type, id)`.
type Taken = (
    DLPackHolder,
    Vec<i64>,
    Option<Vec<i64>>,
    (u8, u8, u16),
    (i32, i32),
);

/// Takes the tensor out of a `"dltensor"` or `"dltensor_versioned"` capsule (renaming it
/// `"used_…"`, so that nothing else takes it). A tensor that is not in CUDA device memory
/// is refused, and the capsule left as it was.
#[pyfunction]
pub fn dlpack_take(capsule: &Bound<'_, PyAny>) -> PyResult<Taken> {
    let p = capsule.as_ptr();
    // SAFETY: the capsule API checks the object's type and name itself.
    let (versioned, raw) = unsafe {
        if ffi::PyCapsule_IsValid(p, LEGACY.as_ptr()) == 1 {
            (false, ffi::PyCapsule_GetPointer(p, LEGACY.as_ptr()))
        } else if ffi::PyCapsule_IsValid(p, VERSIONED.as_ptr()) == 1 {
            (true, ffi::PyCapsule_GetPointer(p, VERSIONED.as_ptr()))
        } else {
            return Err(PyTypeError::new_err(
                "from_dlpack: expected an unconsumed \"dltensor\" capsule (one capsule can be \
                 consumed once)",
            ));
        }
    };
    if raw.is_null() {
        return Err(PyValueError::new_err(
            "from_dlpack: the capsule holds no tensor",
        ));
    }
    // SAFETY: a valid capsule of that name holds the struct of that name (DLPack's
    // contract), alive until its deleter runs.
    let t: &DLTensor = unsafe {
        if versioned {
            let v = &*raw.cast::<DLManagedTensorVersioned>();
            if v.version.major != DLPACK_MAJOR_VERSION {
                return Err(PyBufferError::new_err(format!(
                    "from_dlpack: DLPack version {}.{} (1.x is supported)",
                    v.version.major, v.version.minor
                )));
            }
            &v.dl_tensor
        } else {
            &(*raw.cast::<DLManagedTensor>()).dl_tensor
        }
    };
    if t.device.device_type != DLDeviceType::CUDA
        && t.device.device_type != DLDeviceType::CUDA_MANAGED
    {
        return Err(PyBufferError::new_err(format!(
            "from_dlpack: the tensor is on DLPack device type {}, not in CUDA memory",
            t.device.device_type.0
        )));
    }
    let ndim = usize::try_from(t.ndim)
        .map_err(|_| PyValueError::new_err(format!("from_dlpack: ndim {}", t.ndim)))?;
    // SAFETY: DLPack's shape (and strides, when not null) hold ndim entries.
    let (shape, strides) = unsafe {
        let shape = if ndim == 0 {
            Vec::new()
        } else {
            std::slice::from_raw_parts(t.shape, ndim).to_vec()
        };
        let strides = (!t.strides.is_null() && ndim > 0)
            .then(|| std::slice::from_raw_parts(t.strides, ndim).to_vec());
        (shape, strides)
    };
    let address = (t.data as u64).wrapping_add(t.byte_offset);
    let dtype = (t.dtype.code, t.dtype.bits, t.dtype.lanes);
    let device = (t.device.device_type.0, t.device.device_id);
    let used: *const c_char = if versioned {
        USED_VERSIONED.as_ptr()
    } else {
        USED_LEGACY.as_ptr()
    };
    // SAFETY: renaming a valid capsule; the name is static.
    if unsafe { ffi::PyCapsule_SetName(p, used) } != 0 {
        return Err(PyErr::fetch(capsule.py()));
    }
    Ok((
        DLPackHolder {
            tensor: raw as usize,
            versioned,
            address,
        },
        shape,
        strides,
        dtype,
        device,
    ))
}

/// The CUDA device ordinal of memory `gpudata` (a `DeviceAllocation`: its context's
/// device; anything else: the current context's device).
#[pyfunction]
pub fn dlpack_device_id(gpudata: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(a) = gpudata.downcast::<crate::memory::DeviceAllocation>() {
        if let Some(ordinal) = a.borrow().device_ordinal() {
            return Ok(ordinal);
        }
    }
    Ok(crate::context::current()?.device().ordinal())
}

/// Orders the consumer's `stream` (DLPack's `stream` argument) after the work queued on
/// the legacy default stream, where GPUArrays work: nothing for None, 1 (the legacy
/// stream itself) and -1 (no ordering asked); otherwise an event recorded on the legacy
/// stream that `stream` waits for (2: the per-thread default stream).
#[pyfunction]
#[pyo3(signature = (stream = None))]
pub fn dlpack_order(stream: Option<i64>) -> PyResult<()> {
    let handle = match stream {
        None | Some(1) | Some(-1) => return Ok(()),
        Some(s) if s < -1 || s == 0 => {
            return Err(PyValueError::new_err(format!(
                "__dlpack__: stream {s} is not a CUDA stream for DLPack (None or 1: the legacy \
                 default stream, 2: the per-thread one, -1: no ordering, else a stream handle)"
            )))
        }
        Some(s) => s as usize,
    };
    let ctx = crate::context::current()?;
    crate::context::with_pushed(&ctx, || -> rucuda_driver::Result<()> {
        let done = rucuda_driver::Event::new(&ctx, rucuda_driver::EventFlags::DISABLE_TIMING)?;
        done.record(&rucuda_driver::Stream::null(&ctx))?;
        // SAFETY: DLPack's contract: `handle` is the consumer's live stream of the current
        // context; the wrapper does not destroy it.
        let consumer = unsafe { rucuda_driver::Stream::from_raw(&ctx, handle as _) };
        consumer.wait_event(&done)
    })
    .or_raise()
}
