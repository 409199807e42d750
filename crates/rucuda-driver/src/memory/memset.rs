//! Filling device memory with a repeated 8-, 16- or 32-bit value: PyCUDA's `memset_d8/16/32`,
//! the 2D forms `memset_d2d8/16/32` over pitched rows, and their asynchronous forms on a
//! stream. Counts are in elements of the value's width and checked against the target's
//! size and alignment before the driver sees them.

use rucuda_driver_sys::CUdeviceptr;

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::memory::pointer::DevicePtrMut;
use crate::memory::tracking::{finish_legacy_stream, Access};
use crate::streams::stream::Stream;

/// Checks a 1D fill of `count` elements of `width` bytes at the start of `dst`.
pub(crate) fn check_1d(
    ptr: CUdeviceptr,
    byte_len: usize,
    width: usize,
    count: usize,
) -> Result<()> {
    let bytes = count.checked_mul(width).ok_or_else(|| {
        Error::invalid(format!(
            "memset of {count} elements of {width} bytes overflows"
        ))
    })?;
    if bytes > byte_len {
        return Err(Error::invalid(format!(
            "memset of {count} elements of {width} bytes ({bytes} bytes) into a target of {byte_len} bytes"
        )));
    }
    if count > 0 && ptr % width as u64 != 0 {
        return Err(Error::invalid(format!(
            "memset of {width}-byte values at {ptr:#x}, which is not {width}-byte aligned"
        )));
    }
    Ok(())
}

/// Checks a 2D fill of `height` rows of `width_elems` elements of `width` bytes, rows
/// `pitch` bytes apart, at the start of `dst`.
pub(crate) fn check_2d(
    ptr: CUdeviceptr,
    byte_len: usize,
    width: usize,
    pitch: usize,
    width_elems: usize,
    height: usize,
) -> Result<()> {
    if width_elems == 0 || height == 0 {
        return Ok(());
    }
    let overflow = || Error::invalid("2D memset extent overflows usize");
    let row_bytes = width_elems.checked_mul(width).ok_or_else(overflow)?;
    if pitch < row_bytes {
        return Err(Error::invalid(format!(
            "2D memset rows of {row_bytes} bytes do not fit a pitch of {pitch} bytes"
        )));
    }
    let extent = (height - 1)
        .checked_mul(pitch)
        .and_then(|b| b.checked_add(row_bytes))
        .ok_or_else(overflow)?;
    if extent > byte_len {
        return Err(Error::invalid(format!(
            "2D memset of {height} rows of {row_bytes} bytes, pitch {pitch}, spans {extent} bytes; the target has {byte_len}"
        )));
    }
    if ptr % width as u64 != 0 || pitch % width != 0 {
        return Err(Error::invalid(format!(
            "2D memset of {width}-byte values needs a {width}-byte aligned address and pitch \
             (address {ptr:#x}, pitch {pitch})"
        )));
    }
    Ok(())
}

