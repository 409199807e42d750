//! Reductions and scans as [`GpuArray`] methods: `sum`, `dot`, `max`, `min`, `argmax`,
//! `argmin`, `any`, `all`, the `subset_*` forms, `cumsum`, and `to_scalar` to bring a
//! device scalar to the host.
//!
//! Each runs on the array's home stream and returns a device scalar (a 0-d array), so
//! results can feed other kernels without a round trip; [`GpuArray::to_scalar`] brings
//! one to the host. The kernels are memoized per (operation, element types) and
//! compiled once per context. Non-contiguous views are read through their strides.
//! NaN as in NumPy: `max`/`min` propagate it, `argmax`/`argmin` return the first NaN.

use crate::array::GpuArray;
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::reduction::{builtin_kernel, to_host_scalar, Builtin};
use crate::scan::cumsum_kernel;

impl<T: Element> GpuArray<T> {
    /// The sum of the elements, as a device scalar of the same type (NumPy's `sum` with
    /// `dtype=` the array's; integers wrap, `f16`/`bf16` accumulate in `f32`). An empty
    /// array sums to zero.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::<f32>::arange(&stream, 0.0, 100.0, 1.0)?;
    /// assert_eq!(a.sum()?.to_scalar()?, 4950.0);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn sum(&self) -> Result<GpuArray<T>> {
        self.sum_as::<T>()
    }

    /// The sum with every element converted to `U` first and accumulated in `U` (NumPy's
    /// `sum(dtype=U)`): count `true`s with `sum_as::<i64>()`, sum bytes without wrapping,
    /// sum `f32` in `f64`.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let bytes = rucuda_array::GpuArray::from_slice(&stream, &[200u8, 100, 50])?;
    /// assert_eq!(bytes.sum_as::<i64>()?.to_scalar()?, 350);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn sum_as<U: Element>(&self) -> Result<GpuArray<U>> {
        let k = builtin_kernel(Builtin::Sum {
            input: T::DTYPE,
            output: U::DTYPE,
        })?;
        k.call::<U>(self.stream(), &[self.into()])
    }

    /// The inner product `sum(self[i] * other[i])` over all elements (PyCUDA's `dot`; no
    /// complex conjugation), as a device scalar. The shapes must be equal.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let x = rucuda_array::GpuArray::from_slice(&stream, &[1.0f64, 2.0, 3.0])?;
    /// assert_eq!(x.dot(&x)?.to_scalar()?, 14.0);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn dot(&self, other: &GpuArray<T>) -> Result<GpuArray<T>> {
        let k = builtin_kernel(Builtin::Dot(T::DTYPE))?;
        k.call::<T>(self.stream(), &[self.into(), other.into()])
    }

    /// The largest element (NaN if any element is NaN), as a device scalar. An empty
    /// array is an error, as in NumPy; complex arrays are refused.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[3i16, -7, 12, 5])?;
    /// assert_eq!((a.max()?.to_scalar()?, a.min()?.to_scalar()?), (12, -7));
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn max(&self) -> Result<GpuArray<T>> {
        self.non_empty("max")?;
        builtin_kernel(Builtin::Max(T::DTYPE))?.call::<T>(self.stream(), &[self.into()])
    }

    /// The smallest element (NaN if any element is NaN); see [`GpuArray::max`].
    pub fn min(&self) -> Result<GpuArray<T>> {
        self.non_empty("min")?;
        builtin_kernel(Builtin::Min(T::DTYPE))?.call::<T>(self.stream(), &[self.into()])
    }

    /// The row-major index of the first largest element, or of the first NaN (NumPy's
    /// `argmax` of the flattened array), as a device scalar. An empty array is an error.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[1.0f32, 9.0, 9.0, f32::NAN, 0.5])?;
    /// assert_eq!(a.argmax()?.to_scalar()?, 3);
    /// assert_eq!(a.slice(&[rucuda_array::SliceArg::range(0, 3)])?.argmax()?.to_scalar()?, 1);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn argmax(&self) -> Result<GpuArray<i64>> {
        self.non_empty("argmax")?;
        builtin_kernel(Builtin::ArgMax(T::DTYPE))?.call::<i64>(self.stream(), &[self.into()])
    }

    /// The row-major index of the first smallest element, or of the first NaN; see
    /// [`GpuArray::argmax`].
    pub fn argmin(&self) -> Result<GpuArray<i64>> {
        self.non_empty("argmin")?;
        builtin_kernel(Builtin::ArgMin(T::DTYPE))?.call::<i64>(self.stream(), &[self.into()])
    }

    /// Whether some element is nonzero (NaN counts as nonzero), as a device scalar;
    /// `false` for an empty array.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[0.0f32, -0.0, 2.0])?;
    /// assert!(a.any()?.to_scalar()? && !a.all()?.to_scalar()?);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn any(&self) -> Result<GpuArray<bool>> {
        builtin_kernel(Builtin::Any(T::DTYPE))?.call::<bool>(self.stream(), &[self.into()])
    }

    /// Whether every element is nonzero, as a device scalar; `true` for an empty array.
    pub fn all(&self) -> Result<GpuArray<bool>> {
        builtin_kernel(Builtin::All(T::DTYPE))?.call::<bool>(self.stream(), &[self.into()])
    }

    /// `sum(self[subset[k]])` over the entries of `subset` (PyCUDA's `subset_sum`; the
    /// array is indexed in row-major order). Indices are checked first (one pass over
    /// `subset` and a wait): every one must lie in `0..self.len()`.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::GpuArray;
    /// let a = GpuArray::from_slice(&stream, &[10i32, 20, 30, 40])?;
    /// let idx = GpuArray::from_slice(&stream, &[3i64, 0, 3])?;
    /// assert_eq!(a.subset_sum(&idx)?.to_scalar()?, 90);
    /// assert_eq!(a.subset_max(&idx)?.to_scalar()?, 40);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn subset_sum<I: Element>(&self, subset: &GpuArray<I>) -> Result<GpuArray<T>> {
        let x = self.gatherable(subset)?;
        builtin_kernel(Builtin::SubsetSum {
            value: T::DTYPE,
            index: I::DTYPE,
        })?
        .call::<T>(self.stream(), &[subset.into(), (&x).into()])
    }

    /// `sum(self[subset[k]] * other[subset[k]])` (PyCUDA's `subset_dot`); the shapes of
    /// `self` and `other` must be equal. Indices are checked as for
    /// [`GpuArray::subset_sum`].
    pub fn subset_dot<I: Element>(
        &self,
        other: &GpuArray<T>,
        subset: &GpuArray<I>,
    ) -> Result<GpuArray<T>> {
        if self.shape() != other.shape() {
            return Err(crate::layout::LayoutError::BroadcastTo {
                from: other.shape().to_vec(),
                to: self.shape().to_vec(),
            }
            .into());
        }
        let x = self.gatherable(subset)?;
        let y = other.gatherable(subset)?;
        builtin_kernel(Builtin::SubsetDot {
            value: T::DTYPE,
            index: I::DTYPE,
        })?
        .call::<T>(self.stream(), &[subset.into(), (&x).into(), (&y).into()])
    }

    /// `max(self[subset[k]])` (PyCUDA's `subset_max`); an empty subset is an error.
    pub fn subset_max<I: Element>(&self, subset: &GpuArray<I>) -> Result<GpuArray<T>> {
        subset.non_empty("subset_max")?;
        let x = self.gatherable(subset)?;
        builtin_kernel(Builtin::SubsetMax {
            value: T::DTYPE,
            index: I::DTYPE,
        })?
        .call::<T>(self.stream(), &[subset.into(), (&x).into()])
    }

    /// `min(self[subset[k]])` (PyCUDA's `subset_min`); an empty subset is an error.
    pub fn subset_min<I: Element>(&self, subset: &GpuArray<I>) -> Result<GpuArray<T>> {
        subset.non_empty("subset_min")?;
        let x = self.gatherable(subset)?;
        builtin_kernel(Builtin::SubsetMin {
            value: T::DTYPE,
            index: I::DTYPE,
        })?
        .call::<T>(self.stream(), &[subset.into(), (&x).into()])
    }

    /// The running sum of the elements in row-major order, as a new 1-D array (NumPy's
    /// `cumsum` without an axis; the type is kept, integers wrap). One pass with
    /// decoupled look-back.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[1i64, 2, 3, 4])?;
    /// assert_eq!(a.cumsum()?.to_vec()?, vec![1, 3, 6, 10]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn cumsum(&self) -> Result<GpuArray<T>> {
        let k = cumsum_kernel(T::DTYPE)?;
        let mut out = GpuArray::<T>::empty(self.stream(), &[self.len()])?;
        if self.is_c_contiguous() {
            k.call(self.stream(), self, &mut out)?;
        } else {
            let flat = crate::convert::contiguous_copy(self)?;
            k.call(self.stream(), &flat, &mut out)?;
        }
        Ok(out)
    }

    /// The value of a one-element array (such as a reduction's result) on the host;
    /// waits for the array's stream.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[7u16])?;
    /// assert_eq!(a.to_scalar()?, 7);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn to_scalar(&self) -> Result<T> {
        if self.len() != 1 {
            return Err(ArrayError::LengthMismatch {
                device: self.len(),
                host: 1,
            });
        }
        to_host_scalar(self)
    }

    fn non_empty(&self, operation: &str) -> Result<()> {
        if self.is_empty() {
            return Err(ArrayError::InvalidArgument(format!(
                "{operation} of an empty array: the operation has no identity (NumPy raises too)"
            )));
        }
        Ok(())
    }

    /// This array as a contiguous one (itself or a copy) after checking that every entry
    /// of `subset` indexes it.
    fn gatherable<I: Element>(&self, subset: &GpuArray<I>) -> Result<GpuArray<T>> {
        if !subset.is_empty() {
            let range: [i64; 2] = builtin_kernel(Builtin::IndexRange(I::DTYPE))?
                .call_struct_to_host(subset.stream(), &[subset.into()])?;
            let [lo, hi] = range;
            if lo < 0 || hi < 0 || hi as u64 >= self.len() as u64 {
                let bad = if lo < 0 { lo } else { hi };
                return Err(ArrayError::InvalidArgument(format!(
                    "subset index {bad} is out of range for an array of {} elements",
                    self.len()
                )));
            }
        }
        if self.is_c_contiguous() {
            Ok(self.view())
        } else {
            crate::convert::contiguous_copy(self)
        }
    }
}
