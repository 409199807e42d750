//! PyCUDA's `OccupancyRecord`: how many blocks of a kernel fit on one multiprocessor, and
//! what limits them, computed from [`DeviceData`] with the rules of NVIDIA's occupancy
//! calculator (`cuda_occupancy.h`) for current GPUs: registers allocated per warp in
//! units of 256 and warps placed in the multiprocessor's four register sub-partitions,
//! shared memory in units of 128 bytes plus the system's per-block reservation, the
//! largest shared-memory carveout.

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
    /// What bounds `tb_per_mp`. When several limits give the same count, the first of
    /// device, warps, registers, shared memory is named (PyCUDA compares the names as
    /// strings and so prefers `"regs"` and `"smem"` to `"warps"`).
    pub limited_by: OccupancyLimit,
    /// Warps resident on each multiprocessor.
    pub warps_per_mp: u32,
    /// `warps_per_mp` over the most warps a multiprocessor holds, in 0..=1.
    pub occupancy: f64,
}

/// Registers are allocated to a warp in units of this many.
const REGISTER_ALLOCATION_UNIT: u32 = 256;
/// The register file of a multiprocessor is split among this many sub-partitions (every
/// GPU since compute capability 6.1); a warp's registers all come from one of them.
const REGISTER_SUB_PARTITIONS: u32 = 4;
/// Most registers one thread may use, as `cuda_occupancy.h` counts them for compute
/// capability 7.0 and later (ptxas gives a kernel at most 255).
const MAX_REGISTERS_PER_THREAD: u32 = 256;

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
        if registers > MAX_REGISTERS_PER_THREAD {
            return Err(Error::InvalidArgument(format!(
                "{registers} registers per thread; a thread may use at most \
                 {MAX_REGISTERS_PER_THREAD}"
            )));
        }
        let warps = threads.div_ceil(dd.warp_size);
        let regs_per_warp = (registers * dd.warp_size).div_ceil(REGISTER_ALLOCATION_UNIT)
            * REGISTER_ALLOCATION_UNIT;
        // The hardware checks a block's registers as if its warps were spread evenly over
        // the sub-partitions, so their count is rounded up to a multiple of them.
        let checked_warps = warps.next_multiple_of(REGISTER_SUB_PARTITIONS);
        if regs_per_warp * checked_warps > dd.registers {
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
            // Each sub-partition holds whole warps' registers.
            let warps_per_sub_partition =
                dd.registers_per_mp / REGISTER_SUB_PARTITIONS / regs_per_warp;
            let warps_by_regs = warps_per_sub_partition * REGISTER_SUB_PARTITIONS;
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

#[cfg(test)]
mod tests {
    use super::{OccupancyLimit, OccupancyRecord};
    use crate::tools::DeviceData;

    fn record(threads: u32, smem: u32, regs: u32) -> OccupancyRecord {
        OccupancyRecord::new(&DeviceData::example(), threads, smem, regs).unwrap()
    }

    /// Numbers worked by hand from `cuda_occupancy.h` (`cudaOccMaxBlocksPerSMRegsLimit`)
    /// for an H100: 65536 registers per multiprocessor in four sub-partitions of 16384.
    #[test]
    fn registers_fill_sub_partitions_with_whole_warps() {
        // 40 registers: 1280 a warp, 12 warps a sub-partition (not 12.8), 48 in all.
        // Three-warp blocks: 16, where dividing the whole file would say 17.
        let r = record(96, 0, 40);
        assert_eq!((r.tb_per_mp, r.limited_by), (16, OccupancyLimit::Registers));
        assert_eq!((r.warps_per_mp, r.occupancy), (48, 0.75));
        // 128 registers: 4096 a warp, 4 warps a sub-partition: 16 warps, 2 blocks of 8.
        let r = record(256, 0, 128);
        assert_eq!((r.tb_per_mp, r.limited_by), (2, OccupancyLimit::Registers));
        // 64 registers, 1024 threads: the whole file for one block.
        let r = record(1024, 0, 64);
        assert_eq!((r.tb_per_mp, r.warps_per_mp), (1, 32));
        // 32 registers at 256 threads: registers and warps both allow 8; warps is named.
        let r = record(256, 0, 32);
        assert_eq!(
            (r.tb_per_mp, r.limited_by, r.occupancy),
            (8, OccupancyLimit::Warps, 1.0)
        );
    }

    #[test]
    fn blocks_whose_registers_do_not_fit_are_errors() {
        let dd = DeviceData::example();
        // 80 registers (2560 a warp) × 25 warps = 64000 fit the block's 65536, but the
        // hardware counts 28 warps (rounded up to the four sub-partitions): 71680.
        assert!(OccupancyRecord::new(&dd, 800, 0, 80).is_err());
        // 24 warps is a multiple of four: 61440 registers, one block.
        let r = OccupancyRecord::new(&dd, 768, 0, 80).unwrap();
        assert_eq!((r.tb_per_mp, r.limited_by), (1, OccupancyLimit::Registers));
        assert!(OccupancyRecord::new(&dd, 1024, 0, 65).is_err());
        assert!(OccupancyRecord::new(&dd, 32, 0, 257).is_err());
        assert!(OccupancyRecord::new(&dd, 32, 0, 256).is_ok());
    }
}
