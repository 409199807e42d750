//! PyCUDA's byte-offset copies into and out of [`CudaArray`]s: `memcpy_htoa`,
//! `memcpy_atoh`, `memcpy_dtoa`, `memcpy_atod`, `memcpy_atoa`. They use the driver's 1D
//! calls on 1D arrays; on 2D, 3D, layered and cubemap arrays they copy whole rows, so
//! offset and length must be multiples of the row size. Everything else takes
//! [`crate::Memcpy2D`] or [`crate::Memcpy3D`].

use super::structured::Memcpy3D;
use crate::arrays::cuda_array::CudaArray;
use crate::arrays::descriptor::ArrayDescriptor3D;
use crate::error::{call, Error, Result};
use crate::memory::pointer::DevicePtrMut;
use crate::memory::tracking::finish_legacy_stream;
use crate::memory::tracking::Access;
use crate::memory::tracking::DevicePtr;
use crate::repr::DeviceRepr;
use crate::streams::stream::Stream;

/// A run of whole rows of an array and where it starts in the linear memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowBox {
    pub(crate) y: usize,
    pub(crate) z: usize,
    pub(crate) rows: usize,
    pub(crate) slices: usize,
    /// Byte offset of the box's first row from the start of the copied range.
    pub(crate) linear_offset: usize,
}

fn is_1d(desc: &ArrayDescriptor3D) -> bool {
    desc.height == 0 && desc.depth == 0
}

/// Checks that `[offset, offset + len)` lies in the array.
fn check_range(op: &str, array: &CudaArray, offset: usize, len: usize) -> Result<()> {
    let total = array.byte_size()?;
    match offset.checked_add(len) {
        Some(end) if end <= total => Ok(()),
        _ => Err(Error::invalid(format!(
            "{op}: bytes {offset}..{} lie outside the array's {total} bytes",
            offset.saturating_add(len)
        ))),
    }
}

/// Splits the byte range `[offset, offset + len)` of an array of shape `desc` into at
/// most three boxes of whole rows: the rest of a first slice, whole slices, the start of
/// a last slice.
pub(crate) fn row_boxes(
    op: &str,
    desc: &ArrayDescriptor3D,
    offset: usize,
    len: usize,
) -> Result<Vec<RowBox>> {
    let row = desc.row_bytes()?;
    if offset % row != 0 || len % row != 0 {
        return Err(Error::invalid(format!(
            "{op}: on a 2D, 3D, layered or cubemap array the offset ({offset}) and length \
             ({len}) must be whole rows ({row} bytes); use Memcpy2D or Memcpy3D for other boxes"
        )));
    }
    let per_slice = desc.rows();
    let (start, mut left) = (offset / row, len / row);
    let mut at = start;
    let mut boxes = Vec::new();
    let make = |at: usize, rows: usize, slices: usize| RowBox {
        y: at % per_slice,
        z: at / per_slice,
        rows,
        slices,
        linear_offset: (at - start) * row,
    };
    if left > 0 && at % per_slice != 0 {
        let rows = left.min(per_slice - at % per_slice);
        boxes.push(make(at, rows, 1));
        at += rows;
        left -= rows;
    }
    if left >= per_slice {
        let slices = left / per_slice;
        boxes.push(make(at, per_slice, slices));
        at += slices * per_slice;
        left -= slices * per_slice;
    }
    if left > 0 {
        boxes.push(make(at, left, 1));
    }
    Ok(boxes)
}

/// Copies host data into an array from byte `offset` (PyCUDA's `memcpy_htoa(ary, index,
/// src)`): `cuMemcpyHtoA` on a 1D array, whole rows otherwise.
///
/// ```no_run
/// # use rucuda_driver::*;
/// # let ctx = Device::get(0)?.primary_context()?;
/// let mut line = CudaArray::new(&ctx, &ArrayDescriptor::new(256, 0, ArrayFormat::F32, 1))?;
/// memcpy_htoa(&mut line, 16 * 4, &[1.0f32; 32])?; // elements 16..48
/// # Ok::<(), Error>(())
/// ```
pub fn memcpy_htoa<T: DeviceRepr>(dst: &mut CudaArray, offset: usize, src: &[T]) -> Result<()> {
    let len = std::mem::size_of_val(src);
    check_range("memcpy_htoa", dst, offset, len)?;
    if len == 0 {
        return Ok(());
    }
    if is_1d(dst.desc()) {
        dst.context().bind()?;
        // SAFETY: `src` holds `len` bytes; the range lies in the array (checked).
        return unsafe { call!(cuMemcpyHtoA_v2(dst.raw(), offset, src.as_ptr().cast(), len)) };
    }
    let desc = *dst.desc();
    let (row, ctx) = (desc.row_bytes()?, dst.context().clone());
    for b in row_boxes("memcpy_htoa", &desc, offset, len)? {
        rows_into_array(Memcpy3D::new(&ctx).src_host(src), &b, row, dst)?;
    }
    Ok(())
}

