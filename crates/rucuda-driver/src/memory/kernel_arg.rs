//! How memory and values reach a kernel as arguments: [`KernelArg`], which hands each
//! memory argument's address out through its use log ([`DeviceRange::use_on`]) for the
//! launch's stream, and the argument kinds the launch passes on.

use std::ffi::c_void;

use rucuda_driver_sys::CUdeviceptr;

use crate::error::{Error, Result};
use crate::memory::device_buffer::{DeviceBuffer, DeviceView, DeviceViewMut};
use crate::memory::tracking::InUse;
use crate::repr::DeviceRepr;
use crate::streams::stream::Stream;

/// One kernel argument as a launch passes it.
#[derive(Debug)]
pub enum Param<'a> {
    /// `size` bytes at `ptr`, passed by value (numbers, vector types, structs).
    Bytes(*mut c_void, usize),
    /// A device address for a pointer parameter: the use from
    /// [`DeviceRange::use_on`](crate::DeviceRange::use_on), held until the launch is queued.
    Address(InUse<'a>),
}

/// One kernel argument.
///
/// Values ([`DeviceRepr`] types: numbers, vector types, your `#[repr(C)]` structs) are
/// passed by value; memory (buffers, views and the other memory kinds) by reference
/// (`&buf` for input, `&mut buf` for output), which keeps it borrowed until the launch
/// call returns, and records the launch's use of it in the memory's log (read for `&`,
/// write for `&mut`), so that frees, host access and conflicting work on other streams
/// wait for the kernel.
///
/// # Safety
/// A `Bytes` parameter must point to that many readable bytes that stay valid while
/// `self` is borrowed, laid out as the kernel's C parameter expects; an `Address` must
/// come from [`DeviceRange::use_on`](crate::DeviceRange::use_on) on the launch's stream.
pub unsafe trait KernelArg {
    /// The argument for a launch about to be queued on `stream`. Memory arguments need
    /// the stream (their use is recorded on it) and fail without one; values ignore it
    /// (`None` packs value-only argument lists without a context, as the tests do).
    fn param(&self, stream: Option<&Stream>) -> Result<Param<'_>>;
}

/// The launch's stream, which a memory argument needs.
pub(crate) fn launch_stream(stream: Option<&Stream>) -> Result<&Stream> {
    stream.ok_or_else(|| Error::invalid("a memory argument is packed without the launch's stream"))
}

// SAFETY: a DeviceRepr value is its own C representation.
unsafe impl<T: DeviceRepr> KernelArg for T {
    #[inline]
    fn param(&self, _stream: Option<&Stream>) -> Result<Param<'_>> {
        Ok(Param::Bytes(
            (self as *const T).cast_mut().cast(),
            std::mem::size_of::<T>(),
        ))
    }
}

/// A device pointer passed by value: what a kernel's `T*` parameter receives. Get the
/// address from [`DeviceRange::use_on`](crate::DeviceRange::use_on) for the stream the
/// kernel runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct DevicePointerArg(pub CUdeviceptr);

// SAFETY: one 64-bit address, like a C pointer.
unsafe impl DeviceRepr for DevicePointerArg {
    const C_TYPE: &'static str = "void*";
}

// SAFETY: the address comes from `use_on` (the caller takes it for the launch's stream,
// which `DeviceRange::use_on` documents), and the pointed-to word lives in `self`, which
// the argument tuple holds for the launch.
unsafe impl KernelArg for InUse<'_> {
    #[inline]
    fn param(&self, _stream: Option<&Stream>) -> Result<Param<'_>> {
        Ok(Param::Bytes(
            self.ptr_word().cast_mut().cast(),
            std::mem::size_of::<CUdeviceptr>(),
        ))
    }
}

// SAFETY: as above; the borrowed use outlives the launch.
unsafe impl KernelArg for &InUse<'_> {
    #[inline]
    fn param(&self, stream: Option<&Stream>) -> Result<Param<'_>> {
        (**self).param(stream)
    }
}

/// Implements [`KernelArg`] for memory types passed by reference: the kernel receives the
/// address that the memory's log hands out for the launch's stream.
macro_rules! memory_kernel_arg {
    ($access:ident; $([$($g:tt)*] $t:ty),* $(,)?) => {$(
        // SAFETY: the address comes from `use_on` on the launch's stream.
        unsafe impl<$($g)*> $crate::memory::kernel_arg::KernelArg for $t {
            #[inline]
            fn param(
                &self,
                stream: Option<&$crate::streams::stream::Stream>,
            ) -> $crate::error::Result<$crate::memory::kernel_arg::Param<'_>> {
                let stream = $crate::memory::kernel_arg::launch_stream(stream)?;
                let range = $crate::memory::tracking::DevicePtr::device_range(self);
                Ok($crate::memory::kernel_arg::Param::Address(
                    range.use_on(stream, $crate::memory::tracking::Access::$access)?,
                ))
            }
        }
    )*};
}
pub(crate) use memory_kernel_arg;

memory_kernel_arg!(Read;
    [T: DeviceRepr] &DeviceBuffer<T>,
    [T: DeviceRepr] DeviceView<'_, T>,
    [T: DeviceRepr] &DeviceView<'_, T>,
);
memory_kernel_arg!(Write;
    [T: DeviceRepr] &mut DeviceBuffer<T>,
    [T: DeviceRepr] DeviceViewMut<'_, T>,
    [T: DeviceRepr] &mut DeviceViewMut<'_, T>,
);
