//! The scan's tuning from the device it runs on, and the environment knobs that override
//! it (for sweeping tunings on a GPU without rebuilding).
//!
//! **Prefetch distance.** Each block asks L2 to prefetch the tile that the block starting
//! about one block lifetime later will take (see [`render`](super::render)). How many bytes
//! that is depends on how fast memory drains: the bytes the device moves in that lead
//! time. So the automatic distance is `peak bandwidth × lead time`, the peak bandwidth read
//! off the device (`2 × memory clock × bus width`), the lead time fixed at
//! [`DEFAULT_LEAD_NS`] (the 8 MiB tuned on an H100, 3.35 TB/s, is a lead of 2.6 µs),
//! kept between an eighth and a third of the L2 (the prefetched tiles must stay in L2
//! until they are read, beside the data streaming through). On a device that does not
//! report its memory clock, a sixth of the L2, as before. The prefetched tiles must also
//! fit beside those the resident blocks hold (one wave: blocks per multiprocessor, from
//! the driver's occupancy calculator for the compiled kernel, × multiprocessors × tile
//! bytes), so the distance is at most half the L2 less that wave. An H100 (50 MiB of L2,
//! 16 KiB tiles, 7–8 blocks of 63–72 registers: a wave of 14–16.5 MiB) keeps the lead's
//! 8.3 MiB; an H200 (60 MiB of L2, 40 KiB tiles, 4 blocks of 128 registers for 4-byte
//! types, 3 of 168 for 8-byte ones, as CuPy's NVRTC builds them there) gets 9.4 MiB for
//! 4-byte types and the lead's 11.9 MiB for 8-byte ones. On that H200 (2026-11-28, one
//! bench process per setting, 2^28 elements) every distance from 3 to 12 MiB with 40 KiB
//! tiles measured 3436–3530 GB/s (i32, f32 and i64), within the spread of repeated runs
//! of one setting (±1%); 20 MiB fell to 3124–3159, and no prefetching to 3214–3254.
//!
//! **Knobs** (read once per process; a value that does not parse is ignored with the
//! default kept):
//! - `RUCUDA_SCAN_LEAD_NS`: the lead time of the automatic prefetch distance.
//! - `RUCUDA_SCAN_PREFETCH`: `off`, `auto`, or a distance in bytes (`12m`, `8388608`, `512k`).
//! - `RUCUDA_SCAN_THREADS`, `RUCUDA_SCAN_VECTORS`: the tile shape (threads per block, 16-byte
//!   vectors per thread) of 4- and 8-byte element types.
//! - `RUCUDA_SCAN_STREAMING`: `0` or `1`, evict-first loads and stores.
//! - `RUCUDA_SCAN_POLL_SPINS`, `RUCUDA_SCAN_POLL_NS`: the look-back's polls made back to
//!   back, and the wait between later ones.
//! - `RUCUDA_SCAN_EARLY`: `0` or `1`, a look-back warp beside the tile's threads
//!   ([`ScanTuning::early_look_back`]).
//!
//! **Tile shape.** 4- and 8-byte scans take 20 vectors a thread instead of 8 (40 KiB
//! tiles instead of 16) on a device with fast memory per multiprocessor
//! ([`DeviceFacts::has_fast_memory`]): on an H200 (one bench process per setting,
//! 2^28 elements, 2026-11-28, two alternations in one call) 3473 / 3461 / 3453 and
//! 3479 / 3487 / 3467 GB/s for i32 / f32 / i64 against 3262 / 3260 / 3320 and
//! 3288 / 3293 / 3348 with 8 (16: 3336 / 3327 / 3463, 18: 3444 / 3419 / 3399; 12 and 24
//! in between). With CUB and CuPy in the same bench call (`run.sh bench --cases`, 10:05Z,
//! `docs/bench/h200-scan.jsonl`): 3458 / 3488 / 3484 GB/s against CUB's 3096 / 3095 /
//! 3475, about 83% of the 4200 GB/s copy of the full run an hour before (where the 16 KiB
//! tiles gave 78.5–79.9%). The H100, where 8 was tuned (90.7% of its copy bandwidth),
//! keeps 8. Arrays smaller than one wave of the large tiles take the 16 KiB ones
//! everywhere ([`ScanKernel`](super::ScanKernel) chooses per call): there the larger
//! tiles left too few blocks (64 KiB of int32: 38 GB/s against 51).
//!
//! Other shapes on the H200 (same measure, 2026-11-28): 24 and 28 vectors a thread
//! (3 blocks of 167–168 registers for 4-byte types, 2 of 238–254 for 8-byte ones)
//! 3442–3538 GB/s for 4-byte types but 3273–3411 for int64; 32 vectors 3365 / 3392 /
//! 3475; 256 threads × 20 vectors 3494 / 3489 but 2987 for int64 (one block of 162
//! registers); 192 × 20 3225 / 3210 / 3477; 512 × 12 2921 / 2969 / 3104. None passes
//! 84% of the copy bandwidth (4241 GB/s in the full run of that day).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use rucuda_driver::{Context, Device, DeviceAttribute};

