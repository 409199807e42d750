//! The parts of complex arrays: `real` and `imag` as views (writable, as in NumPy), and
//! `conj` as a new array. On real arrays `real` is the array itself (a view), `imag` a
//! new array of zeros and `conj` a copy.

use super::apply::unary_new;
use super::operations::UnaryOp;
use super::promote::RealPart;
use crate::dtype::Element;
use crate::error::Result;
use crate::layout::Layout;
use crate::GpuArray;

impl<T: RealPart> GpuArray<T> {
    /// The real parts: a view sharing this array's buffer (writes go through).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{Complex, GpuArray};
    /// let z = GpuArray::from_slice(&stream, &[Complex::new(1.0f64, 2.0), Complex::new(3.0, 4.0)])?;
    /// assert_eq!(z.real()?.to_vec()?, vec![1.0, 3.0]);
    /// z.imag()?.fill(0.0)?;
    /// assert_eq!(z.to_vec()?[1], Complex::new(3.0, 0.0));
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn real(&self) -> Result<GpuArray<T::Real>> {
        self.part(0)
    }

    /// The imaginary parts: a view for complex arrays, a new array of zeros for real ones.
    pub fn imag(&self) -> Result<GpuArray<T::Real>> {
        if T::DTYPE.is_complex() {
            self.part(1)
        } else {
            GpuArray::<T::Real>::zeros(self.stream(), self.shape())
        }
    }

    /// The complex conjugate as a new array (a copy for real arrays).
    pub fn conj(&self) -> Result<Self> {
        unary_new(UnaryOp::Conj, self)
    }

    /// Component `which` (0 real, 1 imaginary) of every element as a view.
    fn part(&self, which: usize) -> Result<GpuArray<T::Real>> {
        let factor = T::DTYPE.size_bytes() / <T::Real as Element>::DTYPE.size_bytes();
        let l = self.layout();
        let buffer_len = self.buffer().len() * factor;
        let layout = Layout::from_parts(
            l.shape().to_vec(),
            l.strides().iter().map(|&s| s * factor as isize).collect(),
            l.offset() * factor + which,
            buffer_len,
        )?;
        // SAFETY: `factor` real components exactly tile each element of this buffer
        // (complex types are pairs of their real type, same alignment as the part),
        // so `buffer_len` parts cover the same bytes; plain data; the layout was checked
        // against `buffer_len` just above.
        Ok(unsafe { GpuArray::<T::Real>::alias_of(self, buffer_len, layout) })
    }
}
