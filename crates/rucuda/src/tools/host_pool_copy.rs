//! Asynchronous copies between a [`PooledHostAllocation`] and device memory: what the
//! pooled page-locked blocks are for (PyCUDA passes the pool's arrays to
//! `memcpy_htod_async` / `memcpy_dtoh_async`).

use rucuda_driver::{
    check, driver, Access, DevicePtr, DevicePtrMut, DeviceRepr, Error, Result, Stream,
};

use super::host_block::PooledHostAllocation;

fn same_size(what: &str, host: usize, device: usize) -> Result<()> {
    if host == device {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "{what}: the host block has {host} bytes, the device memory {device}"
        )))
    }
}

impl<T: DeviceRepr> PooledHostAllocation<T> {
    /// Queues a copy of the whole block into `dst` (the same size in bytes) on `stream`
    /// and returns (PyCUDA's `memcpy_htod_async` with a pooled array). Host writes to the
    /// block, and dropping it, wait until the copy has read it.
    ///
    /// ```no_run
    /// use rucuda::driver::{DeviceBuffer, Stream, StreamFlags};
    /// use rucuda::tools::PageLockedMemoryPool;
    /// let ctx = rucuda::tools::autoprimaryctx()?;
    /// let pool = PageLockedMemoryPool::new(ctx);
    /// let stream = Stream::new(ctx, StreamFlags::NON_BLOCKING)?;
    /// let mut staging = pool.allocate::<f32>(4096)?;
    /// staging.fill(0.5);
    /// let mut dev = DeviceBuffer::<f32>::uninit(ctx, 4096)?;
    /// staging.copy_to_device_async(&mut dev, &stream)?;
    /// stream.synchronize()?;
    /// # Ok::<(), rucuda::driver::Error>(())
    /// ```
    pub fn copy_to_device_async(&self, dst: &mut impl DevicePtrMut, stream: &Stream) -> Result<()> {
        same_size("copy_to_device_async", self.byte_len(), dst.byte_len())?;
        if self.byte_len() == 0 {
            return Ok(());
        }
        let copy = driver()?.cuMemcpyHtoDAsync_v2()?;
        stream.context().bind()?;
        let host = self.host_range().use_on(stream, Access::Read)?;
        let dptr = dst.device_range().use_on(stream, Access::Write)?;
        // SAFETY: `bytes` bytes of page-locked memory into a device range of the same
        // size borrowed mutably. Both logs record the use: host writes, dropping the block
        // and later work on `dst` wait for the copy.
        let code = unsafe {
            copy(
                dptr.ptr(),
                host.ptr() as usize as *const _,
                self.byte_len(),
                stream.raw(),
            )
        };
        check(code, "cuMemcpyHtoDAsync_v2")
    }

    /// Queues a copy of `src` (the same size in bytes) into the block on `stream` and
    /// returns (PyCUDA's `memcpy_dtoh_async` into a pooled array). Host access to the
    /// block waits until the copy has written it.
    pub fn copy_from_device_async(&mut self, src: &impl DevicePtr, stream: &Stream) -> Result<()> {
        same_size("copy_from_device_async", self.byte_len(), src.byte_len())?;
        if self.byte_len() == 0 {
            return Ok(());
        }
        let copy = driver()?.cuMemcpyDtoHAsync_v2()?;
        stream.context().bind()?;
        let dptr = src.device_range().use_on(stream, Access::Read)?;
        let host = self.host_range().use_on(stream, Access::Write)?;
        // SAFETY: a device range of `bytes` bytes into the block, borrowed mutably. Both
        // logs record the use: host access and dropping the block wait for the copy.
        let code = unsafe {
            copy(
                host.ptr() as usize as *mut _,
                dptr.ptr(),
                self.byte_len(),
                stream.raw(),
            )
        };
        check(code, "cuMemcpyDtoHAsync_v2")
    }
}
