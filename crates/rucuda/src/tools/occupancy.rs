//! PyCUDA's `OccupancyRecord`: how many blocks of a kernel fit on one multiprocessor, and
//! what limits them, computed from [`DeviceData`] with the rules of NVIDIA's occupancy
//! calculator for current GPUs (registers allocated per warp in units of 256, shared
//! memory in units of 128 bytes plus the system's per-block reservation, the largest
//! shared-memory carveout).

use rucuda_driver::{Error, Result};

use super::DeviceData;

/// What bounds the number of resident blocks (PyCUDA's `limited_by` strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OccupancyLimit {
    /// The device's resident-block limit (`"device"`).
    Device,
    /// Resident warps (`"warps"`).
    Warps,
    /// The register file (`"regs"`).
    Registers,
    /// Shared memory (`"smem"`).
    SharedMemory,
}

impl OccupancyLimit {
    /// PyCUDA's name for the limit.
    pub fn as_str(self) -> &'static str {
        match self {
            OccupancyLimit::Device => "device",
            OccupancyLimit::Warps => "warps",
            OccupancyLimit::Registers => "regs",
            OccupancyLimit::SharedMemory => "smem",
        }
    }
}

/// The occupancy of a kernel workload (PyCUDA's `OccupancyRecord`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OccupancyRecord {
    /// Blocks resident on each multiprocessor.
    pub tb_per_mp: u32,
    /// What bounds `tb_per_mp`.
    pub limited_by: OccupancyLimit,
    /// Warps resident on each multiprocessor.
    pub warps_per_mp: u32,
    /// `warps_per_mp` over the most warps a multiprocessor holds, in 0..=1.
    pub occupancy: f64,
}

const REGISTER_ALLOCATION_UNIT: u32 = 256;

impl OccupancyRecord {
    /// Occupancy of blocks of `threads` threads using `shared_mem` bytes of shared memory
    /// (static plus dynamic) and `registers` registers per thread.
    ///
    /// ```
    /// use rucuda::tools::{DeviceData, OccupancyRecord, OccupancyLimit};
    /// let dd = DeviceData::example(); // an H100
    /// let r = OccupancyRecord::new(&dd, 256, 0, 32)?;
    /// assert_eq!((r.tb_per_mp, r.occupancy), (8, 1.0));
    /// let r = OccupancyRecord::new(&dd, 256, 0, 128)?;
    /// assert_eq!((r.tb_per_mp, r.limited_by), (2, OccupancyLimit::Registers));
    /// # Ok::<(), rucuda::driver::Error>(())
    /// ```
    pub fn new(
        dd: &DeviceData,
        threads: u32,
        shared_mem: u32,
        registers: u32,
    ) -> Result<OccupancyRecord> {
        if threads == 0 || threads > dd.max_threads {
            return Err(Error::InvalidArgument(format!(
                "{threads} threads per block; the device allows 1..={}",
                dd.max_threads
            )));
        }
        let warps = threads.div_ceil(dd.warp_size);
        let regs_per_warp = (registers * dd.warp_size).div_ceil(REGISTER_ALLOCATION_UNIT)
            * REGISTER_ALLOCATION_UNIT;
        if regs_per_warp * warps > dd.registers {
            return Err(Error::InvalidArgument(format!(
                "{registers} registers × {threads} threads exceed the {} registers of a block",
                dd.registers
            )));
        }
        let smem_per_block = if shared_mem == 0 {
            0
        } else {
            (shared_mem + dd.reserved_shared_memory_per_block).div_ceil(dd.smem_alloc_granularity)
                * dd.smem_alloc_granularity
        };
        if shared_mem > dd.shared_memory_optin {
            return Err(Error::InvalidArgument(format!(
                "{shared_mem} bytes of shared memory exceed the {} a block may use",
                dd.shared_memory_optin
            )));
        }
        let mut limits = vec![
            (dd.thread_blocks_per_mp, OccupancyLimit::Device),
            (dd.warps_per_mp / warps, OccupancyLimit::Warps),
        ];
        if registers > 0 {
            let warps_by_regs = dd.registers_per_mp / regs_per_warp;
            limits.push((warps_by_regs / warps, OccupancyLimit::Registers));
        }
        if let Some(blocks) = dd.shared_memory_per_mp.checked_div(smem_per_block) {
            limits.push((blocks, OccupancyLimit::SharedMemory));
        }
        let (tb_per_mp, limited_by) = limits
            .into_iter()
            .min()
            .unwrap_or((0, OccupancyLimit::Device));
        let warps_per_mp = tb_per_mp * warps;
        Ok(OccupancyRecord {
            tb_per_mp,
            limited_by,
            warps_per_mp,
            occupancy: warps_per_mp as f64 / dd.warps_per_mp.max(1) as f64,
        })
    }
}
