//! [`AlignedHostBuffer`]: ordinary (pageable) host memory with a chosen alignment, PyCUDA's
//! `aligned_empty`/`aligned_zeros` and their `_like` forms. Page-aligned memory is what
//! [`register_host_memory`](crate::register_host_memory) pins best.

use std::alloc::Layout;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use rucuda_driver_sys::CUresult;

use crate::error::{DriverError, Error, Result};
use crate::repr::byte_size;
use crate::repr::DeviceRepr;

/// PyCUDA's default alignment for aligned host memory: one page.
pub const DEFAULT_HOST_ALIGNMENT: usize = 4096;

/// Host memory holding `len` elements of `T`, its first element aligned to `alignment`
/// bytes (PyCUDA's `AlignedHostAllocation`). Always zero-initialised: Rust cannot hand out
/// uninitialised memory as a slice, and the zeroing is nearly free for large allocations
/// (fresh pages come zeroed from the OS).
///
/// ```
/// use rucuda_driver::{aligned_zeros, DEFAULT_HOST_ALIGNMENT};
/// let buf = aligned_zeros::<f32>(1000, DEFAULT_HOST_ALIGNMENT)?;
/// assert_eq!(buf.as_ptr() as usize % 4096, 0);
/// assert!(buf.iter().all(|&x| x == 0.0));
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub struct AlignedHostBuffer<T: DeviceRepr> {
    ptr: NonNull<T>,
    len: usize,
    layout: Layout,
}

// SAFETY: plain host memory we own; T is Send + Sync plain data.
unsafe impl<T: DeviceRepr> Send for AlignedHostBuffer<T> {}
// SAFETY: shared references only read it.
unsafe impl<T: DeviceRepr> Sync for AlignedHostBuffer<T> {}

impl<T: DeviceRepr> std::fmt::Debug for AlignedHostBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedHostBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("alignment", &self.layout.align())
            .field("type", &T::C_TYPE)
            .finish()
    }
}

/// The layout for `len` elements of `T` aligned to `alignment` (at least T's own).
fn layout_for<T>(len: usize, alignment: usize) -> Result<Layout> {
    if !alignment.is_power_of_two() {
        return Err(Error::invalid(format!(
            "alignment {alignment} is not a power of two"
        )));
    }
    let align = alignment.max(std::mem::align_of::<T>());
    // A zero-size allocation is not allowed: keep at least one byte.
    let bytes = byte_size::<T>(len)?.max(1);
    Layout::from_size_align(bytes, align).map_err(|e| {
        Error::invalid(format!(
            "{len} elements of {} bytes aligned to {align}: {e}",
            std::mem::size_of::<T>()
        ))
    })
}

impl<T: DeviceRepr> AlignedHostBuffer<T> {
    /// `len` zeroed elements aligned to `alignment` bytes (a power of two; T's own
    /// alignment is the minimum).
    pub fn zeros(len: usize, alignment: usize) -> Result<Self> {
        let layout = layout_for::<T>(len, alignment)?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(raw.cast::<T>()) else {
            return Err(Error::Driver(DriverError {
                code: CUresult::CUDA_ERROR_OUT_OF_MEMORY,
                call: "std::alloc::alloc_zeroed",
                name: "CUDA_ERROR_OUT_OF_MEMORY",
                message: format!("the host could not allocate {} bytes", layout.size()).into(),
            }));
        };
        Ok(AlignedHostBuffer { ptr, len, layout })
    }

    /// Allocates and copies `data` in.
    pub fn from_slice(data: &[T], alignment: usize) -> Result<Self> {
        let mut buf = Self::zeros(data.len(), alignment)?;
        buf.copy_from_slice(data);
        Ok(buf)
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds no element.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The alignment of the first element, in bytes.
    #[inline]
    pub fn alignment(&self) -> usize {
        self.layout.align()
    }

    /// A copy with the same alignment.
    pub fn try_clone(&self) -> Result<Self> {
        Self::from_slice(self, self.alignment())
    }
}

impl<T: DeviceRepr> Drop for AlignedHostBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout by `zeros`, freed once.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), self.layout) };
    }
}

