//! Import: a `DLManagedTensor` (or the versioned struct) on the device as a `GpuArray`
//! whose owner calls the tensor's deleter once the array and its uses are done.

use std::ptr::NonNull;

use rucuda_driver::Stream;

use super::dtype::{dl_data_type, dtype_of};
use super::ffi::{
    DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLTensor,
    DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_MAJOR_VERSION,
};
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::GpuArray;

/// Calls a legacy tensor's deleter when dropped.
struct LegacyOwner(NonNull<DLManagedTensor>);

/// Calls a versioned tensor's deleter when dropped.
struct VersionedOwner(NonNull<DLManagedTensorVersioned>);

// SAFETY: the owner only calls the deleter, once, from whichever thread drops it; DLPack
// producers' deleters may run on any thread (CuPy's and PyTorch's take the locks they
// need, the GIL included).
unsafe impl Send for LegacyOwner {}
// SAFETY: shared references to the owner do nothing with the pointer.
unsafe impl Sync for LegacyOwner {}
// SAFETY: as for `LegacyOwner`.
unsafe impl Send for VersionedOwner {}
// SAFETY: as for `LegacyOwner`.
unsafe impl Sync for VersionedOwner {}

impl Drop for LegacyOwner {
    fn drop(&mut self) {
        let t = self.0.as_ptr();
        // SAFETY: `from_dlpack`'s contract: a live tensor we own, whose deleter we call
        // once (here) and never touch afterwards.
        unsafe {
            if let Some(delete) = (*t).deleter {
                delete(t);
            }
        }
    }
}

impl Drop for VersionedOwner {
    fn drop(&mut self) {
        let t = self.0.as_ptr();
        // SAFETY: as for `LegacyOwner`.
        unsafe {
            if let Some(delete) = (*t).deleter {
                delete(t);
            }
        }
    }
}

impl<T: Element> GpuArray<T> {
    /// Imports a DLPack tensor on the device (zero copy) as an array whose home stream is
    /// `stream`: the tensor is consumed — its deleter is called when the array and every
    /// view of it are gone and the host has waited for the work queued with them, or
    /// before this returns an error. Uses are tracked like rucuda's own memory's (see
    /// [`GpuArray::from_device_ptr`]).
    ///
    /// Refused (typed errors): a device other than `kDLCUDA`/`kDLCUDAManaged` on the
    /// context's device, an element type other than `T`'s, a null data pointer of a
    /// non-empty tensor, a misaligned one.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::GpuArray;
    /// let a = GpuArray::<i32>::arange(&stream, 0.0, 6.0, 1.0)?.reshape(&[2, 3])?;
    /// let t = a.transpose().to_dlpack()?;
    /// // SAFETY: a live tensor of this context's device, handed over once.
    /// let b = unsafe { GpuArray::<i32>::from_dlpack(&stream, t) }?;
    /// assert_eq!(b.shape(), &[3, 2]);
    /// assert!(b.shares_buffer_with(&a) && b.to_vec()? == vec![0, 3, 1, 4, 2, 5]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    ///
    /// # Safety
    /// `tensor` must point to a valid `DLManagedTensor` that the caller owns and hands
    /// over (not used by the caller afterwards; a Python capsule renamed
    /// `"used_dltensor"`), whose data is memory of `stream`'s context as the tensor
    /// describes it, valid until the deleter is called; nothing else may access that
    /// memory while work queued through the array runs, unless the caller orders it
    /// (DLPack's `stream` protocol).
    pub unsafe fn from_dlpack(stream: &Stream, tensor: NonNull<DLManagedTensor>) -> Result<Self> {
        let owner = LegacyOwner(tensor);
        // SAFETY: the caller vouches for a valid tensor; `owner` keeps it until the
        // array goes (the deleter is called only when `owner` drops).
        let t = unsafe { &(*tensor.as_ptr()).dl_tensor };
        // SAFETY: the caller's contract, passed on.
        unsafe { import(stream, t, owner) }
    }

