//! `view_as`: the same bytes seen as another element type of any size (NumPy's
//! `a.view(dtype)`), a view sharing the buffer.

use super::GpuArray;
use crate::dtype::Element;
use crate::error::{ArrayError, Result};

impl<T: Element> GpuArray<T> {
    /// The same bytes seen as elements of type `U` (NumPy's `a.view(dtype)`), a view
    /// sharing the buffer. With equal element sizes the shape and strides stay (as
    /// [`GpuArray::reinterpret`]); otherwise the last axis must be contiguous and hold a
    /// multiple of `U`'s size in bytes, and its length scales (`[3, 4]` of `f64` is
    /// `[3, 8]` of `f32`, and `[3, 32]` of `u8`), the other strides likewise; anything
    /// else is refused with a [`crate::LayoutError::ViewItemSize`] naming the axis and
    /// sizes. Viewing as `bool` requires every byte to be 0 or 1.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{Complex, GpuArray};
    /// let z = GpuArray::from_slice(&stream, &[Complex::new(1.0f32, 2.0), Complex::new(3.0, 4.0)])?;
    /// let parts = z.view_as::<f32>()?;
    /// assert_eq!(parts.shape(), &[4]);
    /// assert_eq!(parts.to_vec()?, vec![1.0, 2.0, 3.0, 4.0]);
    /// let bytes = z.view_as::<u8>()?;
    /// assert_eq!(bytes.len(), 16);
    /// assert_eq!(z.insert_axis(0)?.view_as::<Complex<f64>>()?.shape(), &[1, 1]);
    /// assert!(z.reverse()?.view_as::<u8>().is_err()); // the last axis runs backwards
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn view_as<U: Element>(&self) -> Result<GpuArray<U>> {
        let (from, to) = (T::DTYPE.size_bytes(), U::DTYPE.size_bytes());
        let layout = self.layout().view_item_size(from, to)?;
        if !self
            .buffer_elements(0, 0)?
            .is_aligned(U::DTYPE.align_bytes())
        {
            return Err(ArrayError::InvalidArgument(format!(
                "cannot view as {}: the buffer is not aligned to {} bytes",
                U::DTYPE,
                U::DTYPE.align_bytes()
            )));
        }
        let len = self.buffer().len() * from / to;
        layout.check_within(len)?;
        // SAFETY: `len` elements of U lie inside the buffer's bytes (rounded down); the
        // base address is aligned for U and every element the layout reaches lies at a
        // multiple of U's size from it (the offset and strides are in elements of U,
        // checked divisible by `view_item_size`), inside `0..len` (checked above); the
        // storage types are plain data (any bits valid).
        Ok(unsafe { GpuArray::<U>::alias_of(self, len, layout) })
    }
}
