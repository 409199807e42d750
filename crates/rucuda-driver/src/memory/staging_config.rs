//! The knobs of the staged pageable copies (`staged.rs`): staging buffer size, buffers in
//! flight, host threads, and how the host copies out of the staging buffers. Read from
//! the environment once; [`set_staging_config`] changes them at run time (the bench's
//! sweep does, to measure several settings in one run).
//!
//! - `RUCUDA_STAGED_SLOT_MIB`: MiB of each staging buffer (1 to 256; 16).
//! - `RUCUDA_STAGED_SLOTS`: staging buffers in flight (2 to 8; 2).
//! - `RUCUDA_STAGED_WORKERS`: most host threads one copy uses (1 to 64; the cores, at most 8).
//! - `RUCUDA_STAGED_NT_MIB`: device-to-host copies of at least this many MiB copy out of
//!   the staging buffers with non-temporal (streaming) stores (x86-64; elsewhere ignored),
//!   which skip reading each destination line into the cache before writing it and leave
//!   the cache to the staging data (64: what glibc's `memcpy` does for copies larger than
//!   the cache; `off`: never). `RUCUDA_STAGED_NT=1` / `0`: always / never.
//! - `RUCUDA_STAGED_HUGEPAGES`: `1`: advise the kernel to back the destination of a
//!   device-to-host copy with huge pages (`madvise(MADV_HUGEPAGE)`, Linux), which cuts
//!   the page faults of a fresh destination 512-fold. Off by default.

use std::sync::{Mutex, OnceLock, PoisonError};

/// The settings of the staged copies; see the module docs.
///
/// ```
/// use rucuda_driver::memory::StagingConfig;
/// let c = StagingConfig::default();
/// assert_eq!((c.slot_bytes, c.slots), (16 << 20, 2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StagingConfig {
    /// Bytes of each staging buffer.
    pub slot_bytes: usize,
    /// Staging buffers in flight (at least 2).
    pub slots: usize,
    /// Most host threads one copy uses (the calling thread included).
    pub max_workers: usize,
    /// Device-to-host copies of at least this many bytes copy out of the staging buffers
    /// with non-temporal stores (`usize::MAX`: never, 0: always).
    pub streaming_min_bytes: usize,
    /// `madvise(MADV_HUGEPAGE)` on the destination of device-to-host copies.
    pub huge_pages: bool,
}

impl Default for StagingConfig {
    fn default() -> StagingConfig {
        StagingConfig {
            slot_bytes: 16 << 20,
            slots: 2,
            max_workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
                .min(8),
            streaming_min_bytes: 64 << 20,
            huge_pages: false,
        }
    }
}

impl StagingConfig {
    /// The defaults with the environment's overrides.
    pub fn from_env() -> StagingConfig {
        from_vars(|name| std::env::var(name).ok())
    }

    /// The same settings brought into their ranges.
    pub fn clamped(self) -> StagingConfig {
        StagingConfig {
            slot_bytes: self.slot_bytes.clamp(1 << 20, 256 << 20),
            slots: self.slots.clamp(2, 8),
            max_workers: self.max_workers.clamp(1, 64),
            ..self
        }
    }
}

fn from_vars(var: impl Fn(&str) -> Option<String>) -> StagingConfig {
    let d = StagingConfig::default();
    let num = |name: &str| var(name).and_then(|v| v.trim().parse::<usize>().ok());
    let flag = |name: &str| var(name).map(|v| matches!(v.trim(), "1" | "true" | "yes"));
    let nt_mib = var("RUCUDA_STAGED_NT_MIB").and_then(|v| match v.trim() {
        "off" => Some(usize::MAX),
        m => m.parse::<usize>().ok().map(|m| m.saturating_mul(1 << 20)),
    });
    let nt_always = flag("RUCUDA_STAGED_NT").map(|on| if on { 0 } else { usize::MAX });
    StagingConfig {
        slot_bytes: num("RUCUDA_STAGED_SLOT_MIB")
            .map_or(d.slot_bytes, |m| m.saturating_mul(1 << 20)),
        slots: num("RUCUDA_STAGED_SLOTS").unwrap_or(d.slots),
        max_workers: num("RUCUDA_STAGED_WORKERS").unwrap_or(d.max_workers),
        streaming_min_bytes: nt_always.or(nt_mib).unwrap_or(d.streaming_min_bytes),
        huge_pages: flag("RUCUDA_STAGED_HUGEPAGES").unwrap_or(d.huge_pages),
    }
    .clamped()
}

fn cell() -> &'static Mutex<StagingConfig> {
    static CONFIG: OnceLock<Mutex<StagingConfig>> = OnceLock::new();
    CONFIG.get_or_init(|| Mutex::new(StagingConfig::from_env()))
}

/// The settings the next staged copy uses.
pub fn staging_config() -> StagingConfig {
    *cell().lock().unwrap_or_else(PoisonError::into_inner)
}

/// Changes the settings of later staged copies (clamped into their ranges); staging
/// buffers of another size or number are made again by the next copy.
///
/// ```
/// use rucuda_driver::memory::{set_staging_config, staging_config, StagingConfig};
/// let before = staging_config();
/// set_staging_config(StagingConfig { slots: 3, ..before });
/// assert_eq!(staging_config().slots, 3);
/// set_staging_config(before);
/// ```
pub fn set_staging_config(config: StagingConfig) {
    *cell().lock().unwrap_or_else(PoisonError::into_inner) = config.clamped();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_overrides_and_is_clamped() {
        let c = from_vars(|name| match name {
            "RUCUDA_STAGED_SLOT_MIB" => Some("32".into()),
            "RUCUDA_STAGED_SLOTS" => Some("99".into()),
            "RUCUDA_STAGED_WORKERS" => Some(" 12 ".into()),
            "RUCUDA_STAGED_NT_MIB" => Some("8".into()),
            "RUCUDA_STAGED_HUGEPAGES" => Some("no".into()),
            _ => None,
        });
        assert_eq!(
            c,
            StagingConfig {
                slot_bytes: 32 << 20,
                slots: 8,
                max_workers: 12,
                streaming_min_bytes: 8 << 20,
                huge_pages: false,
            }
        );
        assert_eq!(from_vars(|_| None), StagingConfig::default());
        assert_eq!(
            from_vars(|n| (n == "RUCUDA_STAGED_SLOTS").then(|| "x".into())).slots,
            2
        );
        let never = from_vars(|n| (n == "RUCUDA_STAGED_NT").then(|| "0".into()));
        assert_eq!(never.streaming_min_bytes, usize::MAX);
        let off = from_vars(|n| (n == "RUCUDA_STAGED_NT_MIB").then(|| "off".into()));
        assert_eq!(off.streaming_min_bytes, usize::MAX);
    }
}