    /// [`GpuArray::from_dlpack`] for the versioned ABI (`DLManagedTensorVersioned`):
    /// also refuses another major version and read-only tensors (a `GpuArray` is
    /// writable).
    ///
    /// # Safety
    /// As [`GpuArray::from_dlpack`], for a `DLManagedTensorVersioned`.
    pub unsafe fn from_dlpack_versioned(
        stream: &Stream,
        tensor: NonNull<DLManagedTensorVersioned>,
    ) -> Result<Self> {
        let owner = VersionedOwner(tensor);
        // SAFETY: as in `from_dlpack`.
        let m = unsafe { &*tensor.as_ptr() };
        if m.version.major != DLPACK_MAJOR_VERSION {
            return Err(ArrayError::InvalidArgument(format!(
                "DLPack tensor of ABI version {}.{}: only major version {DLPACK_MAJOR_VERSION} \
                 is understood",
                m.version.major, m.version.minor
            )));
        }
        if m.flags & DLPACK_FLAG_BITMASK_READ_ONLY != 0 {
            return Err(ArrayError::InvalidArgument(
                "DLPack tensor is read-only; a GpuArray is writable: copy it on the producer's \
                 side first"
                    .into(),
            ));
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { import(stream, &m.dl_tensor, owner) }
    }
}

/// The array over `t`'s data, owned by `owner` (dropped on error).
///
/// # Safety
/// `t` is a valid tensor describing memory of `stream`'s context that `owner` keeps
/// valid, used by nobody else while the array's work runs.
unsafe fn import<T: Element, O: Send + Sync + 'static>(
    stream: &Stream,
    t: &DLTensor,
    owner: O,
) -> Result<GpuArray<T>> {
    let device = stream.context().device().ordinal();
    let on_device = matches!(
        t.device.device_type,
        DLDeviceType::CUDA | DLDeviceType::CUDA_MANAGED
    );
    if !on_device || usize::try_from(t.device.device_id).ok() != Some(device) {
        return Err(ArrayError::InvalidArgument(format!(
            "DLPack tensor on device type {} id {}: only CUDA memory of this context's \
             device ({device}) can be imported",
            t.device.device_type.0, t.device.device_id
        )));
    }
    if dl_data_type(T::DTYPE) != Some(t.dtype) {
        let what = dtype_of(t.dtype).map_or_else(
            || {
                format!(
                    "code {} bits {} lanes {}",
                    t.dtype.code, t.dtype.bits, t.dtype.lanes
                )
            },
            |d| d.to_string(),
        );
        return Err(ArrayError::InvalidArgument(format!(
            "DLPack tensor of element type {what} imported as {}",
            T::DTYPE
        )));
    }
    let ndim = usize::try_from(t.ndim)
        .map_err(|_| ArrayError::InvalidArgument(format!("DLPack tensor of ndim {}", t.ndim)))?;
    if ndim > 0 && t.shape.is_null() {
        return Err(ArrayError::InvalidArgument(
            "DLPack tensor with a null shape".into(),
        ));
    }
    let read = |p: *const i64| -> Vec<i64> {
        if ndim == 0 {
            return Vec::new();
        }
        // SAFETY: a valid tensor's shape (and non-null strides) hold `ndim` values.
        unsafe { std::slice::from_raw_parts(p, ndim) }.to_vec()
    };
    let shape = read(t.shape)
        .into_iter()
        .map(|d| {
            usize::try_from(d).map_err(|_| {
                ArrayError::InvalidArgument(format!("DLPack tensor with axis length {d}"))
            })
        })
        .collect::<Result<Vec<usize>>>()?;
    let strides: Option<Vec<isize>> = if t.strides.is_null() {
        None
    } else {
        Some(read(t.strides).into_iter().map(|s| s as isize).collect())
    };
    let empty = shape.contains(&0);
    let element0 = (t.data as usize as u64).wrapping_add(t.byte_offset);
    if t.data.is_null() && !empty {
        return Err(ArrayError::InvalidArgument(
            "DLPack tensor with a null data pointer".into(),
        ));
    }
    // SAFETY: the caller vouches for the memory the tensor describes and its lifetime
    // (`owner`), and for exclusive use.
    unsafe { GpuArray::<T>::from_device_ptr(stream, element0, &shape, strides.as_deref(), owner) }
}
