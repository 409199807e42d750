//! Arrays over device memory that rucuda did not allocate (PyCUDA's
//! `GPUArray(gpudata=...)` with a `PointerHolderBase`): an address, a shape, strides and
//! an owner value that keeps the memory alive.

use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::{DeviceBuffer, Stream};

use super::GpuArray;
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::layout::{Layout, LayoutError};

impl<T: Element> GpuArray<T> {
    /// An array over device memory that rucuda did not allocate: element 0 at `ptr`,
    /// `shape`, `strides` **in elements** (as [`GpuArray::strides`] and DLPack; NumPy's
    /// and PyCUDA's byte strides divided by the item size; `None`: row-major), home
    /// stream `stream`. `owner` keeps the memory alive (a handle of the library that
    /// allocated it, a guard that frees it): it is dropped when the array and every view
    /// of it are gone, after the host has waited for every use queued through them, so
    /// the memory outlives the work. Uses are tracked like those of rucuda's own memory
    /// (in a log of the wrapped region's own).
    ///
    /// ```no_run
    /// use rucuda_array::GpuArray;
    /// use rucuda_driver::{Device, DeviceBuffer, DevicePtr, Stream};
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let stream = Stream::null(&ctx);
    /// let theirs = DeviceBuffer::<f32>::zeros(&ctx, 12)?; // stands for another library's memory
    /// let ptr = theirs.device_range().address();
    /// // SAFETY: 12 f32 of this context at `ptr`, kept alive by `theirs`, used by nobody else.
    /// let a = unsafe { GpuArray::<f32>::from_device_ptr(&stream, ptr, &[3, 4], Some(&[1, 3]), theirs) }?;
    /// assert!(a.is_f_contiguous());
    /// assert_eq!(a.to_vec()?, vec![0.0; 12]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    ///
    /// Errors: strides of another rank than the shape, a layout whose span overflows, an
    /// address not aligned for `T`.
    ///
    /// # Safety
    /// Every element the layout reaches (from `ptr`, negative strides reaching below it)
    /// must be device-accessible memory of `stream`'s context holding valid `T` values
    /// (any bits, for the plain types; 0 or 1 for `bool`) that stays allocated while
    /// `owner` lives; nothing else may access it (host or device) while work queued
    /// through the array runs, unless the caller orders that access with the work.
    pub unsafe fn from_device_ptr<O: Send + Sync + 'static>(
        stream: &Stream,
        ptr: CUdeviceptr,
        shape: &[usize],
        strides: Option<&[isize]>,
        owner: O,
    ) -> Result<Self> {
        let size = T::DTYPE.size_bytes();
        let dense;
        let strides = match strides {
            Some(s) => s,
            None => {
                dense = Layout::c_contiguous(shape)?;
                dense.strides()
            }
        };
        let (lo, len) = foreign_span(shape, strides)?;
        if ptr % T::DTYPE.align_bytes() as u64 != 0 {
            return Err(ArrayError::InvalidArgument(format!(
                "device address {ptr:#x} is not aligned for {} ({} bytes)",
                T::DTYPE,
                T::DTYPE.align_bytes()
            )));
        }
        let below = lo as u64 * size as u64;
        let base = ptr.checked_sub(below).ok_or_else(|| {
            ArrayError::InvalidArgument(format!(
                "device address {ptr:#x} minus the {below} bytes that negative strides reach \
                 below it underflows"
            ))
        })?;
        let layout = Layout::from_parts(shape.to_vec(), strides.to_vec(), lo, len)?;
        // SAFETY: the caller vouches that the `len` elements from `base` (the lowest to
        // the highest element the layout reaches) are memory of this context holding
        // valid values that `owner` keeps alive, and that nobody else uses it meanwhile;
        // `base` is aligned for T (element 0 is, and `base` lies whole elements below).
        let buffer = unsafe {
            DeviceBuffer::<T::Storage>::from_foreign(stream.context(), base, len, Box::new(owner))
        };
        Ok(GpuArray::from_buffer(buffer, stream, layout))
    }
}

/// For a layout with element 0 at offset 0: how many elements it reaches below element 0,
/// and how many from the lowest to the highest one (0 for an empty array).
fn foreign_span(shape: &[usize], strides: &[isize]) -> Result<(usize, usize)> {
    if shape.len() != strides.len() {
        return Err(LayoutError::RankMismatch {
            shape: shape.len(),
            strides: strides.len(),
        }
        .into());
    }
    crate::layout::element_count(shape)?;
    if shape.contains(&0) {
        return Ok((0, 0));
    }
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&d, &s) in shape.iter().zip(strides) {
        let reach = (d as i128 - 1) * s as i128;
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    let len = hi - lo + 1;
    let overflow = || LayoutError::Overflow {
        shape: shape.to_vec(),
    };
    let below = usize::try_from(-lo).map_err(|_| overflow())?;
    let len = usize::try_from(len)
        .ok()
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(overflow)?;
    Ok((below, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_cover_negative_and_positive_strides() {
        assert_eq!(foreign_span(&[3, 4], &[4, 1]).unwrap(), (0, 12));
        assert_eq!(foreign_span(&[3, 4], &[1, 3]).unwrap(), (0, 12));
        // A reversed vector: element 0 is the highest.
        assert_eq!(foreign_span(&[5], &[-1]).unwrap(), (4, 5));
        // Every other row of a [6, 4] matrix, rows reversed.
        assert_eq!(foreign_span(&[3, 4], &[-8, 1]).unwrap(), (16, 20));
        // Broadcast axes reach nothing more.
        assert_eq!(foreign_span(&[7, 2], &[0, 1]).unwrap(), (0, 2));
        assert_eq!(foreign_span(&[0, 4], &[4, 1]).unwrap(), (0, 0));
        assert!(foreign_span(&[3], &[1, 1]).is_err());
        assert!(foreign_span(&[1 << 62, 4], &[1 << 40, 1]).is_err());
    }
}
