//! What an address refers to: pointer attributes (`cuPointerGetAttribute`, PyCUDA's
//! `memory_type` and friends), the [`DevicePtrMut`] marker for writable device memory, and
//! [`ExternalDevicePtr`], a non-owning pointer to memory allocated outside rucuda (PyCUDA's
//! `PointerHolderBase`).

use rucuda_driver_sys::CUdeviceptr;

use crate::error::Result;
use crate::memory::device_buffer::DeviceBuffer;
use crate::memory::device_buffer::DeviceViewMut;
use crate::memory::kernel_arg::DevicePointerArg;
use crate::memory::kernel_arg::{memory_kernel_arg, KernelArg, Param};
use crate::memory::tracking::Access;
use crate::memory::tracking::DevicePtr;
use crate::memory::tracking::DeviceRange;
use crate::repr::DeviceRepr;
use crate::streams::stream::Stream;

/// Device memory that may be written: the destination of copies and memsets.
///
/// Implemented by owned allocations ([`DeviceBuffer`], managed, pitched, IPC memory) and
/// mutable views; taking `&mut` of one proves nobody else holds it on the host side.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let mut buf = DeviceBuffer::<u32>::uninit(&ctx, 1024)?;
/// memset_d32(&ctx, &mut buf, 7, 1024)?;
/// # Ok::<(), Error>(())
/// ```
pub trait DevicePtrMut: DevicePtr {}

impl<T: DeviceRepr> DevicePtrMut for DeviceBuffer<T> {}
impl<T> DevicePtrMut for DeviceViewMut<'_, T> {}

/// A device address and size that rucuda does not own (PyCUDA's `PointerHolderBase`):
/// memory from another library, a sub-range computed by hand. It can be copied to,
/// memset and passed to kernels like a buffer; nothing is freed when it goes.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let mut buf = DeviceBuffer::<u8>::zeros(&ctx, 4096)?;
/// // SAFETY: the second half of `buf`, which outlives `half`.
/// let base = buf.device_range().address();
/// // SAFETY: the second half of `buf`, which outlives `half` and is not used meanwhile.
/// let mut half = unsafe { ExternalDevicePtr::new(base + 2048, 2048) };
/// memset_d8(&ctx, &mut half, 0xAB, 2048)?;
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExternalDevicePtr {
    ptr: CUdeviceptr,
    bytes: usize,
}

impl ExternalDevicePtr {
    /// Wraps `bytes` bytes of device memory at `ptr`.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` must be device-accessible memory (device, managed or mapped host
    /// memory) that stays allocated while this value or a copy of it is used, and that
    /// nothing else accesses while copies, memsets or kernels through it run.
    pub unsafe fn new(ptr: CUdeviceptr, bytes: usize) -> ExternalDevicePtr {
        ExternalDevicePtr { ptr, bytes }
    }

    /// The address as a kernel argument passed by value.
    pub fn as_arg(&self) -> DevicePointerArg {
        DevicePointerArg(self.ptr)
    }
}

impl DevicePtr for ExternalDevicePtr {
    #[inline]
    fn device_range(&self) -> DeviceRange<'_> {
        // SAFETY: `new`'s contract is `untracked`'s: the memory outlives the work queued
        // with it, and nothing else accesses it meanwhile.
        unsafe { DeviceRange::untracked(self.ptr, self.bytes) }
    }
}

impl DevicePtrMut for ExternalDevicePtr {}

// SAFETY: the address of memory whose creator vouched for its lifetime (`new`).
unsafe impl KernelArg for ExternalDevicePtr {
    #[inline]
    fn param(&self, stream: Option<&Stream>) -> Result<Param<'_>> {
        let stream = crate::memory::kernel_arg::launch_stream(stream)?;
        Ok(Param::Address(
            self.device_range().use_on(stream, Access::Write)?,
        ))
    }
}

memory_kernel_arg!(Write; [] &ExternalDevicePtr, [] &mut ExternalDevicePtr);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_pointer_is_an_untracked_range() {
        // SAFETY: never dereferenced.
        let p = unsafe { ExternalDevicePtr::new(0x1000, 64) };
        assert_eq!(p.device_range().address(), 0x1000);
        assert_eq!(p.byte_len(), 64);
        assert_eq!(p.as_arg(), DevicePointerArg(0x1000));
    }
}
