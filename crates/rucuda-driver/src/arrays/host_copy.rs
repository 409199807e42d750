//! Arrays made from and read back into host memory, whole (`matrix_to_array`,
//! `np_to_array`, `make_multichannel_2d_array`, `array_to_host`, the core of
//! `gpuarray_to_array`), and the layout orders they take.
//!
//! Host data given with a shape is C-ordered (row-major, NumPy's default) and is laid
//! into the array in the [`Order`] asked for, reordered on the host for [`Order::F`] as
//! PyCUDA does. Device data and raw copies are dense in the array's own order: element
//! `(x, y, z)` at index `(z * height + y) * width + x` (rows of `width` elements,
//! `height` rows per slice).

use std::ffi::c_void;

use super::structured::Memcpy3D;
use crate::arrays::cuda_array::CudaArray;
use crate::arrays::descriptor::ArrayDescriptor;
use crate::arrays::descriptor::ArrayDescriptor3D;
use crate::arrays::element::check_element;
use crate::arrays::element::ArrayElement;
use crate::arrays::format::Array3DFlags;
use crate::arrays::reorder::in_order;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::memory::device_buffer::DeviceBuffer;
use crate::memory::pointer::DevicePtrMut;
use crate::memory::tracking::DevicePtr;
use crate::repr::DeviceRepr;

/// How a shape's elements are laid out in an array (PyCUDA's `order`).
///
/// The host data of [`matrix_to_array`], [`host_to_array`] and
/// [`make_multichannel_2d_array`] is always the C-ordered (row-major) block of its
/// shape; the order says how the array holds it, and the data is reordered to it as
/// PyCUDA's `np.asarray(matrix, order=order)` does. `C`: the last index varies fastest,
/// and an array made from shape `[rows, cols]` is `cols` wide, so `tex2D(x, y)` reads
/// `m[y][x]`. `F`: the first index varies fastest (the axes reversed), and the same
/// shape makes an array `rows` wide, so `tex2D(x, y)` reads `m[x][y]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// Row-major: last index fastest.
    #[default]
    C,
    /// Column-major: first index fastest.
    F,
}

/// The array extents `(width, height, depth)` for a shape and order.
///
/// ```
/// use rucuda_driver::{array_extent, Order};
/// assert_eq!(array_extent(&[4, 6], Order::C)?, (6, 4, 0));
/// assert_eq!(array_extent(&[4, 6], Order::F)?, (4, 6, 0));
/// assert_eq!(array_extent(&[2, 3, 5], Order::C)?, (5, 3, 2));
/// # Ok::<(), rucuda_driver::Error>(())
/// ```
pub fn array_extent(shape: &[usize], order: Order) -> Result<(usize, usize, usize)> {
    if shape.contains(&0) {
        return Err(Error::invalid(format!(
            "array shape {shape:?} has an empty dimension"
        )));
    }
    Ok(match (shape, order) {
        ([n], _) => (*n, 0, 0),
        ([rows, cols], Order::C) => (*cols, *rows, 0),
        ([a, b], Order::F) => (*a, *b, 0),
        ([d, h, w], Order::C) => (*w, *h, *d),
        ([w, h, d], Order::F) => (*w, *h, *d),
        _ => {
            return Err(Error::invalid(format!(
                "array shape {shape:?}: an array has 1, 2 or 3 dimensions"
            )))
        }
    })
}

/// The descriptor of an array holding `shape` elements of `T` with `flags`. With
/// [`Array3DFlags::LAYERED`], a 3D shape's slowest dimension counts layers, and a 1D or
/// 2D shape makes a layered array of one layer of that shape (PyCUDA's `np_to_array`
/// with `allowSurfaceBind`).
pub(crate) fn descriptor_for<T: ArrayElement>(
    shape: &[usize],
    order: Order,
    flags: Array3DFlags,
) -> Result<ArrayDescriptor3D> {
    check_element::<T>()?;
    let (w, h, mut d) = array_extent(shape, order)?;
    if flags.contains(Array3DFlags::LAYERED) && shape.len() < 3 {
        d = 1;
    }
    let desc = ArrayDescriptor3D::new(w, h, d, T::FORMAT, T::CHANNELS).with_flags(flags);
    desc.validate()?;
    Ok(desc)
}

