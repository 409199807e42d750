//! Copies: PyCUDA's `memcpy_htod`/`memcpy_dtoh`/`memcpy_dtod` (synchronous; pageable
//! host memory is staged through page-locked buffers, see [`staged`](super::staged)), their
//! `_async` forms on a stream with page-locked host memory ([`PageLockedHost`]), peer copies between contexts and
//! devices, and the `to_device`/`from_device`/`from_device_like` conveniences.
//!
//! Lengths are checked: source and destination must hold the same number of bytes (use
//! views such as [`DeviceBuffer::slice_mut`] to copy part of a buffer).

use crate::context::Context;
use crate::error::{call, Error, Result};
use crate::memory::async_host::PageLockedHost;
use crate::memory::device_buffer::DeviceBuffer;
use crate::memory::pointer::DevicePtrMut;
use crate::memory::staged::{copy_dtoh, copy_htod};
use crate::memory::tracking::DevicePtr;
use crate::memory::tracking::{finish_legacy_stream, Access};
use crate::repr::byte_size;
use crate::repr::DeviceRepr;
use crate::streams::stream::Stream;

fn same_size(what: &str, dst: usize, src: usize) -> Result<()> {
    if dst == src {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{what}: the source has {src} bytes, the destination {dst}"
        )))
    }
}

/// Copies `src` from the host into `dst` (same size in bytes), synchronously (PyCUDA's
/// `memcpy_htod`): `src` may be reused when it returns, and later work on the legacy
/// default stream or blocking streams sees the data. Large pageable copies are staged
/// through page-locked buffers, several times faster than the driver's own path; small
/// ones go through `cuMemcpyHtoD` and a wait for its DMA. Either way the data has reached
/// the device when this returns, so work on any stream, non-blocking ones included, sees it.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let mut dev = DeviceBuffer::<f32>::uninit(&ctx, 3)?;
/// memcpy_htod(&ctx, &mut dev, &[1.0f32, 2.0, 3.0])?;
/// # Ok::<(), Error>(())
/// ```
pub fn memcpy_htod<T: DeviceRepr>(
    ctx: &Context,
    dst: &mut impl DevicePtrMut,
    src: &[T],
) -> Result<()> {
    let bytes = byte_size::<T>(src.len())?;
    same_size("memcpy_htod", dst.byte_len(), bytes)?;
    let d = dst
        .device_range()
        .use_on(&Stream::null(ctx), Access::Write)?;
    // SAFETY: `src` is a readable slice borrowed for the call; `dst` holds `bytes` bytes
    // and is borrowed mutably; the copy runs on the legacy stream after conflicting work
    // (ordered above) and has finished when this returns.
    unsafe { copy_htod(ctx, d.ptr(), src.as_ptr().cast(), bytes) }
}

/// Copies `src` from the device into `dst` on the host (same size in bytes),
/// synchronously (PyCUDA's `memcpy_dtoh`); staged like [`memcpy_htod`].
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let dev = DeviceBuffer::from_slice(&ctx, &[1u16, 2, 3])?;
/// let mut host = [0u16; 3];
/// memcpy_dtoh(&ctx, &mut host, &dev)?;
/// assert_eq!(host, [1, 2, 3]);
/// # Ok::<(), Error>(())
/// ```
pub fn memcpy_dtoh<T: DeviceRepr>(
    ctx: &Context,
    dst: &mut [T],
    src: &impl DevicePtr,
) -> Result<()> {
    let bytes = byte_size::<T>(dst.len())?;
    same_size("memcpy_dtoh", bytes, src.byte_len())?;
    let s = src
        .device_range()
        .use_on(&Stream::null(ctx), Access::Read)?;
    // SAFETY: `dst` is a writable slice borrowed mutably for the call (any bit pattern is
    // a valid T); `src` holds `bytes` bytes; the copy runs on the legacy stream after the
    // work that writes them (ordered above) and has finished when this returns.
    unsafe { copy_dtoh(ctx, dst.as_mut_ptr().cast(), s.ptr(), bytes) }
}

/// Copies device memory to device memory of the same size (PyCUDA's `memcpy_dtod`),
/// synchronously: the copy is ordered after the work queued on either range on any
/// stream, and has run when this returns, so the source may be dropped or reused at once.
pub fn memcpy_dtod(ctx: &Context, dst: &mut impl DevicePtrMut, src: &impl DevicePtr) -> Result<()> {
    same_size("memcpy_dtod", dst.byte_len(), src.byte_len())?;
    if src.byte_len() == 0 {
        return Ok(());
    }
    ctx.bind()?;
    let legacy = Stream::null(ctx);
    let s = src.device_range().use_on(&legacy, Access::Read)?;
    let d = dst.device_range().use_on(&legacy, Access::Write)?;
    // SAFETY: both ranges hold `byte_len` bytes; `dst` is borrowed mutably; the legacy
    // stream waits for the recorded work on both (above) and is finished below.
    unsafe { call!(cuMemcpyDtoD_v2(d.ptr(), s.ptr(), src.byte_len()))? };
    finish_legacy_stream(ctx)
}