/// Copies from byte `offset` of an array into host memory, filling `dst` (PyCUDA's
/// `memcpy_atoh(dest, ary, index)`).
pub fn memcpy_atoh<T: DeviceRepr>(dst: &mut [T], src: &CudaArray, offset: usize) -> Result<()> {
    let len = std::mem::size_of_val(dst);
    check_range("memcpy_atoh", src, offset, len)?;
    if len == 0 {
        return Ok(());
    }
    if is_1d(src.desc()) {
        src.context().bind()?;
        // SAFETY: `dst` holds `len` writable bytes (any bit pattern is a valid T); the
        // range lies in the array (checked).
        return unsafe {
            call!(cuMemcpyAtoH_v2(
                dst.as_mut_ptr().cast(),
                src.raw(),
                offset,
                len
            ))
        };
    }
    let desc = *src.desc();
    let row = desc.row_bytes()?;
    for b in row_boxes("memcpy_atoh", &desc, offset, len)? {
        rows_out_of_array(
            Memcpy3D::new(src.context()).dst_host(&mut *dst),
            &b,
            row,
            src,
        )?;
    }
    Ok(())
}

/// Copies `len` bytes of device memory into an array from byte `offset` (PyCUDA's
/// `memcpy_dtoa(ary, index, src, len)`).
pub fn memcpy_dtoa<P: DevicePtr + ?Sized>(
    dst: &mut CudaArray,
    offset: usize,
    src: &P,
    len: usize,
) -> Result<()> {
    if len > src.byte_len() {
        return Err(Error::invalid(format!(
            "memcpy_dtoa: {len} bytes asked from device memory of {} bytes",
            src.byte_len()
        )));
    }
    check_range("memcpy_dtoa", dst, offset, len)?;
    if len == 0 {
        return Ok(());
    }
    if is_1d(dst.desc()) {
        let ctx = dst.context().clone();
        ctx.bind()?;
        let s = src
            .device_range()
            .use_on(&Stream::null(&ctx), Access::Read)?;
        // SAFETY: both ranges hold `len` bytes (checked); the legacy stream runs the copy
        // after the work that writes the source (ordered above), finished below.
        unsafe { call!(cuMemcpyDtoA_v2(dst.raw(), offset, s.ptr(), len))? };
        return finish_legacy_stream(&ctx);
    }
    let desc = *dst.desc();
    let (row, ctx) = (desc.row_bytes()?, dst.context().clone());
    for b in row_boxes("memcpy_dtoa", &desc, offset, len)? {
        rows_into_array(Memcpy3D::new(&ctx).src_device(src), &b, row, dst)?;
    }
    Ok(())
}

/// Copies `len` bytes from byte `offset` of an array into device memory (PyCUDA's
/// `memcpy_atod(dest, ary, index, len)`).
pub fn memcpy_atod<P: DevicePtrMut + ?Sized>(
    dst: &mut P,
    src: &CudaArray,
    offset: usize,
    len: usize,
) -> Result<()> {
    if len > dst.byte_len() {
        return Err(Error::invalid(format!(
            "memcpy_atod: {len} bytes into device memory of {} bytes",
            dst.byte_len()
        )));
    }
    check_range("memcpy_atod", src, offset, len)?;
    if len == 0 {
        return Ok(());
    }
    if is_1d(src.desc()) {
        src.context().bind()?;
        let d = dst
            .device_range()
            .use_on(&Stream::null(src.context()), Access::Write)?;
        // SAFETY: both ranges hold `len` bytes (checked); `dst` is writable memory; the
        // legacy stream runs the copy after conflicting work (ordered above), finished
        // when this returns.
        unsafe { call!(cuMemcpyAtoD_v2(d.ptr(), src.raw(), offset, len))? };
        return finish_legacy_stream(src.context());
    }
    let desc = *src.desc();
    let row = desc.row_bytes()?;
    for b in row_boxes("memcpy_atod", &desc, offset, len)? {
        rows_out_of_array(
            Memcpy3D::new(src.context()).dst_device(&mut *dst),
            &b,
            row,
            src,
        )?;
    }
    Ok(())
}