fn check_count(op: &str, len: usize, shape: &[usize]) -> Result<()> {
    let n = shape
        .iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b))
        .ok_or_else(|| Error::invalid(format!("{op}: shape {shape:?} overflows usize")))?;
    if n != len {
        return Err(Error::invalid(format!(
            "{op}: shape {shape:?} has {n} elements, the data has {len}"
        )));
    }
    Ok(())
}

impl CudaArray {
    /// `(row bytes, rows, slices, total bytes)` of the whole array.
    fn whole(&self) -> Result<(usize, usize, usize, usize)> {
        let d = self.desc();
        Ok((d.row_bytes()?, d.rows(), d.slices(), d.byte_size()?))
    }

    fn check_whole(&self, op: &str, what: &str, bytes: usize) -> Result<()> {
        let total = self.byte_size()?;
        if bytes != total {
            let d = self.desc();
            return Err(Error::invalid(format!(
                "{op}: {what} has {bytes} bytes, the array has {total} ({} x {} x {} elements \
                 of {} bytes)",
                d.width,
                d.rows(),
                d.slices(),
                d.element_bytes()?
            )));
        }
        Ok(())
    }

    /// Fills the whole array from dense host data of the same byte size.
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// let mut a = CudaArray::new_3d(&ctx, &ArrayDescriptor3D::d3(8, 4, 2, ArrayFormat::F32, 1))?;
    /// a.copy_from_host(&[0.5f32; 8 * 4 * 2])?;
    /// # Ok::<(), Error>(())
    /// ```
    pub fn copy_from_host<T: DeviceRepr>(&mut self, src: &[T]) -> Result<()> {
        self.check_whole(
            "copy_from_host",
            "the host slice",
            std::mem::size_of_val(src),
        )?;
        let (row, rows, slices, _) = self.whole()?;
        let ctx = self.context().clone();
        Memcpy3D::new(&ctx)
            .src_host(src)
            .src_pitch(row)
            .src_height(rows)
            .dst_array(self)
            .width_in_bytes(row)
            .height(rows)
            .depth(slices)
            .execute()
    }

    /// Copies the whole array into dense host memory of the same byte size.
    pub fn copy_to_host<T: DeviceRepr>(&self, dst: &mut [T]) -> Result<()> {
        self.check_whole("copy_to_host", "the host slice", std::mem::size_of_val(dst))?;
        let (row, rows, slices, _) = self.whole()?;
        Memcpy3D::new(self.context())
            .src_array(self)
            .dst_host(dst)
            .dst_pitch(row)
            .dst_height(rows)
            .width_in_bytes(row)
            .height(rows)
            .depth(slices)
            .execute()
    }

    /// The whole array as a new `Vec<T>`; the array's byte size must be a multiple of
    /// `T`'s. PyCUDA has no name for it (`array_to_host` here).
    pub fn to_host_vec<T: DeviceRepr>(&self) -> Result<Vec<T>> {
        let (row, rows, slices, total) = self.whole()?;
        let size = std::mem::size_of::<T>();
        if size == 0 || total % size != 0 {
            return Err(Error::invalid(format!(
                "to_host_vec: the array's {total} bytes are not a whole number of {}-byte {}",
                size,
                T::C_TYPE
            )));
        }
        let n = total / size;
        let mut v = Vec::<T>::with_capacity(n);
        // SAFETY: the spare capacity holds `n` elements (`total` bytes) and outlives the copy.
        let copy = unsafe {
            Memcpy3D::new(self.context()).dst_host_raw(v.as_mut_ptr().cast::<c_void>(), total)
        };
        copy.src_array(self)
            .dst_pitch(row)
            .dst_height(rows)
            .width_in_bytes(row)
            .height(rows)
            .depth(slices)
            .execute()?;
        // SAFETY: the copy wrote all `total` bytes; any bit pattern is a valid T.
        unsafe { v.set_len(n) };
        Ok(v)
    }

    /// Fills the whole array from dense device memory of the same byte size.
    pub fn copy_from_device<P: DevicePtr + ?Sized>(&mut self, src: &P) -> Result<()> {
        self.check_whole("copy_from_device", "the device memory", src.byte_len())?;
        let (row, rows, slices, _) = self.whole()?;
        let ctx = self.context().clone();
        Memcpy3D::new(&ctx)
            .src_device(src)
            .src_pitch(row)
            .src_height(rows)
            .dst_array(self)
            .width_in_bytes(row)
            .height(rows)
            .depth(slices)
            .execute()
    }

