//! Views: slicing, transposes and permutations, reshapes, squeezes, new axes, flips and
//! broadcasts. None of them copies; each shares the buffer.

use super::GpuArray;
use crate::dtype::Element;
use crate::error::Result;
use crate::layout::SliceArg;

impl<T: Element> GpuArray<T> {
    /// Basic indexing with NumPy's semantics (see [`crate::layout::Layout::slice`]).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, SliceArg};
    /// let a = GpuArray::<f32>::arange(&stream, 0.0, 10.0, 1.0)?;
    /// let odd_reversed = a.slice(&[SliceArg::stepped(None, None, -2)])?;
    /// assert_eq!(odd_reversed.to_vec()?, vec![9.0, 7.0, 5.0, 3.0, 1.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn slice(&self, args: &[SliceArg]) -> Result<Self> {
        Ok(self.with_layout(self.layout.slice(args)?))
    }

    /// The axes reversed (NumPy's `.T`).
    pub fn transpose(&self) -> Self {
        self.with_layout(self.layout.transpose())
    }

    /// The axes reordered: axis `k` of the result is axis `axes[k]`.
    pub fn permute(&self, axes: &[usize]) -> Result<Self> {
        Ok(self.with_layout(self.layout.permute(axes)?))
    }

    /// Two axes exchanged.
    pub fn swap_axes(&self, a: usize, b: usize) -> Result<Self> {
        Ok(self.with_layout(self.layout.swap_axes(a, b)?))
    }

    /// The same elements in row-major order under a new shape (at most one `-1`): a view
    /// where strides can express it, else a contiguous copy (NumPy's `reshape`). Use
    /// [`GpuArray::reshape_view`] to refuse copying.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::<u16>::zeros(&stream, &[6, 4])?;
    /// assert_eq!(a.reshape(&[3, -1])?.shape(), &[3, 8]);
    /// assert!(a.reshape(&[3, -1])?.shares_buffer_with(&a));
    /// let flat = a.transpose().reshape(&[24])?; // needs a copy
    /// assert!(!flat.shares_buffer_with(&a));
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn reshape(&self, shape: &[isize]) -> Result<Self> {
        match self.layout.reshape(shape) {
            Ok(l) => Ok(self.with_layout(l)),
            Err(crate::layout::LayoutError::NeedsCopy { .. }) => {
                crate::convert::contiguous_copy(self)?.reshape_view(shape)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// A view with a new shape (at most one `-1`), keeping row-major element order.
    /// Fails with [`crate::LayoutError::NeedsCopy`] where no strides express it.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::<u16>::zeros(&stream, &[6, 4])?;
    /// assert!(a.transpose().reshape_view(&[24]).is_err());
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn reshape_view(&self, shape: &[isize]) -> Result<Self> {
        Ok(self.with_layout(self.layout.reshape(shape)?))
    }

    /// One axis in row-major order: a view where possible, else a copy (see
    /// [`GpuArray::reshape`]).
    pub fn ravel(&self) -> Result<Self> {
        match self.layout.ravel() {
            Ok(l) => Ok(self.with_layout(l)),
            Err(crate::layout::LayoutError::NeedsCopy { .. }) => {
                crate::convert::contiguous_copy(self)?.ravel()
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Every axis of length 1 removed.
    pub fn squeeze(&self) -> Self {
        self.with_layout(self.layout.squeeze())
    }

    /// One axis of length 1 removed.
    pub fn squeeze_axis(&self, axis: isize) -> Result<Self> {
        Ok(self.with_layout(self.layout.squeeze_axis(axis)?))
    }

    /// A new axis of length 1 before `axis` (NumPy's `expand_dims`).
    pub fn insert_axis(&self, axis: isize) -> Result<Self> {
        Ok(self.with_layout(self.layout.insert_axis(axis)?))
    }

    /// One axis reversed (NumPy's `flip`).
    pub fn flip(&self, axis: isize) -> Result<Self> {
        Ok(self.with_layout(self.layout.flip(axis)?))
    }

    /// Every axis reversed (a 1-D array's `reverse`).
    pub fn reverse(&self) -> Result<Self> {
        let mut l = self.layout.clone();
        for a in 0..l.ndim() {
            l = l.flip(a as isize)?;
        }
        Ok(self.with_layout(l))
    }

    /// A read-only-in-spirit view stretched to `shape` (stride 0 on broadcast axes);
    /// writing through it is refused.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Self> {
        Ok(self.with_layout(self.layout.broadcast_to(shape)?))
    }
}
