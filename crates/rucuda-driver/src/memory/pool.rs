//! [`MemPool`]: stream-ordered memory pools (`cuMemPoolCreate`, a device's default and
//! current pool). [`DeviceBuffer::uninit_async`](crate::DeviceBuffer::uninit_async)
//! allocates from the device's current pool; the release threshold decides how much freed
//! memory the pool keeps for reuse instead of returning it to the device.

use rucuda_driver_sys::{
    CUmemAllocationHandleType, CUmemAllocationType, CUmemLocation, CUmemLocationType,
    CUmemPoolProps, CUmemPool_attribute, CUmemoryPool,
};

use crate::context::Context;
use crate::error::{call, Error, Result};

/// A stream-ordered memory pool of one device.
///
/// Pools made with [`MemPool::new`] are destroyed when dropped (memory still allocated
/// from them stays valid until freed; the driver destroys the pool afterwards). The
/// default pool and pools obtained with [`MemPool::current`] are not destroyed.
///
/// ```no_run
/// use rucuda_driver::*;
/// let ctx = Device::get(0)?.primary_context()?;
/// let pool = MemPool::device_default(&ctx)?;
/// pool.set_release_threshold(u64::MAX)?; // keep freed memory for reuse
/// let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
/// let buf = DeviceBuffer::<f32>::uninit_async(&stream, 1 << 20)?;
/// drop(buf);
/// stream.synchronize()?;
/// pool.trim_to(0)?;
/// # Ok::<(), Error>(())
/// ```
pub struct MemPool {
    raw: CUmemoryPool,
    ctx: Context,
    owned: bool,
}

// SAFETY: a pool handle may be used from any thread of the process.
unsafe impl Send for MemPool {}
// SAFETY: every method only passes the immutable handle to the driver.
unsafe impl Sync for MemPool {}

impl std::fmt::Debug for MemPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemPool")
            .field("raw", &self.raw)
            .field("device", &self.ctx.device())
            .field("owned", &self.owned)
            .finish()
    }
}