impl<T: DeviceRepr> Deref for AlignedHostBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` zero-initialised (valid) elements, owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceRepr> DerefMut for AlignedHostBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`; `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// `len` elements aligned to `alignment` bytes (PyCUDA's `aligned_empty`; zeroed, see
/// [`AlignedHostBuffer`]).
///
/// ```
/// let buf = rucuda_driver::aligned_empty::<u8>(100, 256)?;
/// assert_eq!(buf.as_ptr() as usize % 256, 0);
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub fn aligned_empty<T: DeviceRepr>(len: usize, alignment: usize) -> Result<AlignedHostBuffer<T>> {
    AlignedHostBuffer::zeros(len, alignment)
}

/// `len` zeroed elements aligned to `alignment` bytes (PyCUDA's `aligned_zeros`).
pub fn aligned_zeros<T: DeviceRepr>(len: usize, alignment: usize) -> Result<AlignedHostBuffer<T>> {
    AlignedHostBuffer::zeros(len, alignment)
}

/// As long as `like`, aligned to `alignment` bytes (PyCUDA's `aligned_empty_like`).
pub fn aligned_empty_like<T: DeviceRepr>(
    like: &[T],
    alignment: usize,
) -> Result<AlignedHostBuffer<T>> {
    AlignedHostBuffer::zeros(like.len(), alignment)
}

/// Zeroed, as long as `like`, aligned to `alignment` bytes (PyCUDA's `aligned_zeros_like`).
pub fn aligned_zeros_like<T: DeviceRepr>(
    like: &[T],
    alignment: usize,
) -> Result<AlignedHostBuffer<T>> {
    AlignedHostBuffer::zeros(like.len(), alignment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn allocations_have_the_asked_alignment_and_are_zeroed() {
        for &align in &[1usize, 8, 64, 4096, 1 << 16] {
            for &len in &[0usize, 1, 3, 1000, 4097] {
                let b = aligned_empty::<u32>(len, align).expect("allocates");
                assert_eq!(b.len(), len);
                assert_eq!(b.as_ptr() as usize % align.max(4), 0, "align {align}");
                assert!(b.iter().all(|&x| x == 0));
                assert!(b.alignment() >= align);
            }
        }
    }

    #[test]
    fn type_alignment_is_the_minimum() {
        let b = aligned_zeros::<f64>(7, 1).expect("allocates");
        assert_eq!(b.alignment(), 8);
        assert_eq!(b.as_ptr() as usize % 8, 0);
    }

    #[test]
    fn bad_alignment_is_a_logic_error() {
        let e = aligned_zeros::<u8>(10, 3).expect_err("3 is not a power of two");
        assert_eq!(e.kind(), ErrorKind::Logic);
        assert!(e.to_string().contains("power of two"), "{e}");
    }

    #[test]
    fn overflowing_sizes_are_refused() {
        let e = aligned_zeros::<u64>(usize::MAX / 4, 64).expect_err("overflows");
        assert_eq!(e.kind(), ErrorKind::Logic);
    }

    #[test]
    fn like_forms_copy_length_and_clone_keeps_data() {
        let data: Vec<u16> = (0..999).map(|i| (i * 7919 % 65521) as u16).collect();
        let e = aligned_empty_like(&data, 512).expect("allocates");
        let z = aligned_zeros_like(&data, 512).expect("allocates");
        assert_eq!((e.len(), z.len()), (999, 999));
        let mut b = AlignedHostBuffer::from_slice(&data, 4096).expect("allocates");
        b[5] = 1;
        let c = b.try_clone().expect("allocates");
        assert_eq!(&c[..], &b[..]);
        assert_eq!(c.as_ptr() as usize % 4096, 0);
        assert_eq!(c[5], 1);
        assert_eq!(&c[6..], &data[6..]);
    }
}
