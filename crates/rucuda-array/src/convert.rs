//! Conversions and copies on the device: `astype` between every pair of element types
//! (NumPy's cast semantics), `fill` for every type, strided copies (any view to a
//! contiguous array or into another view, with broadcasting), reversed copies, and
//! `reinterpret` (a view of the same bytes as another type of the same size).
//!
//! All of them are built-in kernels ([`crate::ops::OpKey::Cast`] and
//! [`crate::ops::OpKey::Fill`]), memoized per context; a same-type copy between
//! contiguous arrays is a driver copy.

use crate::device_copy;
use crate::dtype::Element;
use crate::error::{ArrayError, Result};
use crate::layout::Layout;
use crate::ops::engine::{run, Arg};
use crate::ops::key::OpKey;
use crate::ordering::{after_on, before_on};
use crate::GpuArray;

impl<T: Element> GpuArray<T> {
    /// A new array of element type `U`, in this array's memory order (NumPy's default
    /// `order='K'`; [`GpuArray::astype_order`] picks another), holding these elements
    /// converted as NumPy's `astype` does (C casts: float to integer truncates toward zero, anything to
    /// `bool` tests `!= 0`, complex to real takes the real part; see
    /// [`crate::ops`] for the exact rules). Runs on the home stream.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[-1.7f32, 0.0, 2.9])?;
    /// assert_eq!(a.astype::<i32>()?.to_vec()?, vec![-1, 0, 2]);
    /// assert_eq!(a.astype::<bool>()?.to_vec()?, vec![true, false, true]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn astype<U: Element>(&self) -> Result<GpuArray<U>> {
        self.astype_order(crate::layout::Order::K)
    }

    /// Converts these elements into `out` (of `out`'s element type), broadcasting this
    /// array to `out`'s shape. Runs on `out`'s home stream.
    pub fn astype_into<U: Element>(&self, out: &mut GpuArray<U>) -> Result<()> {
        cast_into(self, out)
    }

    /// Sets every element of this array (or view) to `value`, on the device, for every
    /// element type. A broadcast view is refused.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{Complex, GpuArray, SliceArg};
    /// let a = GpuArray::<Complex<f64>>::zeros(&stream, &[4])?;
    /// a.slice(&[SliceArg::stepped(None, None, 2)])?.fill(Complex::new(1.0, -1.0))?;
    /// assert_eq!(a.to_vec()?[2], Complex::new(1.0, -1.0));
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn fill(&self, value: T) -> Result<()> {
        check_writable(self.layout())?;
        let args = [
            Arg::Scalar(crate::elementwise::ScalarValue::new(value)),
            Arg::Out {
                mem: self.memory(),
                layout: self.layout(),
            },
        ];
        run(
            self.stream(),
            OpKey::Fill { dtype: T::DTYPE },
            self.shape(),
            &args,
        )
    }

    /// Copies `src` (broadcast to this array's shape) into this array or view, on this
    /// array's home stream. Overlapping source and destination are handled (the source
    /// is copied first).
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::GpuArray;
    /// let a = GpuArray::<i16>::zeros(&stream, &[2, 3])?;
    /// a.copy_from(&GpuArray::from_slice(&stream, &[1i16, 2, 3])?)?;
    /// assert_eq!(a.to_vec()?, vec![1, 2, 3, 1, 2, 3]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn copy_from(&self, src: &GpuArray<T>) -> Result<()> {
        cast_into(src, self)
    }

    /// A new row-major array with these elements in reversed row-major order (every axis
    /// flipped, PyCUDA's `reverse` for 1-D arrays), made by the strided copy kernel.
    /// [`GpuArray::reverse`] gives the same as a view without copying.
    pub fn reversed(&self) -> Result<Self> {
        contiguous_copy(&self.reverse()?)
    }

    /// The same elements seen as type `U` of the same size (NumPy's `view(dtype)`): a
    /// view sharing the buffer, with the same shape, strides and offset. Reinterpreting
    /// as `bool` requires every byte to be 0 or 1.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// let a = rucuda_array::GpuArray::from_slice(&stream, &[1.0f32, -2.0])?;
    /// let bits = a.reinterpret::<u32>()?;
    /// assert_eq!(bits.to_vec()?, vec![0x3f80_0000, 0xc000_0000]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn reinterpret<U: Element>(&self) -> Result<GpuArray<U>> {
        if T::DTYPE.size_bytes() != U::DTYPE.size_bytes() {
            return Err(ArrayError::InvalidArgument(format!(
                "cannot reinterpret {} ({} bytes) as {} ({} bytes): sizes differ",
                T::DTYPE,
                T::DTYPE.size_bytes(),
                U::DTYPE,
                U::DTYPE.size_bytes()
            )));
        }
        if !self
            .buffer_elements(0, 0)?
            .is_aligned(U::DTYPE.align_bytes())
        {
            return Err(ArrayError::InvalidArgument(format!(
                "cannot reinterpret as {}: the buffer is not aligned to {} bytes",
                U::DTYPE,
                U::DTYPE.align_bytes()
            )));
        }
        let len = self.buffer().len();
        // SAFETY: same element size, so `len` elements of U cover exactly the buffer; the
        // base address is aligned for U and every element lies at a multiple of the size
        // (itself a multiple of the alignment) from it; the storage types are plain data
        // (any bits valid); the layout was checked against `len`.
        Ok(unsafe { GpuArray::<U>::alias_of(self, len, self.layout().clone()) })
    }
}

