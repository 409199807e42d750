//! What a collective reads and writes: [`SendBuffer`] and [`RecvBuffer`], implemented for
//! [`DeviceBuffer`], device views and C-contiguous [`GpuArray`]s, each reporting its
//! [`Region`] through its use log.

use std::any::Any;

use rucuda_array::{Element, GpuArray};
use rucuda_driver::{
    Access, DeviceBuffer, DevicePtr, DeviceRepr, DeviceView, DeviceViewMut, InUse, Stream,
};
use rucuda_driver_sys::CUdeviceptr;

use crate::dtype::ElementLayout;
use crate::error::{Error, Result};

/// Where a buffer's elements are, for NCCL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Device address of the first element.
    pub ptr: CUdeviceptr,
    /// Number of elements.
    pub len: usize,
    /// How its elements travel.
    pub layout: ElementLayout,
    /// The device ordinal it lives on, where known (views do not say).
    pub device: Option<usize>,
}

impl Region {
    /// The region at `used`'s address, with the use that gave the address.
    fn used(
        used: InUse<'_>,
        len: usize,
        layout: ElementLayout,
        device: Option<usize>,
    ) -> (Region, InUse<'_>) {
        let region = Region {
            ptr: used.ptr(),
            len,
            layout,
            device,
        };
        (region, used)
    }
}

/// Device memory a collective reads: [`DeviceBuffer`], [`DeviceView`], [`DeviceViewMut`]
/// and C-contiguous [`GpuArray`]s.
///
/// # Safety
/// NCCL reads (and for [`RecvBuffer`] writes) the [`Region`] an implementor reports:
/// it must be device memory of that many elements, alive as long as the implementor is;
/// a `keep_alive` handle must keep that memory allocated while it lives.
pub unsafe trait SendBuffer {
    /// Its elements for an operation queued on `stream` that uses them as `access` says
    /// (the address comes from the memory's use log, which records the use; keep the
    /// [`InUse`] until the operation is queued), or why NCCL cannot use it (a
    /// non-contiguous array).
    fn region(
        &self,
        call: &'static str,
        what: &'static str,
        stream: &Stream,
        access: Access,
    ) -> Result<(Region, InUse<'_>)>;

    /// A handle that keeps this memory allocated for as long as it lives, or `None`
    /// when there is none (plain buffers and views: only their owner frees them).
    ///
    /// Inside a [`group`](crate::group()) a call is issued when the outermost group
    /// returns, so its record holds this handle until then; a buffer without one is
    /// refused there ([`Error::NotInGroup`]). [`GpuArray`] shares its memory through an
    /// `Arc` and returns a handle to it.
    fn keep_alive(&self) -> Option<Box<dyn Any>> {
        None
    }
}

/// Device memory a collective writes: [`DeviceBuffer`], [`DeviceViewMut`] and
/// C-contiguous [`GpuArray`]s.
///
/// # Safety
/// As for [`SendBuffer`], and the region must be writable.
pub unsafe trait RecvBuffer: SendBuffer {}

/// [`SendBuffer`] for the driver's memory of `T`s (no keep-alive handle): `$device`
/// gives the device ordinal of `$buf`, where the type knows it.
macro_rules! driver_memory {
    ($($ty:ty => |$buf:ident| $device:expr;)*) => {$(
        // SAFETY: the region is the buffer's own device memory, alive while it is; a
        // GpuArray's keep-alive handle shares its storage Arc.
        unsafe impl<T: DeviceRepr> SendBuffer for $ty {
            fn region(
                &self,
                _: &'static str,
                _: &'static str,
                stream: &Stream,
                access: Access,
            ) -> Result<(Region, InUse<'_>)> {
                let $buf = self;
                let used = $buf.device_range().use_on(stream, access)?;
                let layout = ElementLayout::of_repr::<T>();
                Ok(Region::used(used, $buf.len(), layout, $device))
            }
        }
    )*};
}

driver_memory! {
    DeviceBuffer<T> => |buf| Some(buf.context().device().ordinal());
    DeviceView<'_, T> => |_view| None;
    DeviceViewMut<'_, T> => |_view| None;
}

// SAFETY: the region is the buffer's own device memory, alive while it is; a GpuArray's
// keep-alive handle shares its storage Arc.
unsafe impl<T: DeviceRepr> RecvBuffer for DeviceBuffer<T> {}

// SAFETY: the region is the buffer's own device memory, alive while it is; a GpuArray's
// keep-alive handle shares its storage Arc.
unsafe impl<T: DeviceRepr> RecvBuffer for DeviceViewMut<'_, T> {}

// SAFETY: the region is the buffer's own device memory, alive while it is; a GpuArray's
// keep-alive handle shares its storage Arc.
unsafe impl<E: Element> SendBuffer for GpuArray<E> {
    fn region(
        &self,
        call: &'static str,
        what: &'static str,
        stream: &Stream,
        access: Access,
    ) -> Result<(Region, InUse<'_>)> {
        if !self.is_c_contiguous() {
            return Err(Error::NotContiguous {
                call,
                what,
                shape: self.shape().to_vec(),
                strides: self.strides().to_vec(),
            });
        }
        let used = self.use_on(stream, access).map_err(|e| match e {
            rucuda_array::ArrayError::Driver(d) => Error::Driver(d),
            other => Error::invalid(format!("{call}: {what}: {other}")),
        })?;
        let layout = ElementLayout::of_dtype(E::DTYPE);
        let device = Some(self.context().device().ordinal());
        Ok(Region::used(used, self.len(), layout, device))
    }

    fn keep_alive(&self) -> Option<Box<dyn Any>> {
        // Another view of the same storage: its `Arc` keeps the memory allocated.
        Some(Box::new(self.squeeze()))
    }
}
// SAFETY: the region is the buffer's own device memory, alive while it is; a GpuArray's
// keep-alive handle shares its storage Arc.
unsafe impl<E: Element> RecvBuffer for GpuArray<E> {}

/// Regions for the tests of the modules above.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    pub(crate) fn region(layout: ElementLayout, len: usize) -> Region {
        Region {
            ptr: 0x1000,
            len,
            layout,
            device: Some(0),
        }
    }

    pub(crate) fn f32s(len: usize) -> Region {
        region(ElementLayout::of_repr::<f32>(), len)
    }
}
