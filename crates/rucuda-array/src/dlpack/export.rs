//! Export: a `GpuArray` as a `DLManagedTensor` (or the versioned struct) on the heap,
//! whose deleter drops the view of the array it holds.

use std::os::raw::c_void;
use std::ptr::NonNull;

use rucuda_driver::{Access, DevicePtr};

use super::dtype::dl_data_type;
use super::ffi::{
    DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor,
    DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION,
};
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::GpuArray;

/// What an exported tensor keeps: a view of the array (so its memory stays allocated)
/// and the shape and strides its `DLTensor` points into.
struct Kept {
    _array: Box<dyn Send + Sync>,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

/// The heap block of a legacy export; `manager_ctx` points to it.
struct LegacyExport {
    tensor: DLManagedTensor,
    kept: Kept,
}

/// The heap block of a versioned export; `manager_ctx` points to it.
struct VersionedExport {
    tensor: DLManagedTensorVersioned,
    kept: Kept,
}

unsafe extern "C" fn delete_legacy(tensor: *mut DLManagedTensor) {
    if tensor.is_null() {
        return;
    }
    // SAFETY: the consumer calls the deleter once with the tensor we made, whose
    // `manager_ctx` is the `Box<LegacyExport>` holding it (`to_dlpack`); nothing reads
    // the tensor afterwards.
    unsafe {
        let block = (*tensor).manager_ctx.cast::<LegacyExport>();
        drop(Box::from_raw(block));
    }
}

unsafe extern "C" fn delete_versioned(tensor: *mut DLManagedTensorVersioned) {
    if tensor.is_null() {
        return;
    }
    // SAFETY: as `delete_legacy`, for the `Box<VersionedExport>`.
    unsafe {
        let block = (*tensor).manager_ctx.cast::<VersionedExport>();
        drop(Box::from_raw(block));
    }
}

impl<T: Element> GpuArray<T> {
    /// Exports this array through DLPack (zero copy): a heap `DLManagedTensor` (the
    /// legacy ABI of `"dltensor"` capsules) describing these elements — `kDLCUDA` on the
    /// context's device, element 0 at `data` (`byte_offset` 0), strides in elements —
    /// that holds a view of the array, so its memory stays allocated until the consumer
    /// calls the tensor's `deleter` (exactly once; dropping the view may free the memory).
    ///
    /// Before returning it waits on the host for every use of the array's memory queued
    /// so far, so the consumer may read and write it on any stream. Work the consumer
    /// queues is not tracked: rucuda work on the same memory while the consumer's runs
    /// must be ordered by the caller (DLPack's `stream` protocol), as with any memory
    /// shared with another library.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::<f32>::zeros(&stream, &[2, 3])?;
    /// let t = a.to_dlpack()?;
    /// // ... hand `t` to another library, which calls its deleter when done; here:
    /// // SAFETY: the tensor we made, deleted once.
    /// unsafe { (t.as_ref().deleter.unwrap())(t.as_ptr()) };
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn to_dlpack(&self) -> Result<NonNull<DLManagedTensor>> {
        let (tensor, kept) = self.export_parts()?;
        let block = Box::into_raw(Box::new(LegacyExport {
            tensor: DLManagedTensor {
                dl_tensor: tensor,
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_legacy),
            },
            kept,
        }));
        // SAFETY: `block` is the live allocation just made; its tensor points into its
        // own `kept` vectors, whose heap buffers do not move with the box.
        unsafe {
            let b = &mut *block;
            b.tensor.manager_ctx = block.cast::<c_void>();
            point_into(&mut b.tensor.dl_tensor, &mut b.kept);
            Ok(NonNull::from(&mut b.tensor))
        }
    }

    /// [`GpuArray::to_dlpack`] with the versioned ABI (`DLManagedTensorVersioned`,
    /// DLPack 1.x, flags 0: writable, not copied), for `"dltensor_versioned"` capsules.
    pub fn to_dlpack_versioned(&self) -> Result<NonNull<DLManagedTensorVersioned>> {
        let (tensor, kept) = self.export_parts()?;
        let block = Box::into_raw(Box::new(VersionedExport {
            tensor: DLManagedTensorVersioned {
                version: DLPackVersion {
                    major: DLPACK_MAJOR_VERSION,
                    minor: DLPACK_MINOR_VERSION,
                },
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_versioned),
                flags: 0,
                dl_tensor: tensor,
            },
            kept,
        }));
        // SAFETY: as in `to_dlpack`.
        unsafe {
            let b = &mut *block;
            b.tensor.manager_ctx = block.cast::<c_void>();
            point_into(&mut b.tensor.dl_tensor, &mut b.kept);
            Ok(NonNull::from(&mut b.tensor))
        }
    }

    /// The tensor (shape and strides not yet pointed at) and what it keeps, after the
    /// host has waited for the array's queued uses.
    fn export_parts(&self) -> Result<(DLTensor, Kept)> {
        let dtype = dl_data_type(T::DTYPE).ok_or(ArrayError::UnsupportedType {
            operation: "DLPack export",
            dtype: T::DTYPE,
        })?;
        let range = self.buffer().device_range();
        range.wait_on_host(Access::Write)?;
        let element0 = range.address() + (self.layout().offset() * T::DTYPE.size_bytes()) as u64;
        let device_id = i32::try_from(self.context().device().ordinal())
            .map_err(|_| ArrayError::InvalidArgument("device ordinal over i32".into()))?;
        let ndim = i32::try_from(self.ndim())
            .map_err(|_| ArrayError::InvalidArgument("too many dimensions for DLPack".into()))?;
        let kept = Kept {
            _array: Box::new(self.view()),
            shape: self.shape().iter().map(|&d| d as i64).collect(),
            strides: self.strides().iter().map(|&s| s as i64).collect(),
        };
        let tensor = DLTensor {
            data: element0 as usize as *mut c_void,
            device: DLDevice {
                device_type: DLDeviceType::CUDA,
                device_id,
            },
            ndim,
            dtype,
            shape: std::ptr::null_mut(),
            strides: std::ptr::null_mut(),
            byte_offset: 0,
        };
        Ok((tensor, kept))
    }
}

/// Points the tensor's shape and strides at the kept vectors.
fn point_into(tensor: &mut DLTensor, kept: &mut Kept) {
    tensor.shape = kept.shape.as_mut_ptr();
    tensor.strides = kept.strides.as_mut_ptr();
}
