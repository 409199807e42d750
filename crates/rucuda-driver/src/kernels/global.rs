//! [`DeviceGlobal`]: a module's `__device__` or `__constant__` variable as a device
//! region (PyCUDA's `module.get_global(name)`, which returns its address and size, then
//! `memcpy_htod(ptr, data)`). Every copy to or from it goes through the module's use log
//! like any device memory; typed reads and writes check the size.

use rucuda_driver_sys::CUdeviceptr;

use crate::error::{Error, Result};
use crate::kernels::module::Module;
use crate::memory::device_buffer::{DeviceView, DeviceViewMut};
use crate::memory::tracking::{DevicePtr, DeviceRange};
use crate::memory::{from_device, memcpy_htod, memcpy_htod_async, PageLockedHost};
use crate::repr::{byte_size, DeviceRepr};
use crate::streams::stream::Stream;

/// A global variable of a module (`__device__` or `__constant__`): device memory that
/// keeps its module loaded, read and written like a buffer (PyCUDA's `get_global`).
///
/// Copies to and from it ([`write`](Self::write), [`read`](Self::read),
/// [`write_async`](Self::write_async), or [`memcpy_htod`](crate::memcpy_htod) and the
/// other copies, since it is a [`DevicePtrMut`](crate::DevicePtrMut)) record their use
/// in the log that all globals of its module share, so they are ordered after each
/// other and after work that used the global through a copy or a view on any stream.
///
/// Kernels of the module read and write its globals by name, not through an argument:
/// no launch records that use. Writing a global while a kernel that reads it may still
/// run on another stream is a data race the launch's `unsafe` contract forbids ("every
/// buffer it touches must stay unaliased"); queue the write and the launch on one
/// stream, or synchronize, as with PyCUDA.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// # let module = Module::load_data(&ctx, b"")?;
/// // __constant__ float coefficients[4];
/// let mut coeffs = module.global("coefficients")?;
/// coeffs.write(&[1.0f32, 2.0, 3.0, 4.0])?;       // 16 bytes: sizes must match
/// assert!(coeffs.write(&[1.0f64]).is_err());      // 8 bytes: a typed error
/// assert_eq!(coeffs.read::<f32>()?, [1.0, 2.0, 3.0, 4.0]);
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct DeviceGlobal {
    ptr: CUdeviceptr,
    bytes: usize,
    module: Module,
    name: String,
}

impl DeviceGlobal {
    pub(crate) fn new(ptr: CUdeviceptr, bytes: usize, module: Module, name: &str) -> Self {
        DeviceGlobal {
            ptr,
            bytes,
            module,
            name: name.to_string(),
        }
    }

    /// The size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The variable's name in its module.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The module it belongs to.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The number of `T` it holds; an error when its size is not a whole number of `T`
    /// or its address is not aligned for `T`.
    pub fn len_of<T: DeviceRepr>(&self) -> Result<usize> {
        let size = std::mem::size_of::<T>();
        if size == 0 || self.bytes % size != 0 {
            return Err(Error::invalid(format!(
                "global `{}` has {} bytes, not a whole number of {} ({size} bytes)",
                self.name,
                self.bytes,
                T::C_TYPE
            )));
        }
        if self.ptr % std::mem::align_of::<T>() as u64 != 0 {
            return Err(Error::invalid(format!(
                "global `{}` at {:#x} is not aligned for {} ({} bytes)",
                self.name,
                self.ptr,
                T::C_TYPE,
                std::mem::align_of::<T>()
            )));
        }
        Ok(self.bytes / size)
    }

    /// Checks that `len` elements of `T` fill the global exactly.
    fn check_fill<T: DeviceRepr>(&self, what: &str, len: usize) -> Result<()> {
        let bytes = byte_size::<T>(len)?;
        if bytes != self.bytes {
            return Err(Error::invalid(format!(
                "{what}: global `{}` has {} bytes, the host data {len} {} ({bytes} bytes)",
                self.name,
                self.bytes,
                T::C_TYPE
            )));
        }
        Ok(())
    }

    /// Copies `data` into the global, synchronously (PyCUDA's
    /// `memcpy_htod(module.get_global(name)[0], data)`); `data` must fill it exactly. The
    /// copy waits for earlier recorded uses of the module's globals and has finished when
    /// this returns.
    pub fn write<T: DeviceRepr>(&mut self, data: &[T]) -> Result<()> {
        self.check_fill::<T>("DeviceGlobal::write", data.len())?;
        let ctx = self.module.inner.ctx.clone();
        memcpy_htod(&ctx, self, data)
    }

    /// Queues a copy of page-locked `data` into the global on `stream` (PyCUDA's
    /// `memcpy_htod_async` to the global's address); `data` must fill it exactly. Host
    /// writes to `data` wait until the copy has read it.
    pub fn write_async<T: DeviceRepr>(
        &mut self,
        data: &impl PageLockedHost<T>,
        stream: &Stream,
    ) -> Result<()> {
        self.check_fill::<T>("DeviceGlobal::write_async", data.elements())?;
        memcpy_htod_async(self, data, stream)
    }

    /// The global's contents as `T`s, copied synchronously (PyCUDA's `memcpy_dtoh`).
    pub fn read<T: DeviceRepr>(&self) -> Result<Vec<T>> {
        let len = self.len_of::<T>()?;
        from_device(&self.module.inner.ctx, self, len)
    }

    /// The global as a read-only view of `T`s (for copies and kernel arguments), sharing
    /// the module's log.
    pub fn view<T: DeviceRepr>(&self) -> Result<DeviceView<'_, T>> {
        let len = self.len_of::<T>()?;
        // SAFETY: the range holds `len` aligned `T`s (checked by `len_of`) and lives as
        // long as the module, which `self` keeps loaded and the view borrows.
        Ok(unsafe { DeviceView::from_range(self.device_range(), len) })
    }

    /// The global as a writable view of `T`s (a copy destination or a kernel argument
    /// that writes it), sharing the module's log.
    pub fn view_mut<T: DeviceRepr>(&mut self) -> Result<DeviceViewMut<'_, T>> {
        let len = self.len_of::<T>()?;
        // SAFETY: the range of `view`, over the module `self` keeps loaded and the view
        // borrows mutably; the log is the module's.
        let range = unsafe { DeviceRange::new(self.ptr, self.bytes, &self.module.inner.globals) };
        // SAFETY: as for `view`; device memory has no host access to exclude.
        Ok(unsafe { DeviceViewMut::from_range(range, len) })
    }
}

impl DevicePtr for DeviceGlobal {
    fn device_range(&self) -> DeviceRange<'_> {
        // SAFETY: the global lives as long as its module, which `self` keeps loaded; the
        // module's log is the one every use of its globals goes through.
        unsafe { DeviceRange::new(self.ptr, self.bytes, &self.module.inner.globals) }
    }
}

impl crate::memory::pointer::DevicePtrMut for DeviceGlobal {}