use super::render::{L2Prefetch, ScanTuning};

/// Memory bandwidth per multiprocessor (bytes/s) from which a device counts as having
/// fast memory ([`DeviceFacts::has_fast_memory`]): an H200 (4.8 TB/s over 132
/// multiprocessors, 36 GB/s each) has, an H100 (3.35 TB/s, 25 GB/s each) has not. The
/// scan's tiles and the sort's key-value tiles are larger on such devices; both were
/// measured better there and worse on the H100 (see
/// [`SortTuning::for_device`](crate::sort::SortTuning::for_device) and the module docs).
pub const FAST_MEMORY_PER_SM: f64 = 30e9;

/// The lead time of the automatic prefetch distance: what made 8 MiB on an H100.
pub const DEFAULT_LEAD_NS: u64 = 2_600;

/// What the prefetch distance is chosen from.
///
/// ```
/// use rucuda_array::scan::DeviceFacts;
/// let h100 = DeviceFacts {
///     l2_bytes: 50 << 20,
///     bandwidth_bytes_per_s: Some(3.35e12),
///     multiprocessors: 132,
///     shared_per_multiprocessor: 228 << 10,
///     threads_per_multiprocessor: 2048,
/// };
/// // 8 blocks of 16 KiB tiles on each of 132 multiprocessors leave the lead's 8.4 MiB.
/// let mib = h100.auto_prefetch_bytes(2_600, 132 * 8 * 16384) as f64 / (1 << 20) as f64;
/// assert!((8.0..8.6).contains(&mib));
/// let h200 = DeviceFacts { bandwidth_bytes_per_s: Some(4.8e12), ..h100 };
/// assert!(h200.auto_prefetch_bytes(2_600, 0) > 11 << 20);
/// // 4 blocks of 40 KiB tiles: the room left in half the L2 (3.4 MiB), raised to an eighth.
/// assert_eq!(h200.auto_prefetch_bytes(2_600, 132 * 4 * 40960), (50 << 20) / 8);
/// let unknown = DeviceFacts { bandwidth_bytes_per_s: None, ..h100 };
/// assert_eq!(unknown.auto_prefetch_bytes(2_600, 0), (50 << 20) / 6);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeviceFacts {
    /// L2 cache size.
    pub l2_bytes: u64,
    /// Peak memory bandwidth, when the device reports its memory clock and bus width.
    pub bandwidth_bytes_per_s: Option<f64>,
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// Shared memory of one multiprocessor, bytes.
    pub shared_per_multiprocessor: usize,
    /// Threads one multiprocessor holds at once.
    pub threads_per_multiprocessor: u32,
}

impl DeviceFacts {
    /// The facts of `ctx`'s device, asked of the driver once per device and kept: the
    /// memory clock attribute alone costs about 0.65 ms of host time on an H200 (CUDA
    /// 13.0; measured in `select_if`, which asked on every call and spent as long on it
    /// as in its kernel).
    pub fn of(ctx: &Context) -> crate::Result<DeviceFacts> {
        static KNOWN: OnceLock<Mutex<HashMap<Device, DeviceFacts>>> = OnceLock::new();
        let known = KNOWN.get_or_init(|| Mutex::new(HashMap::new()));
        let device = ctx.device();
        if let Some(facts) = known.lock().unwrap_or_else(|p| p.into_inner()).get(&device) {
            return Ok(*facts);
        }
        let facts = Self::ask(device)?;
        known
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(device, facts);
        Ok(facts)
    }