macro_rules! memset_1d {
    ($(#[$doc:meta])* $name:ident, $name_async:ident, $t:ty, $f:ident, $f_async:ident) => {
        $(#[$doc])*
        pub fn $name(ctx: &Context, dst: &mut impl DevicePtrMut, value: $t, count: usize) -> Result<()> {
            let range = dst.device_range();
            check_1d(range.address(), range.byte_len(), std::mem::size_of::<$t>(), count)?;
            if count == 0 {
                return Ok(());
            }
            ctx.bind()?;
            let ptr = range.use_on(&Stream::null(ctx), Access::Write)?;
            // SAFETY: `count` elements lie inside `dst` (checked), which `&mut` borrows;
            // the legacy stream runs the memset after conflicting work (ordered above).
            unsafe { call!($f(ptr.ptr(), value, count))? };
            finish_legacy_stream(ctx)
        }

        #[doc = concat!("[`", stringify!($name), "`] ordered on `stream` (returns before it runs).")]
        pub fn $name_async(
            dst: &mut impl DevicePtrMut,
            value: $t,
            count: usize,
            stream: &Stream,
        ) -> Result<()> {
            let range = dst.device_range();
            check_1d(range.address(), range.byte_len(), std::mem::size_of::<$t>(), count)?;
            if count == 0 {
                return Ok(());
            }
            stream.context().bind()?;
            let ptr = range.use_on(stream, Access::Write)?;
            // SAFETY: as for the synchronous form; the log records the use (above).
            unsafe { call!($f_async(ptr.ptr(), value, count, stream.raw())) }
        }
    };
}

macro_rules! memset_2d {
    ($(#[$doc:meta])* $name:ident, $name_async:ident, $t:ty, $f:ident, $f_async:ident) => {
        $(#[$doc])*
        pub fn $name(
            ctx: &Context,
            dst: &mut impl DevicePtrMut,
            pitch: usize,
            value: $t,
            width: usize,
            height: usize,
        ) -> Result<()> {
            let range = dst.device_range();
            check_2d(range.address(), range.byte_len(), std::mem::size_of::<$t>(), pitch, width, height)?;
            if width == 0 || height == 0 {
                return Ok(());
            }
            ctx.bind()?;
            let ptr = range.use_on(&Stream::null(ctx), Access::Write)?;
            // SAFETY: every row lies inside `dst` (checked), which `&mut` borrows; the
            // legacy stream runs the memset after conflicting work (ordered above).
            unsafe { call!($f(ptr.ptr(), pitch, value, width, height))? };
            finish_legacy_stream(ctx)
        }

        #[doc = concat!("[`", stringify!($name), "`] ordered on `stream` (returns before it runs).")]
        pub fn $name_async(
            dst: &mut impl DevicePtrMut,
            pitch: usize,
            value: $t,
            width: usize,
            height: usize,
            stream: &Stream,
        ) -> Result<()> {
            let range = dst.device_range();
            check_2d(range.address(), range.byte_len(), std::mem::size_of::<$t>(), pitch, width, height)?;
            if width == 0 || height == 0 {
                return Ok(());
            }
            stream.context().bind()?;
            let ptr = range.use_on(stream, Access::Write)?;
            // SAFETY: as for the synchronous form; the log records the use (above).
            unsafe { call!($f_async(ptr.ptr(), pitch, value, width, height, stream.raw())) }
        }
    };
}

memset_1d!(
    /// Sets the first `count` bytes of `dst` to `value` (PyCUDA's `memset_d8`).
    ///
    /// ```no_run
    /// use rucuda_driver::*;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let mut buf = DeviceBuffer::<u8>::uninit(&ctx, 100)?;
    /// memset_d8(&ctx, &mut buf, 0xFF, 100)?;
    /// assert!(buf.to_vec()?.iter().all(|&b| b == 0xFF));
    /// # Ok::<(), Error>(())
    /// ```
    memset_d8, memset_d8_async, u8, cuMemsetD8_v2, cuMemsetD8Async
);
memset_1d!(
    /// Sets the first `count` 16-bit elements of `dst` to `value` (PyCUDA's `memset_d16`);
    /// `dst` must be 2-byte aligned.
    ///
    /// ```no_run
    /// use rucuda_driver::*;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let mut buf = DeviceBuffer::<u16>::uninit(&ctx, 100)?;
    /// memset_d16(&ctx, &mut buf.slice_mut(10..)?, 0xBEEF, 90)?;
    /// # Ok::<(), Error>(())
    /// ```
    memset_d16, memset_d16_async, u16, cuMemsetD16_v2, cuMemsetD16Async
);
memset_1d!(
    /// Sets the first `count` 32-bit elements of `dst` to `value` (PyCUDA's `memset_d32`);
    /// `dst` must be 4-byte aligned. Fill floats with `value.to_bits()`.
    ///
    /// ```no_run
    /// use rucuda_driver::*;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let mut buf = DeviceBuffer::<f32>::uninit(&ctx, 100)?;
    /// memset_d32(&ctx, &mut buf, 1.5f32.to_bits(), 100)?;
    /// assert_eq!(buf.to_vec()?, vec![1.5; 100]);
    /// # Ok::<(), Error>(())
    /// ```
    memset_d32, memset_d32_async, u32, cuMemsetD32_v2, cuMemsetD32Async
);
memset_2d!(
    /// Sets `width` bytes in each of `height` rows, `pitch` bytes apart, to `value`
    /// (PyCUDA's `memset_d2d8`).
    ///
    /// ```no_run
    /// use rucuda_driver::*;
    /// let ctx = Device::get(0)?.primary_context()?;
    /// let mut img = mem_alloc_pitch(&ctx, 640, 480, 4)?;
    /// let pitch = img.pitch();
    /// memset_d2d8(&ctx, &mut img, pitch, 0, 640, 480)?;
    /// # Ok::<(), Error>(())
    /// ```
    memset_d2d8, memset_d2d8_async, u8, cuMemsetD2D8_v2, cuMemsetD2D8Async
);
memset_2d!(
    /// Sets `width` 16-bit elements in each of `height` rows, `pitch` bytes apart, to
    /// `value` (PyCUDA's `memset_d2d16`); address and pitch must be 2-byte aligned.
    memset_d2d16, memset_d2d16_async, u16, cuMemsetD2D16_v2, cuMemsetD2D16Async
);
memset_2d!(
    /// Sets `width` 32-bit elements in each of `height` rows, `pitch` bytes apart, to
    /// `value` (PyCUDA's `memset_d2d32`); address and pitch must be 4-byte aligned.
    memset_d2d32, memset_d2d32_async, u32, cuMemsetD2D32_v2, cuMemsetD2D32Async
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn one_dimensional_bounds_are_checked_in_elements_of_the_width() {
        assert!(check_1d(0x1000, 100, 1, 100).is_ok());
        assert!(check_1d(0x1000, 100, 1, 101).is_err());
        assert!(check_1d(0x1000, 100, 2, 50).is_ok());
        assert!(check_1d(0x1000, 100, 2, 51).is_err());
        assert!(check_1d(0x1000, 100, 4, 25).is_ok());
        let e = check_1d(0x1000, 100, 4, 26).expect_err("104 bytes > 100");
        assert_eq!(e.kind(), ErrorKind::Logic);
        assert!(e.to_string().contains("104 bytes"), "{e}");
        assert!(check_1d(0x1000, 100, 4, usize::MAX).is_err());
        assert!(check_1d(0x1000, 0, 4, 0).is_ok());
    }

    #[test]
    fn one_dimensional_alignment_is_checked() {
        assert!(check_1d(0x1001, 100, 1, 10).is_ok());
        assert!(check_1d(0x1001, 100, 2, 10).is_err());
        assert!(check_1d(0x1002, 100, 2, 10).is_ok());
        let e = check_1d(0x1002, 100, 4, 10).expect_err("misaligned");
        assert!(e.to_string().contains("aligned"), "{e}");
        assert!(check_1d(0x1002, 100, 4, 0).is_ok());
    }

    #[test]
    fn two_dimensional_extent_pitch_and_alignment_are_checked() {
        // 3 rows of 10 bytes, pitch 16: the last row ends at 2*16 + 10 = 42.
        assert!(check_2d(0x1000, 42, 1, 16, 10, 3).is_ok());
        assert!(check_2d(0x1000, 41, 1, 16, 10, 3).is_err());
        // Rows wider than the pitch.
        assert!(check_2d(0x1000, 1000, 4, 16, 5, 3).is_err());
        assert!(check_2d(0x1000, 1000, 4, 20, 5, 3).is_ok());
        // Pitch not a multiple of the width.
        assert!(check_2d(0x1000, 1000, 4, 22, 5, 3).is_err());
        assert!(check_2d(0x1000, 1000, 2, 22, 5, 3).is_ok());
        // Address alignment.
        assert!(check_2d(0x1002, 1000, 4, 20, 5, 3).is_err());
        // Empty extents are always fine.
        assert!(check_2d(0x1003, 0, 4, 0, 0, 3).is_ok());
        assert!(check_2d(0x1003, 0, 4, 7, 5, 0).is_ok());
        assert!(check_2d(0x1000, usize::MAX, 4, usize::MAX, 1, usize::MAX).is_err());
    }
}
