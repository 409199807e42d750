//! The raw driver calls the bench makes, through rucuda-driver-sys alone: the device and its
//! primary context, and small owners (device memory, pinned memory, stream, event, module)
//! that free what they hold. This is the `raw` floor, so nothing here may cost more than the
//! call it wraps: the timed loops fetch their function pointers once and call them directly.

use std::ffi::{c_void, CStr, CString};
use std::fmt;
use std::ptr;

use rucuda_driver_sys::{
    CUcontext, CUdevice, CUdevice_attribute, CUdeviceptr, CUevent, CUevent_flags, CUfunction,
    CUmodule, CUresult, CUstream, CUstream_flags, Driver,
};

/// A failure, as a message naming the call that failed.
#[derive(Debug)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::error::Error> From<E> for Error {
    fn from(e: E) -> Self {
        Error(e.to_string())
    }
}

impl Error {
    /// The start of a skipped case's message.
    pub const SKIP_PREFIX: &'static str = "skipped: ";

    /// A case that cannot run here (one GPU for a multi-GPU case, no NCCL): reported as
    /// skipped, not as a failure.
    pub fn skipped(reason: impl fmt::Display) -> Error {
        Error(format!("{}{reason}", Error::SKIP_PREFIX))
    }

    /// Whether this is a skip rather than a failure.
    pub fn is_skip(&self) -> bool {
        self.0.starts_with(Error::SKIP_PREFIX)
    }
}

/// The bench's result type.
pub type Result<T> = std::result::Result<T, Error>;

/// `Ok` for `CUDA_SUCCESS`, else an error with the call and the driver's name for the code.
pub fn check(call: &str, code: CUresult) -> Result<()> {
    if code == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error(format!(
            "{call} failed: {} ({})",
            error_name(code),
            code.0
        )))
    }
}

fn error_name(code: CUresult) -> String {
    let name = Driver::get()
        .ok()
        .and_then(|d| d.cuGetErrorName().ok())
        .and_then(|get| {
            let mut text: *const std::ffi::c_char = ptr::null();
            // SAFETY: cuGetErrorName writes a pointer to a static NUL-terminated string, or
            // leaves it null for an unknown code.
            let found = unsafe { get(code, &mut text) } == CUresult::CUDA_SUCCESS;
            if !found || text.is_null() {
                return None;
            }
            // SAFETY: non-null means a static C string owned by the driver.
            let text = unsafe { CStr::from_ptr(text) };
            Some(text.to_string_lossy().into_owned())
        });
    name.unwrap_or_else(|| "unknown error".to_owned())
}

/// One device with its primary context current on this thread.
pub struct Gpu {
    /// The loaded driver.
    pub driver: &'static Driver,
    /// The device handle.
    pub device: CUdevice,
    /// Its primary context, retained until drop.
    pub context: CUcontext,
    /// `cuDeviceGetName`.
    pub name: String,
}

impl Gpu {
    /// Loads the driver, retains device `ordinal`'s primary context and makes it current.
    pub fn open(ordinal: i32) -> Result<Gpu> {
        let driver = Driver::get().map_err(|e| Error(format!("no CUDA driver found: {e}")))?;
        let init = driver.cuInit()?;
        // SAFETY: cuInit takes a flags word that must be 0.
        check("cuInit", unsafe { init(0) })?;
        let mut count = 0;
        let get_count = driver.cuDeviceGetCount()?;
        // SAFETY: writes one int through a valid pointer.
        check("cuDeviceGetCount", unsafe { get_count(&mut count) })?;
        if ordinal < 0 || ordinal >= count {
            return Err(Error(format!(
                "device {ordinal} not found: the driver sees {count} device(s)"
            )));
        }
        let mut device: CUdevice = 0;
        let get = driver.cuDeviceGet()?;
        // SAFETY: writes one device handle; the ordinal is in range.
        check("cuDeviceGet", unsafe { get(&mut device, ordinal) })?;
        let mut name = [0 as std::ffi::c_char; 256];
        let get_name = driver.cuDeviceGetName()?;
        // SAFETY: the buffer holds 256 chars and the driver writes at most that, NUL included.
        check("cuDeviceGetName", unsafe {
            get_name(name.as_mut_ptr(), 256, device)
        })?;
        // SAFETY: the driver wrote a NUL-terminated string into the zeroed buffer.
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let mut context: CUcontext = ptr::null_mut();
        let retain = driver.cuDevicePrimaryCtxRetain()?;
        // SAFETY: writes the primary context of a valid device; released in Drop.
        check("cuDevicePrimaryCtxRetain", unsafe {
            retain(&mut context, device)
        })?;
        let gpu = Gpu {
            driver,
            device,
            context,
            name,
        };
        let set_current = driver.cuCtxSetCurrent()?;
        // SAFETY: the context was just retained and stays alive while `gpu` does.
        check("cuCtxSetCurrent", unsafe { set_current(gpu.context) })?;
        Ok(gpu)
    }

