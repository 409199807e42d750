//! PyCUDA's `DeviceData`: the figures kernel code generators size their launches by,
//! read from the driver wherever it can tell.

use rucuda_driver::{Device, DeviceAttribute, Error, Result};

/// Device figures for sizing kernels (PyCUDA's `pycuda.tools.DeviceData`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceData {
    /// Most threads in one block (`MAX_THREADS_PER_BLOCK`).
    pub max_threads: u32,
    /// Threads per warp (`WARP_SIZE`).
    pub warp_size: u32,
    /// Resident warps per multiprocessor (`MAX_THREADS_PER_MULTIPROCESSOR / WARP_SIZE`).
    pub warps_per_mp: u32,
    /// Resident blocks per multiprocessor (`MAX_BLOCKS_PER_MULTIPROCESSOR`).
    pub thread_blocks_per_mp: u32,
    /// 32-bit registers available to one block (`MAX_REGISTERS_PER_BLOCK`).
    pub registers: u32,
    /// 32-bit registers of one multiprocessor (`MAX_REGISTERS_PER_MULTIPROCESSOR`).
    pub registers_per_mp: u32,
    /// Shared memory one block may use without opting in (`MAX_SHARED_MEMORY_PER_BLOCK`).
    pub shared_memory: u32,
    /// Shared memory one block may use after opting in (`MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`).
    pub shared_memory_optin: u32,
    /// Shared memory of one multiprocessor (`MAX_SHARED_MEMORY_PER_MULTIPROCESSOR`).
    pub shared_memory_per_mp: u32,
    /// Shared memory the system reserves per block (`RESERVED_SHARED_MEMORY_PER_BLOCK`).
    pub reserved_shared_memory_per_block: u32,
    /// Threads that access shared memory banks simultaneously: the bank count, 32
    /// since compute capability 2.0 (the driver does not report it).
    pub smem_granularity: u32,
    /// Smallest non-empty shared memory allocation in bytes: 128 since compute
    /// capability 2.0 (the driver does not report it).
    pub smem_alloc_granularity: u32,
    /// Multiprocessors on the device.
    pub multiprocessors: u32,
}

impl DeviceData {
    /// Reads the figures of `device`.
    ///
    /// ```no_run
    /// let dd = rucuda::tools::DeviceData::new(rucuda::driver::Device::get(0)?)?;
    /// assert_eq!(dd.warp_size, 32);
    /// # Ok::<(), rucuda::driver::Error>(())
    /// ```
    pub fn new(device: Device) -> Result<DeviceData> {
        let a = |attr| device.attribute(attr).map(|v| v.max(0) as u32);
        let warp_size = a(DeviceAttribute::WarpSize)?.max(1);
        Ok(DeviceData {
            max_threads: a(DeviceAttribute::MaxThreadsPerBlock)?,
            warp_size,
            warps_per_mp: a(DeviceAttribute::MaxThreadsPerMultiprocessor)? / warp_size,
            thread_blocks_per_mp: a(DeviceAttribute::MaxBlocksPerMultiprocessor)?,
            registers: a(DeviceAttribute::MaxRegistersPerBlock)?,
            registers_per_mp: a(DeviceAttribute::MaxRegistersPerMultiprocessor)?,
            shared_memory: a(DeviceAttribute::MaxSharedMemoryPerBlock)?,
            shared_memory_optin: a(DeviceAttribute::MaxSharedMemoryPerBlockOptin)?,
            shared_memory_per_mp: a(DeviceAttribute::MaxSharedMemoryPerMultiprocessor)?,
            reserved_shared_memory_per_block: a(DeviceAttribute::ReservedSharedMemoryPerBlock)?,
            smem_granularity: 32,
            smem_alloc_granularity: 128,
            multiprocessors: a(DeviceAttribute::MultiprocessorCount)?,
        })
    }

    /// The figures of the current context's device (PyCUDA's `DeviceData()`).
    pub fn current() -> Result<DeviceData> {
        let ctx = rucuda_driver::Context::current()?.ok_or_else(|| {
            Error::InvalidArgument("no rucuda context is current on this thread".into())
        })?;
        DeviceData::new(ctx.device())
    }

    /// Distance between base addresses that lets accesses of `word_size` bytes coalesce
    /// (PyCUDA's `align_bytes`): 64 for 4-byte words, 128 for 8 and 16.
    ///
    /// ```
    /// # let dd = rucuda::tools::DeviceData::example();
    /// assert_eq!(dd.align_bytes(4)?, 64);
    /// assert!(dd.align_bytes(3).is_err());
    /// # Ok::<(), rucuda::driver::Error>(())
    /// ```
    pub fn align_bytes(&self, word_size: usize) -> Result<usize> {
        match word_size {
            4 => Ok(64),
            8 | 16 => Ok(128),
            w => Err(Error::InvalidArgument(format!(
                "no alignment possible for fetches of size {w}"
            ))),
        }
    }

    /// `bytes` rounded up to the alignment boundary (PyCUDA's `align`).
    pub fn align(&self, bytes: usize, word_size: usize) -> Result<usize> {
        Ok(bytes.div_ceil(self.align_bytes(word_size)?) * self.align_bytes(word_size)?)
    }

    /// `align_bytes(word_size) / word_size` (PyCUDA's `align_words`).
    pub fn align_words(&self, word_size: usize) -> Result<usize> {
        let b = self.align_bytes(word_size)?;
        if b % word_size != 0 {
            return Err(Error::InvalidArgument(format!(
                "{b} is not a multiple of {word_size}"
            )));
        }
        Ok(b / word_size)
    }

    /// `elements` rounded up to the alignment boundary in elements of `dtype_size` bytes
    /// (PyCUDA's `align_dtype`).
    ///
    /// ```
    /// # let dd = rucuda::tools::DeviceData::example();
    /// assert_eq!(dd.align_dtype(17, 4)?, 32);
    /// # Ok::<(), rucuda::driver::Error>(())
    /// ```
    pub fn align_dtype(&self, elements: usize, dtype_size: usize) -> Result<usize> {
        let w = self.align_words(dtype_size)?;
        Ok(elements.div_ceil(w) * w)
    }

    /// `size` rounded up to a valid texture channel count: 1, 2 or 4 (PyCUDA's
    /// `make_valid_tex_channel_count`).
    ///
    /// ```
    /// use rucuda::tools::DeviceData;
    /// assert_eq!(DeviceData::make_valid_tex_channel_count(3)?, 4);
    /// assert!(DeviceData::make_valid_tex_channel_count(5).is_err());
    /// # Ok::<(), rucuda::driver::Error>(())
    /// ```
    pub fn make_valid_tex_channel_count(size: usize) -> Result<usize> {
        [1, 2, 4].into_iter().find(|&v| size <= v).ok_or_else(|| {
            Error::InvalidArgument(format!("no texture channel count holds {size} channels"))
        })
    }

    /// The figures of an H100 (SXM5 80 GB), for examples and CPU tests.
    pub fn example() -> DeviceData {
        DeviceData {
            max_threads: 1024,
            warp_size: 32,
            warps_per_mp: 64,
            thread_blocks_per_mp: 32,
            registers: 65536,
            registers_per_mp: 65536,
            shared_memory: 49152,
            shared_memory_optin: 232448,
            shared_memory_per_mp: 233472,
            reserved_shared_memory_per_block: 1024,
            smem_granularity: 32,
            smem_alloc_granularity: 128,
            multiprocessors: 132,
        }
    }
}
