//! A user-defined order: sort by a key computed from each element with a CUDA C
//! expression (the generators' style, as `ReductionKernel`'s `map_expr`), through the
//! radix sort of pairs.

use super::api::SortOrder;
use crate::dtype::Element;
use crate::elementwise::ElementwiseKernel;
use crate::error::Result;
use crate::GpuArray;

impl<T: Element> GpuArray<T> {
    /// The elements sorted along `axis` by the key `key_expr` computes from each element
    /// `x` (any sortable key type `K`: `abs(x)` as an `f32` orders by magnitude, a
    /// `(unsigned int)` bit pattern orders by any field), stable, with the sorted keys.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{GpuArray, sort::SortOrder};
    /// let a = GpuArray::from_slice(&stream, &[-3.0f32, 1.0, -2.0, 0.5])?;
    /// // SAFETY: the expression reads only `x` and has no undefined behaviour.
    /// let (by_size, keys) = unsafe { a.sort_by_key_expr::<f32>("fabsf(x)", -1, SortOrder::Ascending) }?;
    /// assert_eq!(by_size.to_vec()?, vec![0.5, 1.0, -2.0, -3.0]);
    /// assert_eq!(keys.to_vec()?, vec![0.5, 1.0, 2.0, 3.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    ///
    /// # Safety
    /// `key_expr` is CUDA C compiled and run as written, once per element, with the
    /// element as `x` (of this array's C type) and converted to `K`'s C type: it must read
    /// nothing but `x` and be free of undefined behaviour.
    pub unsafe fn sort_by_key_expr<K: Element>(
        &self,
        key_expr: &str,
        axis: isize,
        order: SortOrder,
    ) -> Result<(GpuArray<T>, GpuArray<K>)> {
        super::keys::KeyBits::of(K::DTYPE)?;
        let stream = self.stream().clone();
        let mut keys = GpuArray::<K>::empty(&stream, self.shape())?;
        let arguments = format!(
            "const {} *sort_elements, {} *sort_keys",
            T::DTYPE.c_type(),
            K::DTYPE.c_type()
        );
        let operation = format!(
            "{{ const {t} x = sort_elements[i]; sort_keys[i] = ({k})({key_expr}); }}",
            t = T::DTYPE.c_type(),
            k = K::DTYPE.c_type()
        );
        // SAFETY: the operation reads element i of the input and writes element i of the
        // keys (same shape); the key expression's own contract is the caller's.
        let kernel = unsafe { ElementwiseKernel::new(&arguments, &operation, "sort_key_expr") }?;
        kernel.call(&stream, &[self.into(), (&mut keys).into()])?;
        let (sorted_keys, elements) = keys.sort_by_key(self, axis, order)?;
        Ok((elements, sorted_keys))
    }
}