    /// Waits for all work of the context (`cuCtxSynchronize`).
    pub fn synchronize(&self) -> Result<()> {
        let sync = self.driver.cuCtxSynchronize()?;
        // SAFETY: the context is current on this thread.
        check("cuCtxSynchronize", unsafe { sync() })
    }

    /// A device attribute (`cuDeviceGetAttribute`).
    pub fn attribute(&self, attribute: CUdevice_attribute) -> Result<i32> {
        let mut value = 0;
        let get = self.driver.cuDeviceGetAttribute()?;
        // SAFETY: writes one int for a valid device handle.
        check("cuDeviceGetAttribute", unsafe {
            get(&mut value, attribute, self.device)
        })?;
        Ok(value)
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        if let Ok(release) = self.driver.cuDevicePrimaryCtxRelease() {
            // SAFETY: balances the retain in `open`; every owner below was dropped before
            // (they are locals of the cases, which end before the Gpu does).
            let _ = unsafe { release(self.device) };
        }
    }
}

/// Device memory from `cuMemAlloc`, freed on drop.
pub struct DeviceMemory {
    driver: &'static Driver,
    /// The device address.
    pub ptr: CUdeviceptr,
}

impl DeviceMemory {
    /// Allocates `bytes` bytes (uninitialised).
    pub fn new(gpu: &Gpu, bytes: usize) -> Result<Self> {
        let alloc = gpu.driver.cuMemAlloc_v2()?;
        let mut ptr = 0;
        // SAFETY: writes one device address; the context is current.
        check("cuMemAlloc", unsafe { alloc(&mut ptr, bytes) })?;
        Ok(Self {
            driver: gpu.driver,
            ptr,
        })
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        if let Ok(free) = self.driver.cuMemFree_v2() {
            // SAFETY: the address came from cuMemAlloc and is freed once.
            let _ = unsafe { free(self.ptr) };
        }
    }
}

/// Page-locked host memory from `cuMemHostAlloc`, filled with a byte, freed on drop.
pub struct PinnedHost {
    driver: &'static Driver,
    ptr: *mut c_void,
}

impl PinnedHost {
    /// Allocates `bytes` bytes of pinned memory, every byte set to `fill`.
    pub fn new(gpu: &Gpu, bytes: usize, fill: u8) -> Result<Self> {
        let alloc = gpu.driver.cuMemHostAlloc()?;
        let mut ptr = ptr::null_mut();
        // SAFETY: writes one host pointer; flags 0 is plain pinned memory.
        check("cuMemHostAlloc", unsafe { alloc(&mut ptr, bytes, 0) })?;
        // SAFETY: the allocation holds `bytes` writable bytes.
        unsafe { ptr::write_bytes(ptr.cast::<u8>(), fill, bytes) };
        Ok(Self {
            driver: gpu.driver,
            ptr,
        })
    }

    /// The host address.
    pub fn ptr(&self) -> *mut c_void {
        self.ptr
    }
}

impl Drop for PinnedHost {
    fn drop(&mut self) {
        if let Ok(free) = self.driver.cuMemFreeHost() {
            // SAFETY: the pointer came from cuMemHostAlloc and is freed once.
            let _ = unsafe { free(self.ptr) };
        }
    }
}

/// A non-blocking stream, destroyed on drop.
pub struct Stream {
    driver: &'static Driver,
    /// The stream handle.
    pub raw: CUstream,
}