/// Copies `len` bytes from byte `src_offset` of one array to byte `dst_offset` of
/// another (PyCUDA's `memcpy_atoa(dest, dest_index, src, src_index, len)`): any ranges of
/// two 1D arrays, or the same whole-row range of two arrays of one shape.
pub fn memcpy_atoa(
    dst: &mut CudaArray,
    dst_offset: usize,
    src: &CudaArray,
    src_offset: usize,
    len: usize,
) -> Result<()> {
    check_range("memcpy_atoa (destination)", dst, dst_offset, len)?;
    check_range("memcpy_atoa (source)", src, src_offset, len)?;
    if dst.context() != src.context() {
        return Err(Error::invalid(
            "memcpy_atoa: the arrays belong to different contexts",
        ));
    }
    if len == 0 {
        return Ok(());
    }
    let (dd, sd) = (*dst.desc(), *src.desc());
    if is_1d(&dd) && is_1d(&sd) {
        dst.context().bind()?;
        // SAFETY: both ranges lie in their arrays (checked).
        return unsafe {
            call!(cuMemcpyAtoA_v2(
                dst.raw(),
                dst_offset,
                src.raw(),
                src_offset,
                len
            ))
        };
    }
    let same_shape =
        (dd.row_bytes()?, dd.rows(), dd.slices()) == (sd.row_bytes()?, sd.rows(), sd.slices());
    if !same_shape || dst_offset != src_offset {
        return Err(Error::invalid(
            "memcpy_atoa: between arrays that are not both 1D, the arrays must have the same \
             row size, rows and slices and the offsets must be equal; use Memcpy3D for other \
             boxes",
        ));
    }
    let (row, ctx) = (dd.row_bytes()?, dst.context().clone());
    for b in row_boxes("memcpy_atoa", &dd, dst_offset, len)? {
        Memcpy3D::new(&ctx)
            .src_array(src)
            .src_y(b.y)
            .src_z(b.z)
            .dst_array(dst)
            .dst_y(b.y)
            .dst_z(b.z)
            .width_in_bytes(row)
            .height(b.rows)
            .depth(b.slices)
            .execute()?;
    }
    Ok(())
}

/// Copies one row box of dense linear memory (the source `copy` has, from its start)
/// into `dst`'s rows.
fn rows_into_array<'a>(
    copy: Memcpy3D<'a>,
    b: &RowBox,
    row: usize,
    dst: &'a mut CudaArray,
) -> Result<()> {
    copy.advance_src(b.linear_offset)?
        .src_pitch(row)
        .src_height(b.rows)
        .dst_array(dst)
        .dst_y(b.y)
        .dst_z(b.z)
        .width_in_bytes(row)
        .height(b.rows)
        .depth(b.slices)
        .execute()
}

/// Copies one row box of `src`'s rows into dense linear memory (the destination `copy`
/// has, from its start).
fn rows_out_of_array<'a>(
    copy: Memcpy3D<'a>,
    b: &RowBox,
    row: usize,
    src: &'a CudaArray,
) -> Result<()> {
    copy.advance_dst(b.linear_offset)?
        .dst_pitch(row)
        .dst_height(b.rows)
        .src_array(src)
        .src_y(b.y)
        .src_z(b.z)
        .width_in_bytes(row)
        .height(b.rows)
        .depth(b.slices)
        .execute()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrays::format::ArrayFormat;

    #[test]
    fn row_ranges_split_into_at_most_three_boxes() {
        // 4 rows of 10 bytes per slice, 3 slices.
        let desc = ArrayDescriptor3D::d3(10, 4, 3, ArrayFormat::U8, 1);
        let b = |y, z, rows, slices, linear_offset| RowBox {
            y,
            z,
            rows,
            slices,
            linear_offset,
        };
        assert_eq!(
            row_boxes("t", &desc, 0, 120).ok(),
            Some(vec![b(0, 0, 4, 3, 0)])
        );
        // Rows 2..11: rest of slice 0, slice 1, rows 0..3 of slice 2.
        assert_eq!(
            row_boxes("t", &desc, 20, 90).ok(),
            Some(vec![b(2, 0, 2, 1, 0), b(0, 1, 4, 1, 20), b(0, 2, 3, 1, 60)])
        );
        // Inside one slice.
        assert_eq!(
            row_boxes("t", &desc, 50, 20).ok(),
            Some(vec![b(1, 1, 2, 1, 0)])
        );
        assert!(row_boxes("t", &desc, 5, 10).is_err());
        assert!(row_boxes("t", &desc, 10, 15).is_err());
        assert_eq!(row_boxes("t", &desc, 10, 0).ok(), Some(vec![]));
        // A 2D array is one slice.
        let flat = ArrayDescriptor3D::d2(8, 5, ArrayFormat::F32, 1);
        assert_eq!(
            row_boxes("t", &flat, 64, 96).ok(),
            Some(vec![b(2, 0, 3, 1, 0)])
        );
    }
}