    /// The facts as the driver reports them now.
    fn ask(device: Device) -> crate::Result<DeviceFacts> {
        let l2_bytes = device.attribute(DeviceAttribute::L2CacheSize)?.max(0) as u64;
        // Deprecated attributes on newer drivers: absent or 0 means unknown.
        let clock_khz = device
            .attribute(DeviceAttribute::MemoryClockRate)
            .unwrap_or(0);
        let bus_bits = device
            .attribute(DeviceAttribute::GlobalMemoryBusWidth)
            .unwrap_or(0);
        let bandwidth_bytes_per_s = (clock_khz > 0 && bus_bits > 0)
            .then(|| 2.0 * f64::from(clock_khz) * 1e3 * f64::from(bus_bits) / 8.0);
        let multiprocessors = device
            .attribute(DeviceAttribute::MultiprocessorCount)?
            .max(1) as u32;
        let shared_per_multiprocessor = device
            .attribute(DeviceAttribute::MaxSharedMemoryPerMultiprocessor)?
            .max(0) as usize;
        let threads_per_multiprocessor = device
            .attribute(DeviceAttribute::MaxThreadsPerMultiprocessor)?
            .max(0) as u32;
        Ok(DeviceFacts {
            l2_bytes,
            bandwidth_bytes_per_s,
            multiprocessors,
            shared_per_multiprocessor,
            threads_per_multiprocessor,
        })
    }

    /// Memory bandwidth per multiprocessor, when the bandwidth is known.
    pub fn bandwidth_per_multiprocessor(&self) -> Option<f64> {
        self.bandwidth_bytes_per_s
            .map(|bw| bw / f64::from(self.multiprocessors.max(1)))
    }

    /// Whether memory is at least [`FAST_MEMORY_PER_SM`] per multiprocessor (false when
    /// the bandwidth is unknown).
    ///
    /// ```
    /// use rucuda_array::scan::DeviceFacts;
    /// let h200 = DeviceFacts {
    ///     l2_bytes: 60 << 20,
    ///     bandwidth_bytes_per_s: Some(4.8e12),
    ///     multiprocessors: 132,
    ///     shared_per_multiprocessor: 228 << 10,
    ///     threads_per_multiprocessor: 2048,
    /// };
    /// assert!(h200.has_fast_memory());
    /// assert!(!DeviceFacts { bandwidth_bytes_per_s: Some(3.35e12), ..h200 }.has_fast_memory());
    /// assert!(!DeviceFacts { bandwidth_bytes_per_s: None, ..h200 }.has_fast_memory());
    /// ```
    pub fn has_fast_memory(&self) -> bool {
        self.bandwidth_per_multiprocessor()
            .is_some_and(|b| b >= FAST_MEMORY_PER_SM)
    }

    /// The automatic prefetch distance in bytes for a lead time of `lead_ns` beside
    /// `resident_bytes` of tiles that the kernel's resident blocks hold (see the module
    /// docs): the lead's bytes, at most what half the L2 leaves beside the resident tiles,
    /// kept between an eighth and a third of the L2.
    pub fn auto_prefetch_bytes(&self, lead_ns: u64, resident_bytes: u64) -> u64 {
        let l2 = self.l2_bytes;
        match self.bandwidth_bytes_per_s {
            Some(bw) if l2 > 0 => {
                let lead = (bw * lead_ns as f64 * 1e-9) as u64;
                let room = (l2 / 2).saturating_sub(resident_bytes);
                lead.min(room).clamp(l2 / 8, l2 / 3)
            }
            _ => l2 / 6,
        }
    }

    /// The distance of `prefetch` in tiles of `tile_bytes` (0: off), for a kernel whose
    /// resident blocks hold no tiles worth counting ([`DeviceFacts::tiles_ahead_beside`]).
    pub fn tiles_ahead(&self, prefetch: L2Prefetch, tile_bytes: usize) -> u64 {
        self.tiles_ahead_beside(prefetch, tile_bytes, 0)
    }