impl Stream {
    /// `cuStreamCreate(CU_STREAM_NON_BLOCKING)`.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let create = gpu.driver.cuStreamCreate()?;
        let mut raw = ptr::null_mut();
        // SAFETY: writes one stream handle; the context is current.
        check("cuStreamCreate", unsafe {
            create(&mut raw, CUstream_flags::CU_STREAM_NON_BLOCKING.0)
        })?;
        Ok(Self {
            driver: gpu.driver,
            raw,
        })
    }

    /// Waits for the stream's work.
    pub fn synchronize(&self) -> Result<()> {
        let sync = self.driver.cuStreamSynchronize()?;
        // SAFETY: the stream is alive.
        check("cuStreamSynchronize", unsafe { sync(self.raw) })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Ok(destroy) = self.driver.cuStreamDestroy_v2() {
            // SAFETY: the stream came from cuStreamCreate and is destroyed once.
            let _ = unsafe { destroy(self.raw) };
        }
    }
}

/// A timing event, destroyed on drop.
pub struct Event {
    driver: &'static Driver,
    raw: CUevent,
}

impl Event {
    /// `cuEventCreate(CU_EVENT_DEFAULT)`: an event that records time.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let create = gpu.driver.cuEventCreate()?;
        let mut raw = ptr::null_mut();
        // SAFETY: writes one event handle; the context is current.
        check("cuEventCreate", unsafe {
            create(&mut raw, CUevent_flags::CU_EVENT_DEFAULT.0)
        })?;
        Ok(Self {
            driver: gpu.driver,
            raw,
        })
    }

    /// Records the event on `stream`.
    pub fn record(&self, stream: &Stream) -> Result<()> {
        let record = self.driver.cuEventRecord()?;
        // SAFETY: event and stream are alive and belong to the current context.
        check("cuEventRecord", unsafe { record(self.raw, stream.raw) })
    }

    /// Waits until the event has completed.
    pub fn synchronize(&self) -> Result<()> {
        let sync = self.driver.cuEventSynchronize()?;
        // SAFETY: the event is alive.
        check("cuEventSynchronize", unsafe { sync(self.raw) })
    }

    /// Milliseconds between `self` and a later event (both completed).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f64> {
        let elapsed = self.driver.cuEventElapsedTime()?;
        let mut ms = 0f32;
        // SAFETY: writes one float; both events are alive and were recorded.
        check("cuEventElapsedTime", unsafe {
            elapsed(&mut ms, self.raw, end.raw)
        })?;
        Ok(f64::from(ms))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if let Ok(destroy) = self.driver.cuEventDestroy_v2() {
            // SAFETY: the event came from cuEventCreate and is destroyed once.
            let _ = unsafe { destroy(self.raw) };
        }
    }
}

/// A module loaded from PTX or a cubin image, unloaded on drop.
pub struct Module {
    driver: &'static Driver,
    raw: CUmodule,
}

impl Module {
    /// `cuModuleLoadData` of a PTX text.
    pub fn load_ptx(gpu: &Gpu, ptx: &str) -> Result<Self> {
        let image = CString::new(ptx).map_err(|_| Error("PTX text contains a NUL byte".into()))?;
        let load = gpu.driver.cuModuleLoadData()?;
        let mut raw = ptr::null_mut();
        // SAFETY: the image is a NUL-terminated PTX text that outlives the call.
        check("cuModuleLoadData", unsafe {
            load(&mut raw, image.as_ptr().cast())
        })?;
        Ok(Self {
            driver: gpu.driver,
            raw,
        })
    }

    /// A kernel of the module, valid while the module is.
    pub fn function(&self, name: &str) -> Result<CUfunction> {
        let name_c =
            CString::new(name).map_err(|_| Error("kernel name contains a NUL byte".into()))?;
        let get = self.driver.cuModuleGetFunction()?;
        let mut function = ptr::null_mut();
        // SAFETY: the module is loaded; the name is a NUL-terminated string.
        check("cuModuleGetFunction", unsafe {
            get(&mut function, self.raw, name_c.as_ptr())
        })
        .map_err(|e| Error(format!("{e} (kernel {name})")))?;
        Ok(function)
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        if let Ok(unload) = self.driver.cuModuleUnload() {
            // SAFETY: the module came from cuModuleLoadData and is unloaded once.
            let _ = unsafe { unload(self.raw) };
        }
    }
}
