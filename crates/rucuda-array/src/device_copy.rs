//! Stream-ordered copies and memsets between host slices and contiguous ranges of array
//! buffers (the driver's `DeviceBuffer` methods take `&mut self`, while an array's buffer
//! is shared by its views). Each takes a checked [`DeviceRange`] and records its use
//! through it.

use rucuda_driver::{check, driver, Access, DeviceRange, Error as DriverError, Stream};

use crate::error::{ArrayError, Result};

fn same_bytes(what: &str, device: usize, host: usize) -> Result<()> {
    if device == host {
        Ok(())
    } else {
        Err(ArrayError::InvalidArgument(format!(
            "{what}: {host} host bytes for {device} device bytes"
        )))
    }
}

/// Copies `src` into `dst` (same size in bytes) on `stream` and waits for it.
pub(crate) fn host_to_device<S: bytemuck::Pod>(
    stream: &Stream,
    dst: DeviceRange<'_>,
    src: &[S],
) -> Result<()> {
    let bytes = std::mem::size_of_val(src);
    same_bytes("host to device copy", dst.byte_len(), bytes)?;
    if bytes == 0 {
        return Ok(());
    }
    stream.context().bind()?;
    let f = driver()?
        .cuMemcpyHtoDAsync_v2()
        .map_err(DriverError::from)?;
    let d = dst.use_on(stream, Access::Write)?;
    // SAFETY: `dst` holds `bytes` bytes (checked) and records the use; `src` holds
    // `bytes` bytes and is borrowed until the synchronisation below.
    let code = unsafe { f(d.ptr(), src.as_ptr().cast(), bytes, stream.raw()) };
    check(code, "cuMemcpyHtoDAsync_v2")?;
    stream.synchronize()?;
    Ok(())
}

/// Copies `src` into `dst` (same size in bytes) on `stream` and waits for it.
pub(crate) fn device_to_host<S: bytemuck::Pod>(
    stream: &Stream,
    src: DeviceRange<'_>,
    dst: &mut [S],
) -> Result<()> {
    let bytes = std::mem::size_of_val(dst);
    same_bytes("device to host copy", src.byte_len(), bytes)?;
    if bytes == 0 {
        return Ok(());
    }
    stream.context().bind()?;
    let f = driver()?
        .cuMemcpyDtoHAsync_v2()
        .map_err(DriverError::from)?;
    let s = src.use_on(stream, Access::Read)?;
    // SAFETY: `src` holds `bytes` bytes (checked) and records the use; `dst` holds
    // `bytes` writable bytes (any bits are a valid `Pod`) and stays borrowed until the
    // copy is done (synchronised below).
    let code = unsafe { f(dst.as_mut_ptr().cast(), s.ptr(), bytes, stream.raw()) };
    check(code, "cuMemcpyDtoHAsync_v2")?;
    stream.synchronize()?;
    Ok(())
}

/// Copies `src` into `dst` (same size), ordered on `stream` (no wait).
pub(crate) fn device_to_device(
    stream: &Stream,
    dst: DeviceRange<'_>,
    src: DeviceRange<'_>,
) -> Result<()> {
    same_bytes("device to device copy", dst.byte_len(), src.byte_len())?;
    let bytes = src.byte_len();
    if bytes == 0 {
        return Ok(());
    }
    stream.context().bind()?;
    let f = driver()?
        .cuMemcpyDtoDAsync_v2()
        .map_err(DriverError::from)?;
    let s = src.use_on(stream, Access::Read)?;
    let d = dst.use_on(stream, Access::Write)?;
    // SAFETY: both ranges hold `bytes` bytes (checked) and record the use.
    let code = unsafe { f(d.ptr(), s.ptr(), bytes, stream.raw()) };
    check(code, "cuMemcpyDtoDAsync_v2")?;
    Ok(())
}