    /// The distance of `prefetch` in tiles of `tile_bytes` (0: off) for a kernel whose
    /// resident blocks hold `resident_bytes` of tiles on the whole device.
    pub fn tiles_ahead_beside(
        &self,
        prefetch: L2Prefetch,
        tile_bytes: usize,
        resident_bytes: u64,
    ) -> u64 {
        match prefetch {
            L2Prefetch::Auto => {
                let bytes = self.auto_prefetch_bytes(knobs().lead_ns, resident_bytes);
                (bytes / tile_bytes.max(1) as u64).max(1)
            }
            other => other.tiles_ahead(tile_bytes, self.l2_bytes),
        }
    }
}

/// The environment's overrides (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Knobs {
    lead_ns: u64,
    prefetch: Option<L2Prefetch>,
    threads: Option<u32>,
    vectors: Option<usize>,
    streaming: Option<bool>,
    poll_spins: Option<u32>,
    poll_sleep_ns: Option<u32>,
    early: Option<bool>,
}

fn knobs() -> Knobs {
    static KNOBS: OnceLock<Knobs> = OnceLock::new();
    *KNOBS.get_or_init(|| read_knobs(|name| std::env::var(name).ok()))
}

fn read_knobs(var: impl Fn(&str) -> Option<String>) -> Knobs {
    Knobs {
        lead_ns: var("RUCUDA_SCAN_LEAD_NS")
            .and_then(|v| v.trim().parse().ok())
            .filter(|&v: &u64| v > 0)
            .unwrap_or(DEFAULT_LEAD_NS),
        prefetch: var("RUCUDA_SCAN_PREFETCH").and_then(|v| parse_prefetch(&v)),
        threads: var("RUCUDA_SCAN_THREADS").and_then(|v| v.trim().parse().ok()),
        vectors: var("RUCUDA_SCAN_VECTORS").and_then(|v| v.trim().parse().ok()),
        streaming: var("RUCUDA_SCAN_STREAMING").and_then(|v| parse_flag(&v)),
        poll_spins: var("RUCUDA_SCAN_POLL_SPINS").and_then(|v| v.trim().parse().ok()),
        poll_sleep_ns: var("RUCUDA_SCAN_POLL_NS").and_then(|v| v.trim().parse().ok()),
        early: var("RUCUDA_SCAN_EARLY").and_then(|v| parse_flag(&v)),
    }
}

/// `0`, `false`, `no` or `1`, `true`, `yes`.
fn parse_flag(v: &str) -> Option<bool> {
    match v.trim() {
        "0" | "false" | "no" => Some(false),
        "1" | "true" | "yes" => Some(true),
        _ => None,
    }
}

/// `off`, `auto`, or bytes with an optional `k`/`m` suffix.
pub(crate) fn parse_prefetch(v: &str) -> Option<L2Prefetch> {
    let v = v.trim().to_ascii_lowercase();
    match v.as_str() {
        "off" | "0" => return Some(L2Prefetch::Off),
        "auto" => return Some(L2Prefetch::Auto),
        _ => {}
    }
    let (digits, scale) = match v.as_bytes().last()? {
        b'k' => (&v[..v.len() - 1], 1u64 << 10),
        b'm' => (&v[..v.len() - 1], 1 << 20),
        _ => (v.as_str(), 1),
    };
    let n: u64 = digits.parse().ok()?;
    Some(L2Prefetch::Bytes(n.checked_mul(scale)?))
}

/// `tuning` with the environment's overrides applied (the shape ones only for 4- and
/// 8-byte elements, whose default they replace); an override that makes the shape
/// invalid is ignored.
pub(crate) fn with_env_overrides(tuning: ScanTuning, element_size: usize) -> ScanTuning {
    apply(tuning, element_size, knobs())
}