impl MemPool {
    fn check_supported(ctx: &Context) -> Result<()> {
        if ctx.supports_memory_pools() {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "device {} does not support stream-ordered memory pools",
                ctx.device().ordinal()
            )))
        }
    }

    /// A new pool of device memory on `ctx`'s device.
    pub fn new(ctx: &Context) -> Result<MemPool> {
        Self::check_supported(ctx)?;
        ctx.bind()?;
        let props = CUmemPoolProps {
            allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            handleTypes: CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
            location: CUmemLocation {
                type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: ctx.device().raw(),
            },
            ..CUmemPoolProps::default()
        };
        let mut raw: CUmemoryPool = std::ptr::null_mut();
        // SAFETY: writes one pool handle; the properties are fully initialised (zeroed
        // reserved bytes); destroyed on drop.
        unsafe { call!(cuMemPoolCreate(&mut raw, &props))? };
        Ok(MemPool {
            raw,
            ctx: ctx.clone(),
            owned: true,
        })
    }

    /// The device's default pool (`cuDeviceGetDefaultMemPool`).
    pub fn device_default(ctx: &Context) -> Result<MemPool> {
        Self::check_supported(ctx)?;
        ctx.bind()?;
        let mut raw: CUmemoryPool = std::ptr::null_mut();
        // SAFETY: writes one pool handle, owned by the device.
        unsafe { call!(cuDeviceGetDefaultMemPool(&mut raw, ctx.device().raw()))? };
        Ok(MemPool {
            raw,
            ctx: ctx.clone(),
            owned: false,
        })
    }

    /// The pool `cuMemAllocAsync` (and so `DeviceBuffer::uninit_async`) uses now on the
    /// device (`cuDeviceGetMemPool`).
    pub fn current(ctx: &Context) -> Result<MemPool> {
        Self::check_supported(ctx)?;
        ctx.bind()?;
        let mut raw: CUmemoryPool = std::ptr::null_mut();
        // Queues no work: allowed inside a capture (see `MemPool::get_u64`).
        crate::memory::tracking::capture::with_relaxed_mode(|| {
            // SAFETY: writes one pool handle, owned elsewhere.
            unsafe { call!(cuDeviceGetMemPool(&mut raw, ctx.device().raw())) }
        })?;
        Ok(MemPool {
            raw,
            ctx: ctx.clone(),
            owned: false,
        })
    }

    /// Makes this the device's current pool (`cuDeviceSetMemPool`): later
    /// `DeviceBuffer::uninit_async` calls allocate from it. Destroying a current pool
    /// makes the default pool current again.
    pub fn make_current(&self) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: both handles are alive.
        unsafe { call!(cuDeviceSetMemPool(self.ctx.device().raw(), self.raw)) }
    }

    /// The raw handle.
    pub fn raw(&self) -> CUmemoryPool {
        self.raw
    }

    /// Reads an attribute. A pool's attributes queue no work, so they are read with this
    /// thread's capture mode relaxed: a kernel first used inside a capture sets up its
    /// context's pool there (see `rucuda-array`'s scratch pools), which the capture's
    /// thread-local mode would refuse.
    fn get_u64(&self, attr: CUmemPool_attribute) -> Result<u64> {
        self.ctx.bind()?;
        let mut value: u64 = 0;
        crate::memory::tracking::capture::with_relaxed_mode(|| {
            // SAFETY: these attributes are cuuint64_t; writes 8 bytes.
            unsafe {
                call!(cuMemPoolGetAttribute(
                    self.raw,
                    attr,
                    (&mut value as *mut u64).cast()
                ))
            }
        })?;
        Ok(value)
    }

    /// Sets an attribute, with the capture mode relaxed as for [`MemPool::get_u64`].
    fn set_u64(&self, attr: CUmemPool_attribute, mut value: u64) -> Result<()> {
        self.ctx.bind()?;
        crate::memory::tracking::capture::with_relaxed_mode(|| {
            // SAFETY: these attributes are cuuint64_t; reads 8 bytes.
            unsafe {
                call!(cuMemPoolSetAttribute(
                    self.raw,
                    attr,
                    (&mut value as *mut u64).cast()
                ))
            }
        })
    }

    /// Keeps up to `bytes` of freed memory for reuse at each synchronisation instead of
    /// returning it to the device (`u64::MAX`: keep everything).
    pub fn set_release_threshold(&self, bytes: u64) -> Result<()> {
        self.set_u64(
            CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            bytes,
        )
    }

    /// The release threshold in bytes.
    pub fn release_threshold(&self) -> Result<u64> {
        self.get_u64(CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
    }

    /// Device memory the pool holds now (in use or kept for reuse), bytes.
    pub fn reserved_bytes(&self) -> Result<u64> {
        self.get_u64(CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
    }

    /// The most memory the pool has held since the last reset, bytes.
    pub fn reserved_bytes_high(&self) -> Result<u64> {
        self.get_u64(CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)
    }

    /// Memory allocated from the pool and not yet freed, bytes.
    pub fn used_bytes(&self) -> Result<u64> {
        self.get_u64(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
    }

    /// The most memory in use since the last reset, bytes.
    pub fn used_bytes_high(&self) -> Result<u64> {
        self.get_u64(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH)
    }

    /// Resets both high watermarks to the current values.
    pub fn reset_high_watermarks(&self) -> Result<()> {
        self.set_u64(CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0)?;
        self.set_u64(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0)
    }

    /// Returns freed memory to the device until the pool holds at most
    /// `min_bytes_to_keep` of it (`cuMemPoolTrimTo`).
    pub fn trim_to(&self, min_bytes_to_keep: usize) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: the handle is alive.
        unsafe { call!(cuMemPoolTrimTo(self.raw, min_bytes_to_keep)) }
    }
}

impl Drop for MemPool {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let r = self.ctx.bind().and_then(|()| {
            // SAFETY: created by `new`, destroyed once; the driver defers the release
            // until every allocation from it is freed.
            unsafe { call!(cuMemPoolDestroy(self.raw)) }
        });
        if let Err(e) = r {
            self.ctx.defer_error(e);
        }
    }
}