/// Fills `dst` with `pattern` (1, 2 or 4 bytes) repeated, ordered on `stream`. Returns
/// `false` (doing nothing) for other pattern sizes.
pub(crate) fn fill_pattern(stream: &Stream, dst: DeviceRange<'_>, pattern: &[u8]) -> Result<bool> {
    let width = pattern.len();
    if !matches!(width, 1 | 2 | 4) {
        return Ok(false);
    }
    let count = dst.byte_len() / width;
    if count * width != dst.byte_len() || !dst.is_aligned(width) {
        return Err(ArrayError::InvalidArgument(format!(
            "a fill of {width}-byte values into {} bytes that are not whole aligned values",
            dst.byte_len()
        )));
    }
    if count == 0 {
        return Ok(true);
    }
    stream.context().bind()?;
    let d = driver()?;
    let s = stream.raw();
    let ptr = dst.use_on(stream, Access::Write)?;
    match *pattern {
        [b] => {
            let f = d.cuMemsetD8Async().map_err(DriverError::from)?;
            // SAFETY: `count` bytes at `ptr` lie in `dst`, which records the use.
            check(unsafe { f(ptr.ptr(), b, count, s) }, "cuMemsetD8Async")?;
        }
        [a, b] => {
            let f = d.cuMemsetD16Async().map_err(DriverError::from)?;
            let v = u16::from_ne_bytes([a, b]);
            // SAFETY: `count` aligned 16-bit values at `ptr` lie in `dst` (checked).
            check(unsafe { f(ptr.ptr(), v, count, s) }, "cuMemsetD16Async")?;
        }
        [a, b, c, e] => {
            let f = d.cuMemsetD32Async().map_err(DriverError::from)?;
            let v = u32::from_ne_bytes([a, b, c, e]);
            // SAFETY: `count` aligned 32-bit values at `ptr` lie in `dst` (checked).
            check(unsafe { f(ptr.ptr(), v, count, s) }, "cuMemsetD32Async")?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Queues a copy of page-locked `src` into `dst` (same size) on `stream`; both logs
/// record it, so host writes to `src`, its free and later work on `dst` wait for it.
pub(crate) fn host_to_device_async<S: rucuda_driver::DeviceRepr>(
    stream: &Stream,
    dst: DeviceRange<'_>,
    src: &rucuda_driver::PinnedHostBuffer<S>,
) -> Result<()> {
    let host = src.host_range();
    same_bytes("host to device copy", dst.byte_len(), host.byte_len())?;
    if host.byte_len() == 0 {
        return Ok(());
    }
    stream.context().bind()?;
    let f = driver()?
        .cuMemcpyHtoDAsync_v2()
        .map_err(DriverError::from)?;
    let h = host.use_on(stream, Access::Read)?;
    let d = dst.use_on(stream, Access::Write)?;
    // SAFETY: both ranges hold the same number of bytes (checked) and record the use.
    let code = unsafe {
        f(
            d.ptr(),
            h.ptr() as usize as *const _,
            host.byte_len(),
            stream.raw(),
        )
    };
    check(code, "cuMemcpyHtoDAsync_v2")?;
    Ok(())
}

/// Queues a copy of `src` into page-locked `dst` (same size) on `stream`; both logs
/// record it, so host access to `dst` and its free wait for it.
pub(crate) fn device_to_host_async<S: rucuda_driver::DeviceRepr>(
    stream: &Stream,
    dst: &mut rucuda_driver::PinnedHostBuffer<S>,
    src: DeviceRange<'_>,
) -> Result<()> {
    let host = dst.host_range();
    same_bytes("device to host copy", src.byte_len(), host.byte_len())?;
    if host.byte_len() == 0 {
        return Ok(());
    }
    stream.context().bind()?;
    let f = driver()?
        .cuMemcpyDtoHAsync_v2()
        .map_err(DriverError::from)?;
    let s = src.use_on(stream, Access::Read)?;
    let h = host.use_on(stream, Access::Write)?;
    // SAFETY: both ranges hold the same number of bytes (checked) and record the use;
    // `dst` is borrowed mutably for the call.
    let code = unsafe {
        f(
            h.ptr() as usize as *mut _,
            s.ptr(),
            host.byte_len(),
            stream.raw(),
        )
    };
    check(code, "cuMemcpyDtoHAsync_v2")?;
    Ok(())
}