    /// Copies the whole array into dense device memory of the same byte size.
    pub fn copy_to_device<P: DevicePtrMut + ?Sized>(&self, dst: &mut P) -> Result<()> {
        self.check_whole("copy_to_device", "the device memory", dst.byte_len())?;
        let (row, rows, slices, _) = self.whole()?;
        Memcpy3D::new(self.context())
            .src_array(self)
            .dst_device(dst)
            .dst_pitch(row)
            .dst_height(rows)
            .width_in_bytes(row)
            .height(rows)
            .depth(slices)
            .execute()
    }

    /// Copies all of `src`, an array of the same row size, rows and slices.
    pub fn copy_from_array(&mut self, src: &CudaArray) -> Result<()> {
        let (row, rows, slices, _) = self.whole()?;
        let (s_row, s_rows, s_slices, _) = src.whole()?;
        if (row, rows, slices) != (s_row, s_rows, s_slices) {
            return Err(Error::invalid(format!(
                "copy_from_array: the source has {s_slices} slices of {s_rows} rows of {s_row} \
                 bytes, the destination {slices} of {rows} of {row}"
            )));
        }
        let ctx = self.context().clone();
        Memcpy3D::new(&ctx)
            .src_array(src)
            .dst_array(self)
            .width_in_bytes(row)
            .height(rows)
            .depth(slices)
            .execute()
    }

    /// An array holding `data`, the C-ordered block of `shape` (1 to 3 dimensions),
    /// laid out in `order` (reordered for [`Order::F`]), with `flags`
    /// ([`Array3DFlags::SURFACE_LDST`] for PyCUDA's `allowSurfaceBind`; with
    /// [`Array3DFlags::LAYERED`] a 3D shape's slowest dimension counts layers and a 2D
    /// shape makes one layer). Format and channels come from `T` (PyCUDA's
    /// `np_to_array`).
    ///
    /// ```no_run
    /// # use rucuda_driver::*;
    /// # let ctx = Device::get(0)?.primary_context()?;
    /// let volume: Vec<f32> = (0..4 * 8 * 16).map(|i| i as f32).collect();
    /// let a = CudaArray::from_host(&ctx, &volume, &[4, 8, 16], Order::C, Array3DFlags::empty())?;
    /// assert_eq!((a.desc().width, a.desc().height, a.desc().depth), (16, 8, 4));
    /// # Ok::<(), Error>(())
    /// ```
    #[doc(alias = "np_to_array")]
    pub fn from_host<T: ArrayElement>(
        ctx: &Context,
        data: &[T],
        shape: &[usize],
        order: Order,
        flags: Array3DFlags,
    ) -> Result<CudaArray> {
        check_count("from_host", data.len(), shape)?;
        let desc = descriptor_for::<T>(shape, order, flags)?;
        let mut array = CudaArray::new_3d(ctx, &desc)?;
        array.copy_from_host(&in_order(data, shape, order))?;
        Ok(array)
    }

    /// A 2D array holding the row-major matrix `data` of `shape = [rows, cols]` laid out
    /// in `order`, created with `cuArrayCreate` (PyCUDA's `matrix_to_array`): with
    /// [`Order::C`], `tex2D(x, y)` reads `m[y][x]`; with [`Order::F`] the matrix is
    /// transposed on the way (`np.asarray(m, order="F")`) and `tex2D(x, y)` reads
    /// `m[x][y]`.
    #[doc(alias = "matrix_to_array")]
    pub fn from_matrix<T: ArrayElement>(
        ctx: &Context,
        data: &[T],
        shape: [usize; 2],
        order: Order,
    ) -> Result<CudaArray> {
        check_count("from_matrix", data.len(), &shape)?;
        let d = descriptor_for::<T>(&shape, order, Array3DFlags::empty())?;
        let desc = ArrayDescriptor::new(d.width, d.height, d.format, d.num_channels);
        let mut array = CudaArray::new(ctx, &desc)?;
        array.copy_from_host(&in_order(data, &shape, order))?;
        Ok(array)
    }