fn apply(mut tuning: ScanTuning, element_size: usize, k: Knobs) -> ScanTuning {
    let default = tuning;
    if let Some(p) = k.prefetch {
        tuning.prefetch = p;
    }
    if let Some(s) = k.streaming {
        tuning.streaming = s;
    }
    if let Some(s) = k.poll_spins {
        tuning.poll_spins = s;
    }
    if let Some(ns) = k.poll_sleep_ns {
        tuning.poll_sleep_ns = ns;
    }
    if let Some(e) = k.early {
        tuning.early_look_back = e;
    }
    if element_size == 4 || element_size == 8 {
        if let Some(t) = k.threads {
            tuning.threads = t;
        }
        if let Some(v) = k.vectors {
            tuning.vectors = v;
        }
    }
    if tuning.check().is_err() {
        return ScanTuning {
            prefetch: tuning.prefetch,
            streaming: tuning.streaming,
            ..default
        };
    }
    tuning
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_parse_and_apply() {
        assert_eq!(parse_prefetch("12m"), Some(L2Prefetch::Bytes(12 << 20)));
        assert_eq!(parse_prefetch(" 512K "), Some(L2Prefetch::Bytes(512 << 10)));
        assert_eq!(parse_prefetch("off"), Some(L2Prefetch::Off));
        assert_eq!(parse_prefetch("Auto"), Some(L2Prefetch::Auto));
        assert_eq!(parse_prefetch("lots"), None);
        let k = read_knobs(|name| match name {
            "RUCUDA_SCAN_LEAD_NS" => Some("4000".into()),
            "RUCUDA_SCAN_PREFETCH" => Some("16m".into()),
            "RUCUDA_SCAN_THREADS" => Some("256".into()),
            "RUCUDA_SCAN_STREAMING" => Some("0".into()),
            "RUCUDA_SCAN_POLL_SPINS" => Some("2".into()),
            "RUCUDA_SCAN_POLL_NS" => Some(" 500 ".into()),
            "RUCUDA_SCAN_EARLY" => Some("yes".into()),
            _ => None,
        });
        assert_eq!(k.lead_ns, 4000);
        let polls = apply(ScanTuning::for_size(8), 8, k);
        assert_eq!((polls.poll_spins, polls.poll_sleep_ns), (2, 500));
        assert!(polls.early_look_back);
        assert!(!apply(ScanTuning::for_size(8), 8, Knobs::default()).early_look_back);
        let t = apply(ScanTuning::for_size(4), 4, k);
        assert_eq!(
            (t.threads, t.vectors, t.streaming, t.prefetch),
            (256, 8, false, L2Prefetch::Bytes(16 << 20))
        );
        // 2-byte types keep their own shape.
        let t2 = apply(ScanTuning::for_size(2), 2, k);
        assert_eq!(t2.threads, ScanTuning::for_size(2).threads);
        // An invalid shape falls back to the default shape.
        let bad = Knobs {
            threads: Some(100),
            ..k
        };
        assert_eq!(apply(ScanTuning::for_size(4), 4, bad).threads, 128);
        assert_eq!(read_knobs(|_| None).lead_ns, DEFAULT_LEAD_NS);
    }

    #[test]
    fn the_distance_stays_inside_the_l2() {
        let f = DeviceFacts {
            l2_bytes: 60 << 20,
            bandwidth_bytes_per_s: Some(100e12),
            multiprocessors: 132,
            shared_per_multiprocessor: 228 << 10,
            threads_per_multiprocessor: 2048,
        };
        assert_eq!(f.auto_prefetch_bytes(2_600, 0), (60 << 20) / 3);
        // Resident tiles leave less room: 30 MiB of half the L2 less 20 MiB.
        assert_eq!(f.auto_prefetch_bytes(2_600, 20 << 20), 10 << 20);
        assert_eq!(f.auto_prefetch_bytes(2_600, 100 << 20), (60 << 20) / 8);
        let slow = DeviceFacts {
            bandwidth_bytes_per_s: Some(1e9),
            ..f
        };
        assert_eq!(slow.auto_prefetch_bytes(2_600, 0), (60 << 20) / 8);
        assert_eq!(
            f.tiles_ahead_beside(L2Prefetch::Auto, 1 << 20, 20 << 20),
            10
        );
        assert_eq!(f.tiles_ahead(L2Prefetch::Off, 16384), 0);
        assert_eq!(f.tiles_ahead(L2Prefetch::Bytes(32768), 16384), 2);
    }
}
