//! The whole-array reductions with their result allocated by an [`ArrayAllocator`]
//! (PyCUDA's `allocator=`): `sum_with`, `sum_as_with`, `dot_with`, `max_with`,
//! `min_with`, `argmax_with`, `argmin_with`, `any_with`, `all_with`. Same kernels and
//! semantics as the plain forms (`array_reduce.rs`); only the 0-d result comes from the
//! allocator.

use crate::allocator::ArrayAllocator;
use crate::dtype::Element;
use crate::elementwise::KernelValue;
use crate::error::{ArrayError, Result};
use crate::reduction::{builtin_kernel, Builtin};
use crate::GpuArray;

impl<T: Element> GpuArray<T> {
    fn reduce_into<U: Element>(
        &self,
        builtin: Builtin,
        args: &[KernelValue<'_>],
        alloc: &impl ArrayAllocator,
    ) -> Result<GpuArray<U>> {
        let mut out = alloc.empty::<U>(self.stream(), &[])?;
        builtin_kernel(builtin)?.call_into::<U>(self.stream(), args, &mut out)?;
        Ok(out)
    }

    fn refuse_empty(&self, operation: &str) -> Result<()> {
        if self.is_empty() {
            return Err(ArrayError::InvalidArgument(format!(
                "{operation} of an empty array: the operation has no identity (NumPy raises too)"
            )));
        }
        Ok(())
    }

    /// [`GpuArray::sum`] into an array from `alloc`.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{allocator::ArenaAllocator, GpuArray};
    /// let arena = ArenaAllocator::new(4096);
    /// let x = GpuArray::from_slice(&stream, &[1.0f64, 2.0, 3.0])?;
    /// assert_eq!(x.sum_with(&arena)?.to_scalar()?, 6.0);
    /// assert_eq!(x.max_with(&arena)?.to_scalar()?, 3.0);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn sum_with(&self, alloc: &impl ArrayAllocator) -> Result<GpuArray<T>> {
        self.sum_as_with::<T>(alloc)
    }

    /// [`GpuArray::sum_as`] into an array from `alloc`.
    pub fn sum_as_with<U: Element>(&self, alloc: &impl ArrayAllocator) -> Result<GpuArray<U>> {
        let b = Builtin::Sum {
            input: T::DTYPE,
            output: U::DTYPE,
        };
        self.reduce_into::<U>(b, &[self.into()], alloc)
    }

    /// [`GpuArray::dot`] into an array from `alloc`.
    pub fn dot_with(
        &self,
        other: &GpuArray<T>,
        alloc: &impl ArrayAllocator,
    ) -> Result<GpuArray<T>> {
        self.reduce_into::<T>(Builtin::Dot(T::DTYPE), &[self.into(), other.into()], alloc)
    }

    /// [`GpuArray::max`] into an array from `alloc`.
    pub fn max_with(&self, alloc: &impl ArrayAllocator) -> Result<GpuArray<T>> {
        self.refuse_empty("max")?;
        self.reduce_into::<T>(Builtin::Max(T::DTYPE), &[self.into()], alloc)
    }

    /// [`GpuArray::min`] into an array from `alloc`.
    pub fn min_with(&self, alloc: &impl ArrayAllocator) -> Result<GpuArray<T>> {
        self.refuse_empty("min")?;
        self.reduce_into::<T>(Builtin::Min(T::DTYPE), &[self.into()], alloc)
    }

    /// [`GpuArray::argmax`] into an array from `alloc`.
    pub fn argmax_with(&self, alloc: &impl ArrayAllocator) -> Result<GpuArray<i64>> {
        self.refuse_empty("argmax")?;
        self.reduce_into::<i64>(Builtin::ArgMax(T::DTYPE), &[self.into()], alloc)
    }

    /// [`GpuArray::argmin`] into an array from `alloc`.
    pub fn argmin_with(&self, alloc: &impl ArrayAllocator) -> Result<GpuArray<i64>> {
        self.refuse_empty("argmin")?;
        self.reduce_into::<i64>(Builtin::ArgMin(T::DTYPE), &[self.into()], alloc)
    }

    /// [`GpuArray::any`] into an array from `alloc`.
    pub fn any_with(&self, alloc: &impl ArrayAllocator) -> Result<GpuArray<bool>> {
        self.reduce_into::<bool>(Builtin::Any(T::DTYPE), &[self.into()], alloc)
    }

    /// [`GpuArray::all`] into an array from `alloc`.
    pub fn all_with(&self, alloc: &impl ArrayAllocator) -> Result<GpuArray<bool>> {
        self.reduce_into::<bool>(Builtin::All(T::DTYPE), &[self.into()], alloc)
    }
}