    /// A 2D array of `channels`-channel elements from `data`, the C-ordered block of
    /// shape `[height, width, channels]` ([`Order::C`], copied as is) or
    /// `[channels, width, height]` ([`Order::F`], its axes reversed on the way so the
    /// channels of one element end up adjacent) (PyCUDA's `make_multichannel_2d_array`).
    /// `channels` times `T`'s own channel count must be 1, 2 or 4.
    #[doc(alias = "make_multichannel_2d_array")]
    pub fn from_multichannel_2d<T: ArrayElement>(
        ctx: &Context,
        data: &[T],
        shape: [usize; 3],
        order: Order,
    ) -> Result<CudaArray> {
        check_count("from_multichannel_2d", data.len(), &shape)?;
        check_element::<T>()?;
        let (h, w, c) = match order {
            Order::C => (shape[0], shape[1], shape[2]),
            Order::F => (shape[2], shape[1], shape[0]),
        };
        let channels = u32::try_from(c)
            .ok()
            .and_then(|c| c.checked_mul(T::CHANNELS))
            .filter(|n| matches!(n, 1 | 2 | 4))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "from_multichannel_2d: {c} channels of {} ({} channel(s) each) is not 1, 2 \
                     or 4 array channels",
                    T::C_TYPE,
                    T::CHANNELS
                ))
            })?;
        let desc = ArrayDescriptor::new(w, h, T::FORMAT, channels);
        let mut array = CudaArray::new(ctx, &desc)?;
        array.copy_from_host(&in_order(data, &shape, order))?;
        Ok(array)
    }

    /// An array holding the dense device data `src` of `shape`, already laid out in
    /// `order` (copied as is: no reordering on the device) (the core of PyCUDA's
    /// `gpuarray_to_array`; `GpuArray` itself lives in rucuda-array). Made in `src`'s
    /// context; flags as for [`CudaArray::from_host`].
    #[doc(alias = "gpuarray_to_array")]
    pub fn from_device_buffer<T: ArrayElement>(
        src: &DeviceBuffer<T>,
        shape: &[usize],
        order: Order,
        flags: Array3DFlags,
    ) -> Result<CudaArray> {
        check_count("from_device_buffer", src.len(), shape)?;
        let desc = descriptor_for::<T>(shape, order, flags)?;
        let mut array = CudaArray::new_3d(src.context(), &desc)?;
        array.copy_from_device(src)?;
        Ok(array)
    }
}

/// PyCUDA's `matrix_to_array`: [`CudaArray::from_matrix`].
///
/// ```no_run
/// # use rucuda_driver::*;
/// # let ctx = Device::get(0)?.primary_context()?;
/// let m = vec![1.0f32; 3 * 5];
/// let a = matrix_to_array(&ctx, &m, [3, 5], Order::C)?;
/// assert_eq!(a.descriptor()?.width, 5);
/// # Ok::<(), Error>(())
/// ```
pub fn matrix_to_array<T: ArrayElement>(
    ctx: &Context,
    data: &[T],
    shape: [usize; 2],
    order: Order,
) -> Result<CudaArray> {
    CudaArray::from_matrix(ctx, data, shape, order)
}

/// PyCUDA's `np_to_array` for host data: [`CudaArray::from_host`].
///
/// ```no_run
/// # use rucuda_driver::*;
/// # let ctx = Device::get(0)?.primary_context()?;
/// let a = host_to_array(&ctx, &[7u8; 2 * 3 * 4], &[2, 3, 4], Order::C, Array3DFlags::SURFACE_LDST)?;
/// assert_eq!(a.desc().depth, 2);
/// # Ok::<(), Error>(())
/// ```
#[doc(alias = "np_to_array")]
pub fn host_to_array<T: ArrayElement>(
    ctx: &Context,
    data: &[T],
    shape: &[usize],
    order: Order,
    flags: Array3DFlags,
) -> Result<CudaArray> {
    CudaArray::from_host(ctx, data, shape, order, flags)
}

/// PyCUDA's `make_multichannel_2d_array`: [`CudaArray::from_multichannel_2d`].
///
/// ```no_run
/// # use rucuda_driver::*;
/// # let ctx = Device::get(0)?.primary_context()?;
/// let rgba = vec![0u8; 480 * 640 * 4];
/// let a = make_multichannel_2d_array(&ctx, &rgba, [480, 640, 4], Order::C)?;
/// assert_eq!(a.desc().num_channels, 4);
/// # Ok::<(), Error>(())
/// ```
pub fn make_multichannel_2d_array<T: ArrayElement>(
    ctx: &Context,
    data: &[T],
    shape: [usize; 3],
    order: Order,
) -> Result<CudaArray> {
    CudaArray::from_multichannel_2d(ctx, data, shape, order)
}

