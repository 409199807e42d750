//! Raw, stream-ordered copies and memsets between host slices and device addresses
//! inside array buffers (the driver's `DeviceBuffer` methods take `&mut self`, while an
//! array's buffer is shared by its views).

use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::{check, driver, Error as DriverError, Stream};

use crate::error::Result;

/// Copies `src` to `dst` on `stream` and waits for it.
///
/// # Safety
/// `dst` must be the start of `size_of_val(src)` writable device bytes of the stream's
/// context.
pub(crate) unsafe fn host_to_device<S: bytemuck::Pod>(
    stream: &Stream,
    dst: CUdeviceptr,
    src: &[S],
) -> Result<()> {
    let bytes = std::mem::size_of_val(src);
    if bytes == 0 {
        return Ok(());
    }
    stream.context().bind()?;
    let f = driver()?
        .cuMemcpyHtoDAsync_v2()
        .map_err(DriverError::from)?;
    // SAFETY: the caller vouches for the device range; `src` holds `bytes` bytes and is
    // borrowed until the synchronisation below.
    let code = unsafe { f(dst, src.as_ptr().cast(), bytes, stream.raw()) };
    check(code, "cuMemcpyHtoDAsync_v2")?;
    stream.synchronize()?;
    Ok(())
}

/// Copies device bytes at `src` into `dst` on `stream` and waits for it.
///
/// # Safety
/// `src` must be the start of `size_of_val(dst)` readable device bytes of the stream's
/// context, holding valid values of `S` (any bits are valid for `Pod`).
pub(crate) unsafe fn device_to_host<S: bytemuck::Pod>(
    stream: &Stream,
    src: CUdeviceptr,
    dst: &mut [S],
) -> Result<()> {
    let bytes = std::mem::size_of_val(dst);
    if bytes == 0 {
        return Ok(());
    }
    stream.context().bind()?;
    let f = driver()?
        .cuMemcpyDtoHAsync_v2()
        .map_err(DriverError::from)?;
    // SAFETY: the caller vouches for the device range; `dst` holds `bytes` writable bytes
    // and stays borrowed until the copy is done (synchronised below).
    let code = unsafe { f(dst.as_mut_ptr().cast(), src, bytes, stream.raw()) };
    check(code, "cuMemcpyDtoHAsync_v2")?;
    stream.synchronize()?;
    Ok(())
}

/// Copies `bytes` from device `src` to device `dst`, ordered on `stream` (no wait).
///
/// # Safety
/// Both ranges must be valid device memory of the stream's context.
pub(crate) unsafe fn device_to_device(
    stream: &Stream,
    dst: CUdeviceptr,
    src: CUdeviceptr,
    bytes: usize,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    stream.context().bind()?;
    let f = driver()?
        .cuMemcpyDtoDAsync_v2()
        .map_err(DriverError::from)?;
    // SAFETY: the caller vouches for both ranges.
    let code = unsafe { f(dst, src, bytes, stream.raw()) };
    check(code, "cuMemcpyDtoDAsync_v2")?;
    Ok(())
}

/// Fills `count` elements of `pattern.len()` bytes (1, 2 or 4) at `dst` with `pattern`,
/// ordered on `stream`. Returns `false` (doing nothing) for other element sizes.
///
/// # Safety
/// `dst` must be the start of `count * pattern.len()` writable device bytes of the
/// stream's context, aligned to `pattern.len()`.
pub(crate) unsafe fn fill_pattern(
    stream: &Stream,
    dst: CUdeviceptr,
    pattern: &[u8],
    count: usize,
) -> Result<bool> {
    if count == 0 {
        return Ok(true);
    }
    stream.context().bind()?;
    let d = driver()?;
    let s = stream.raw();
    match *pattern {
        [b] => {
            let f = d.cuMemsetD8Async().map_err(DriverError::from)?;
            // SAFETY: the caller vouches for the range and its alignment.
            check(unsafe { f(dst, b, count, s) }, "cuMemsetD8Async")?;
        }
        [a, b] => {
            let f = d.cuMemsetD16Async().map_err(DriverError::from)?;
            let v = u16::from_ne_bytes([a, b]);
            // SAFETY: the caller vouches for the range and its alignment.
            check(unsafe { f(dst, v, count, s) }, "cuMemsetD16Async")?;
        }
        [a, b, c, e] => {
            let f = d.cuMemsetD32Async().map_err(DriverError::from)?;
            let v = u32::from_ne_bytes([a, b, c, e]);
            // SAFETY: the caller vouches for the range and its alignment.
            check(unsafe { f(dst, v, count, s) }, "cuMemsetD32Async")?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}