/// Queues a copy of page-locked `src` into `dst` on `stream` and returns (PyCUDA's
/// `memcpy_htod_async`). Host writes to `src` (through `DerefMut`) wait until the copy has
/// read it. `src` is a [`PinnedHostBuffer`](crate::PinnedHostBuffer) or registered host
/// memory (see [`PageLockedHost`]).
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
/// let host = PinnedHostBuffer::from_slice(&ctx, &[1.0f64; 4096], HostAllocFlags::empty())?;
/// let mut dev = DeviceBuffer::<f64>::uninit(&ctx, 4096)?;
/// memcpy_htod_async(&mut dev, &host, &stream)?;
/// stream.synchronize()?;
/// # Ok::<(), Error>(())
/// ```
pub fn memcpy_htod_async<T: DeviceRepr>(
    dst: &mut impl DevicePtrMut,
    src: &impl PageLockedHost<T>,
    stream: &Stream,
) -> Result<()> {
    let bytes = byte_size::<T>(src.elements())?;
    same_size("memcpy_htod_async", dst.byte_len(), bytes)?;
    if bytes == 0 {
        return Ok(());
    }
    stream.context().bind()?;
    let host = src.copy_range().use_on(stream, Access::Read)?;
    let d = dst.device_range().use_on(stream, Access::Write)?;
    // SAFETY: `bytes` bytes of page-locked memory to a device range of the same size. Both
    // logs record the use (above): dropping either and host writes to `src` wait for it.
    unsafe {
        call!(cuMemcpyHtoDAsync_v2(
            d.ptr(),
            host.ptr() as usize as *const _,
            bytes,
            stream.raw()
        ))
    }
}

/// Queues a copy of `src` into page-locked `dst` on `stream` and returns (PyCUDA's
/// `memcpy_dtoh_async`). Host access to `dst` (through `Deref`) waits until the copy has
/// written it. `dst` is a [`PinnedHostBuffer`](crate::PinnedHostBuffer) or registered
/// host memory (see [`PageLockedHost`]).
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
/// let dev = DeviceBuffer::from_slice(&ctx, &[7u32; 1000])?;
/// let mut host = pagelocked_empty::<u32>(&ctx, 1000, HostAllocFlags::empty())?;
/// memcpy_dtoh_async(&mut host, &dev, &stream)?;
/// assert_eq!(host[999], 7); // waits for the copy
/// # Ok::<(), Error>(())
/// ```
pub fn memcpy_dtoh_async<T: DeviceRepr>(
    dst: &mut impl PageLockedHost<T>,
    src: &impl DevicePtr,
    stream: &Stream,
) -> Result<()> {
    let bytes = byte_size::<T>(dst.elements())?;
    same_size("memcpy_dtoh_async", bytes, src.byte_len())?;
    if bytes == 0 {
        return Ok(());
    }
    stream.context().bind()?;
    let s = src.device_range().use_on(stream, Access::Read)?;
    let host = dst.copy_range().use_on(stream, Access::Write)?;
    // SAFETY: a device range into `bytes` bytes of page-locked memory borrowed mutably.
    // Both logs record the use (above): host access and dropping wait for it, so nobody
    // reads or frees the memory while the copy writes it.
    unsafe {
        call!(cuMemcpyDtoHAsync_v2(
            host.ptr() as usize as *mut _,
            s.ptr(),
            bytes,
            stream.raw()
        ))
    }
}

/// Queues a device-to-device copy of the same size on `stream` (PyCUDA's
/// `memcpy_dtod_async`).
pub fn memcpy_dtod_async(
    dst: &mut impl DevicePtrMut,
    src: &impl DevicePtr,
    stream: &Stream,
) -> Result<()> {
    same_size("memcpy_dtod_async", dst.byte_len(), src.byte_len())?;
    if src.byte_len() == 0 {
        return Ok(());
    }
    stream.context().bind()?;
    let s = src.device_range().use_on(stream, Access::Read)?;
    let d = dst.device_range().use_on(stream, Access::Write)?;
    // SAFETY: both ranges hold `byte_len` bytes; both logs record the use (above).
    unsafe {
        call!(cuMemcpyDtoDAsync_v2(
            d.ptr(),
            s.ptr(),
            src.byte_len(),
            stream.raw()
        ))
    }
}

fn check_peer(dst: &impl DevicePtr, src: &impl DevicePtr, bytes: usize) -> Result<()> {
    if bytes > dst.byte_len() || bytes > src.byte_len() {
        return Err(Error::invalid(format!(
            "peer copy of {bytes} bytes from {} into {} bytes",
            src.byte_len(),
            dst.byte_len()
        )));
    }
    Ok(())
}