/// The whole array as a `Vec<T>`: [`CudaArray::to_host_vec`].
///
/// ```no_run
/// # use rucuda_driver::*;
/// # let ctx = Device::get(0)?.primary_context()?;
/// let a = matrix_to_array(&ctx, &[1i32, 2, 3, 4], [2, 2], Order::C)?;
/// assert_eq!(array_to_host::<i32>(&a)?, vec![1, 2, 3, 4]);
/// # Ok::<(), Error>(())
/// ```
pub fn array_to_host<T: DeviceRepr>(array: &CudaArray) -> Result<Vec<T>> {
    array.to_host_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrays::format::ArrayFormat;
    use crate::repr::vector::Float4;

    #[test]
    fn extents_follow_pycuda_orders() {
        assert_eq!(array_extent(&[7], Order::F).ok(), Some((7, 0, 0)));
        assert_eq!(array_extent(&[3, 5], Order::C).ok(), Some((5, 3, 0)));
        assert_eq!(array_extent(&[3, 5], Order::F).ok(), Some((3, 5, 0)));
        assert_eq!(array_extent(&[2, 3, 5], Order::C).ok(), Some((5, 3, 2)));
        assert_eq!(array_extent(&[2, 3, 5], Order::F).ok(), Some((2, 3, 5)));
        assert!(array_extent(&[2, 0], Order::C).is_err());
        assert!(array_extent(&[], Order::C).is_err());
        assert!(array_extent(&[1, 2, 3, 4], Order::C).is_err());
    }

    #[test]
    fn descriptors_from_types_and_flags() {
        let d = descriptor_for::<Float4>(&[4, 8], Order::C, Array3DFlags::empty()).ok();
        assert_eq!(d, Some(ArrayDescriptor3D::d2(8, 4, ArrayFormat::F32, 4)),);
        // LAYERED with a 2D shape: a 2D array of one layer, as PyCUDA makes.
        let d = descriptor_for::<[u8; 2]>(&[3, 16], Order::C, Array3DFlags::LAYERED).ok();
        assert_eq!(
            d,
            Some(ArrayDescriptor3D::layered_2d(16, 3, 1, ArrayFormat::U8, 2))
        );
        let d = descriptor_for::<f32>(&[3, 16], Order::F, Array3DFlags::LAYERED).ok();
        assert_eq!(
            d,
            Some(ArrayDescriptor3D::layered_2d(3, 16, 1, ArrayFormat::F32, 1))
        );
        let flags = Array3DFlags::LAYERED | Array3DFlags::SURFACE_LDST;
        let d = descriptor_for::<f32>(&[5, 9], Order::C, flags).ok();
        assert_eq!(
            d,
            Some(ArrayDescriptor3D::layered_2d(9, 5, 1, ArrayFormat::F32, 1).with_flags(flags))
        );
        // 1D: one layer of a 1D array; 3D: the slowest dimension counts layers.
        let d = descriptor_for::<f32>(&[7], Order::C, Array3DFlags::LAYERED).ok();
        assert_eq!(
            d,
            Some(ArrayDescriptor3D::layered_1d(7, 1, ArrayFormat::F32, 1))
        );
        let d = descriptor_for::<f32>(&[4, 3, 5], Order::C, Array3DFlags::LAYERED).ok();
        assert_eq!(
            d,
            Some(ArrayDescriptor3D::layered_2d(5, 3, 4, ArrayFormat::F32, 1))
        );
        let d = descriptor_for::<f64>(&[2, 3, 4], Order::C, Array3DFlags::SURFACE_LDST).ok();
        assert_eq!(
            d,
            Some(
                ArrayDescriptor3D::d3(4, 3, 2, ArrayFormat::I32, 2)
                    .with_flags(Array3DFlags::SURFACE_LDST)
            )
        );
        assert!(descriptor_for::<f32>(&[5, 4, 4], Order::C, Array3DFlags::CUBEMAP).is_err());
        assert!(check_count("t", 11, &[3, 4]).is_err());
        assert!(check_count("t", 12, &[3, 4]).is_ok());
    }
}