/// Refuses writing through a view in which several indices share an element.
pub(crate) fn check_writable(layout: &Layout) -> Result<()> {
    if layout.has_broadcast_axes() {
        return Err(ArrayError::WriteToBroadcast {
            shape: layout.shape().to_vec(),
            strides: layout.strides().to_vec(),
        });
    }
    Ok(())
}

/// Converts `src` into `out` (broadcasting `src` to `out`'s shape), on `out`'s stream.
pub(crate) fn cast_into<T: Element, U: Element>(
    src: &GpuArray<T>,
    out: &GpuArray<U>,
) -> Result<()> {
    check_writable(out.layout())?;
    src.layout().broadcast_to(out.shape())?;
    if src.context() != out.context() {
        return Err(ArrayError::ContextMismatch);
    }
    if out.is_empty() {
        return Ok(());
    }
    let same_type = T::DTYPE == U::DTYPE;
    if !same_type {
        // Struct and vector types copy only into themselves.
        crate::dtype::require_number(T::DTYPE, "astype")?;
        crate::dtype::require_number(U::DTYPE, "astype")?;
    }
    if src.shares_buffer_with(out) {
        if same_type && src.layout() == out.layout() && src.memory().same_start(&out.memory()) {
            return Ok(());
        }
        let tmp = contiguous_copy(src)?;
        return cast_into(&tmp, out);
    }
    let stream = out.stream();
    before_on(stream, &[src.stream()])?;
    // One driver copy when both lie densely in the same memory order (C, F or another
    // axis order): the bytes from element 0 on are the elements in the same order.
    let (sl, ol) = (src.layout(), out.layout());
    let same_dense = sl.is_dense_forward() && ol.is_dense_forward() && sl.same_memory_order(ol);
    if same_type && src.len() == out.len() && same_dense {
        let (o, i) = (
            out.memory().elements(out.nbytes())?,
            src.memory().elements(src.nbytes())?,
        );
        device_copy::device_to_device(stream, o, i)?;
    } else {
        let args = [
            Arg::In {
                mem: src.memory(),
                layout: src.layout(),
            },
            Arg::Out {
                mem: out.memory(),
                layout: out.layout(),
            },
        ];
        let key = OpKey::Cast {
            from: T::DTYPE,
            to: U::DTYPE,
        };
        run(stream, key, out.shape(), &args)?;
    }
    after_on(stream, &[src.stream()])
}

/// A row-major contiguous copy of any array (the strided copy kernel for views), on
/// the array's home stream.
pub(crate) fn contiguous_copy<T: Element>(a: &GpuArray<T>) -> Result<GpuArray<T>> {
    let out = GpuArray::<T>::empty(a.stream(), a.shape())?;
    cast_into(a, &out)?;
    Ok(out)
}