/// Copies the first `bytes` bytes of `src` (memory of `src_ctx`) into `dst` (memory of
/// `dst_ctx`): between devices, or between contexts of one device (PyCUDA's
/// `memcpy_peer`). Works without peer access (the driver stages through the host then).
///
/// ```no_run
/// use rucuda_driver::*;
/// let (a, b) = (Device::get(0)?.primary_context()?, Device::get(1)?.primary_context()?);
/// let src = DeviceBuffer::from_slice(&a, &[1u8; 1024])?;
/// let mut dst = DeviceBuffer::<u8>::uninit(&b, 1024)?;
/// memcpy_peer(&mut dst, &b, &src, &a, 1024)?;
/// # Ok::<(), Error>(())
/// ```
pub fn memcpy_peer(
    dst: &mut impl DevicePtrMut,
    dst_ctx: &Context,
    src: &impl DevicePtr,
    src_ctx: &Context,
    bytes: usize,
) -> Result<()> {
    check_peer(dst, src, bytes)?;
    if bytes == 0 {
        return Ok(());
    }
    dst_ctx.bind()?;
    let legacy = Stream::null(dst_ctx);
    let s = src.device_range().use_on(&legacy, Access::Read)?;
    let d = dst.device_range().use_on(&legacy, Access::Write)?;
    // SAFETY: both ranges hold at least `bytes` bytes of their contexts, both alive; the
    // copy is ordered after the recorded work on both (above) and finished below.
    unsafe {
        call!(cuMemcpyPeer(
            d.ptr(),
            dst_ctx.raw(),
            s.ptr(),
            src_ctx.raw(),
            bytes
        ))?
    };
    finish_legacy_stream(dst_ctx)?;
    finish_legacy_stream(src_ctx)
}

/// [`memcpy_peer`] queued on `stream` (PyCUDA's `memcpy_peer_async`).
pub fn memcpy_peer_async(
    dst: &mut impl DevicePtrMut,
    dst_ctx: &Context,
    src: &impl DevicePtr,
    src_ctx: &Context,
    bytes: usize,
    stream: &Stream,
) -> Result<()> {
    check_peer(dst, src, bytes)?;
    if bytes == 0 {
        return Ok(());
    }
    stream.context().bind()?;
    let s = src.device_range().use_on(stream, Access::Read)?;
    let d = dst.device_range().use_on(stream, Access::Write)?;
    // SAFETY: as for `memcpy_peer`; both logs record the use (above).
    unsafe {
        call!(cuMemcpyPeerAsync(
            d.ptr(),
            dst_ctx.raw(),
            s.ptr(),
            src_ctx.raw(),
            bytes,
            stream.raw()
        ))
    }
}

/// A new device buffer holding `data` (PyCUDA's `to_device`).
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let dev = to_device(&ctx, &[1i32, 2, 3])?;
/// assert_eq!(from_device::<i32>(&ctx, &dev, 3)?, vec![1, 2, 3]);
/// # Ok::<(), Error>(())
/// ```
pub fn to_device<T: DeviceRepr>(ctx: &Context, data: &[T]) -> Result<DeviceBuffer<T>> {
    DeviceBuffer::from_slice(ctx, data)
}

/// The first `len` elements of `src` as a new `Vec` (PyCUDA's `from_device`).
pub fn from_device<T: DeviceRepr>(
    ctx: &Context,
    src: &impl DevicePtr,
    len: usize,
) -> Result<Vec<T>> {
    let bytes = byte_size::<T>(len)?;
    if bytes > src.byte_len() {
        return Err(Error::invalid(format!(
            "from_device of {len} elements ({bytes} bytes) from {} bytes",
            src.byte_len()
        )));
    }
    let mut v = Vec::<T>::with_capacity(len);
    let s = src
        .device_range()
        .use_on(&Stream::null(ctx), Access::Read)?;
    // SAFETY: the Vec has room for `len` elements; the copy writes all `bytes` of them
    // (any bit pattern is a valid T) before `set_len`, on the legacy stream after the
    // work that writes `src` (ordered above).
    unsafe {
        copy_dtoh(ctx, v.as_mut_ptr().cast(), s.ptr(), bytes)?;
        v.set_len(len);
    }
    Ok(v)
}

/// As many elements as `like` holds, read from `src` (PyCUDA's `from_device_like`).
pub fn from_device_like<T: DeviceRepr>(
    ctx: &Context,
    src: &impl DevicePtr,
    like: &[T],
) -> Result<Vec<T>> {
    from_device(ctx, src, like.len())
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Copies from another device buffer of the same length (device to device).
    pub fn copy_from_device(&mut self, src: &impl DevicePtr) -> Result<()> {
        if src.byte_len() != self.byte_len() {
            return Err(Error::invalid(format!(
                "copy of {} bytes into a buffer of {} bytes",
                src.byte_len(),
                self.byte_len()
            )));
        }
        if self.is_empty() {
            return Ok(());
        }
        memcpy_dtod(&self.context().clone(), self, src)
    }
}
