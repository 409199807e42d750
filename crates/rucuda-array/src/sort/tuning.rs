//! [`SortTuning`]: tile shapes of the radix sort kernels, from the element sizes and the
//! device, each overridable by an environment variable so that a whole sweep runs
//! without rebuilding (the bench's `RUCUDA_SORT_*` runs).

use crate::error::{ArrayError, Result};
use crate::scan::DeviceFacts;

/// Static shared memory one block may use (bytes).
const STATIC_SHARED: usize = 48 * 1024;
/// Shared memory one onesweep block may ask for (bytes): its exchange buffer is dynamic,
/// so tiles past 48 KiB run on devices that opt in that far (227 KiB a block on the
/// H100 and H200); a smaller device's driver refuses a larger shape with a typed error.
const ONESWEEP_SHARED: usize = 227 * 1024;

/// Tile shapes of the sort kernels.
///
/// | field | environment variable | default |
/// |---|---|---|
/// | `threads` | `RUCUDA_SORT_THREADS` | 512 (keys and values of 1–4 bytes), else 256 |
/// | `items` | `RUCUDA_SORT_ITEMS` | 24 (keys of 1–4 bytes), 19 (with values of 1–4 bytes; 16 without fast memory, see [`SortTuning::for_device`]), 16 (wider values), 12 (8-byte keys) |
/// | `local_threads` | `RUCUDA_SORT_LOCAL_THREADS` | 256 |
/// | `local_max` | `RUCUDA_SORT_LOCAL_MAX` | 4096 (fewer when shared memory is short) |
/// | `hist_blocks_per_sm` | `RUCUDA_SORT_HIST_BLOCKS_PER_SM` | 4 |
/// | `table_budget` | `RUCUDA_SORT_TABLE_MIB` (MiB) | 256 MiB |
/// | `peer_match` | `RUCUDA_SORT_PEER_MATCH` (`match_any`, `ballots`) | `ballots` |
/// | `min_blocks` | `RUCUDA_SORT_MIN_BLOCKS` | 2 with 512 threads (64 registers), else 0 (the compiler's choice) |
///
/// The defaults are fitted to the device ([`SortTuning::for_device`]: its memory
/// bandwidth, shared memory and threads per multiprocessor) before the overrides apply.
///
/// Rows of at most `local_max` elements are sorted by one block each in shared memory;
/// longer rows (and whole arrays) by the onesweep passes with tiles of
/// `threads × items` elements. The histogram pass runs `hist_blocks_per_sm` blocks per
/// multiprocessor.
///
/// ```
/// use rucuda_array::sort::SortTuning;
/// let t = SortTuning::for_sizes(4, 4);
/// assert_eq!((t.threads, t.items, t.min_blocks), (512, 19, 2));
/// assert!(t.check(4, 4).is_ok());
/// assert!(SortTuning { threads: 100, ..t }.check(4, 4).is_err());
/// assert!(SortTuning { min_blocks: 4, ..t }.check(4, 4).is_ok());
/// assert!(SortTuning { min_blocks: 9, ..t }.check(4, 4).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SortTuning {
    /// Threads per block of the onesweep passes (a multiple of 32, 256 to 1024).
    pub threads: u32,
    /// Keys per thread of the onesweep passes (1 to 32).
    pub items: u32,
    /// Threads per block of the one-block-per-row sort (a multiple of 32, 256 to 1024).
    pub local_threads: u32,
    /// Longest row sorted by one block (0: never).
    pub local_max: usize,
    /// Blocks per multiprocessor of the histogram pass.
    pub hist_blocks_per_sm: u32,
    /// Bytes of per-row digit tables one onesweep launch may use (more rows of more
    /// than `local_max` elements go in batches).
    pub table_budget: usize,
    /// How the ranking warps find the lanes holding their digit.
    pub peer_match: PeerMatch,
    /// Blocks of the onesweep digit pass that must fit a multiprocessor by their
    /// registers (`__launch_bounds__`'s second argument; 0: the compiler's choice). The
    /// 512-thread tiles of 4-byte keys take 2 (64 registers: two blocks, 1024 threads, a
    /// multiprocessor): with 256-thread tiles of 16 keys, 4 sorted no faster on one H100
    /// (2026-11-28: u32 pairs 22.30 GK/s against 22.16, f32 keys 41.55 against 41.29).
    pub min_blocks: u32,
}

/// How a warp ranking a tile finds the lanes that hold the same digit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PeerMatch {
    /// The hardware's `__match_any_sync`.
    MatchAny,
    /// One `__ballot_sync` per digit bit, the lanes that agree on every bit kept (the way
    /// CUB's onesweep finds peers). The default: on the H200 (2026-11-27 sweep,
    /// `sort_tune_*` cases) it sorted 2^28 u32 keys at 24.5 GK/s against 20.0 with
    /// `__match_any_sync`, and 4096 rows of 4096 f32 at 49.8 against 36.0; the whole sort
    /// suite passed with it.
    #[default]
    Ballots,
}

impl PeerMatch {
    /// The `RUCUDA_SORT_PEER_MATCH` spelling: `match_any` or `ballots`.
    ///
    /// ```
    /// use rucuda_array::sort::PeerMatch;
    /// assert_eq!(PeerMatch::parse("ballots"), Some(PeerMatch::Ballots));
    /// assert_eq!(PeerMatch::parse("match_any"), Some(PeerMatch::MatchAny));
    /// assert_eq!(PeerMatch::parse("other"), None);
    /// ```
    pub fn parse(s: &str) -> Option<PeerMatch> {
        match s.trim() {
            "match_any" => Some(PeerMatch::MatchAny),
            "ballots" => Some(PeerMatch::Ballots),
            _ => None,
        }
    }
}

/// Process-wide overrides of [`SortTuning`]'s fields (`None`: keep the default), applied
/// after the device fit and before the environment variables, so that one process (the
/// bench's tuning sweep) can measure several shapes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TuningOverrides {
    /// [`SortTuning::threads`].
    pub threads: Option<u32>,
    /// [`SortTuning::items`].
    pub items: Option<u32>,
    /// [`SortTuning::local_threads`].
    pub local_threads: Option<u32>,
    /// [`SortTuning::local_max`].
    pub local_max: Option<usize>,
    /// [`SortTuning::hist_blocks_per_sm`].
    pub hist_blocks_per_sm: Option<u32>,
    /// [`SortTuning::table_budget`].
    pub table_budget: Option<usize>,
    /// [`SortTuning::peer_match`].
    pub peer_match: Option<PeerMatch>,
    /// [`SortTuning::min_blocks`].
    pub min_blocks: Option<u32>,
}

static OVERRIDES: std::sync::RwLock<TuningOverrides> = std::sync::RwLock::new(TuningOverrides {
    threads: None,
    items: None,
    local_threads: None,
    local_max: None,
    hist_blocks_per_sm: None,
    table_budget: None,
    peer_match: None,
    min_blocks: None,
});

/// Sets the process-wide [`TuningOverrides`] (sorts started afterwards use them; checked
/// at each call by [`SortTuning::check`]).
///
/// ```
/// use rucuda_array::sort::{set_tuning_overrides, TuningOverrides};
/// set_tuning_overrides(TuningOverrides { items: Some(12), ..Default::default() });
/// set_tuning_overrides(TuningOverrides::default());
/// ```
pub fn set_tuning_overrides(o: TuningOverrides) {
    match OVERRIDES.write() {
        Ok(mut g) => *g = o,
        Err(p) => *p.into_inner() = o,
    }
}

fn overrides() -> TuningOverrides {
    match OVERRIDES.read() {
        Ok(g) => *g,
        Err(p) => *p.into_inner(),
    }
}

fn env_u32(name: &str) -> Option<u32> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Shared memory of a ranking block: the exchange buffer plus a counter per warp and
/// digit (and a little more).
pub(crate) fn shared_bytes(threads: u32, items: u32, exchange: usize) -> usize {
    threads as usize * items as usize * exchange + (threads as usize / 32) * 1024 + 2048 + 64
}

impl SortTuning {
    /// The defaults for keys of `key_size` bytes moving values of `value_size` bytes
    /// (0: none), before environment overrides.
    pub fn for_sizes(key_size: usize, value_size: usize) -> SortTuning {
        let exchange = key_size.max(value_size);
        // Onesweep tiles. Keys (and values) of 4 bytes at most: 512 threads of 24 keys
        // (19 with values: more spill), 64 registers. One H200 run, 2^28 keys against
        // CUB's 42.15 / 47.44 / 35.94 GK/s (2026-11-28, `sort_*_GKps` with
        // RUCUDA_SORT_* settings): u32 keys 47.2 / f32 keys 48.0 / u32 pairs 36.3 at
        // 512 × 19, 50.3 / 51.0 / 31.8 at 512 × 24, against 41.1 / 42.0 / 27.9 with
        // the 256 × 16 tiles before; 384 × 23 (CUB's shape) 45.5 / 46.5 / 35.6; 640 and
        // 768 threads (one block a multiprocessor) 33–35 / 26–27. On an H100 the same
        // defaults gave 49.96 / 50.18 / 27.40 against CUB's 41.98 / 46.83 / 30.81 (the
        // pairs 0.89×, from 0.72×); its pairs take 16 keys a thread (`for_device`).
        // Asking L2 for each tile's values when the tile starts (`prefetch.global.L2`)
        // made the pairs slower on both (2026-11-28, one call each: H200 35.72 against
        // 36.53, H100 26.06 against 28.20) and was not kept.
        // The exchange buffer is dynamic shared memory (48 KiB at 512 × 24).
        let (threads, items, min_blocks) = match (key_size, value_size) {
            (k, 0) if k <= 4 => (512, 24, 2),
            (k, v) if k <= 4 && v <= 4 => (512, 19, 2),
            (k, _) if k >= 8 => (256, 12, 0),
            _ => (256, 16, 0),
        };
        let local_threads = 256;
        let mut local_max = 4096usize;
        while local_max > 256
            && shared_bytes(local_threads, (local_max / 256) as u32, exchange) > STATIC_SHARED
        {
            local_max /= 2;
        }
        SortTuning {
            threads,
            items,
            local_threads,
            local_max,
            hist_blocks_per_sm: 4,
            table_budget: 256 << 20,
            peer_match: PeerMatch::Ballots,
            min_blocks,
        }
    }

    /// [`SortTuning::for_sizes`] fitted to `device`: 4-byte pairs take 16 keys a thread
    /// instead of 19 without fast memory ([`DeviceFacts::has_fast_memory`]: less than
    /// [`FAST_MEMORY_PER_SM`](crate::scan::FAST_MEMORY_PER_SM) per multiprocessor, or an
    /// unknown speed); then fewer keys per thread (down to 8) while fewer than
    /// two onesweep blocks, or one row-sorting block, would fit a multiprocessor by its
    /// shared memory and threads (an H100's 228 KiB hold eight of the defaults).
    ///
    /// ```
    /// use rucuda_array::scan::DeviceFacts;
    /// use rucuda_array::sort::SortTuning;
    /// let h200 = DeviceFacts {
    ///     l2_bytes: 60 << 20,
    ///     bandwidth_bytes_per_s: Some(4.8e12),
    ///     multiprocessors: 132,
    ///     shared_per_multiprocessor: 228 * 1024,
    ///     threads_per_multiprocessor: 2048,
    /// };
    /// assert_eq!(SortTuning::for_device(4, 4, &h200), SortTuning::for_sizes(4, 4));
    /// let h100 = DeviceFacts { bandwidth_bytes_per_s: Some(3.35e12), ..h200 };
    /// assert_eq!(SortTuning::for_device(4, 4, &h100).items, 16);
    /// assert_eq!(SortTuning::for_device(4, 0, &h100).items, 24);
    /// let small = DeviceFacts {
    ///     shared_per_multiprocessor: 48 * 1024,
    ///     threads_per_multiprocessor: 1024,
    ///     ..h200
    /// };
    /// assert!(SortTuning::for_device(8, 8, &small).tile() < SortTuning::for_sizes(8, 8).tile());
    /// ```
    pub fn for_device(key_size: usize, value_size: usize, device: &DeviceFacts) -> SortTuning {
        let mut t = SortTuning::for_sizes(key_size, value_size);
        // One bench call each (2^28 u32 pairs, 512-thread tiles, `min_blocks` 2,
        // 2026-11-28): an H100 sorted 28.24 GK/s with 19 keys a thread against 30.15
        // with 16 (17: 29.39, 18: 28.91; CUB 30.47 in the same call), while an H200 gave
        // 36.34 with 19 and 34.21 with 16 (CUB 35.95) the day before.
        if key_size <= 4
            && (1..=4).contains(&value_size)
            && t.items > 16
            && !device.has_fast_memory()
        {
            t.items = 16;
        }
        let exchange = key_size.max(value_size);
        let (shared_per_sm, threads_per_sm) = (
            device.shared_per_multiprocessor,
            device.threads_per_multiprocessor,
        );
        let fits = |threads: u32, items: u32| {
            let by_shared = shared_per_sm / shared_bytes(threads, items, exchange).max(1);
            let by_threads = (threads_per_sm / threads.max(1)) as usize;
            by_shared.min(by_threads)
        };
        while t.items > 8 && fits(t.threads, t.items) < 2 {
            t.items -= 2;
        }
        while t.local_max > 1024 && fits(t.local_threads, t.local_items(t.local_max)) < 1 {
            t.local_max /= 4;
        }
        t
    }

    /// [`SortTuning::for_device`] with the `RUCUDA_SORT_*` environment variables applied.
    pub fn from_env_for_device(
        key_size: usize,
        value_size: usize,
        device: &DeviceFacts,
    ) -> SortTuning {
        SortTuning::from_env_over(SortTuning::for_device(key_size, value_size, device))
    }

    /// [`SortTuning::for_sizes`] with the `RUCUDA_SORT_*` environment variables applied.
    pub fn from_env(key_size: usize, value_size: usize) -> SortTuning {
        SortTuning::from_env_over(SortTuning::for_sizes(key_size, value_size))
    }

    fn from_env_over(mut t: SortTuning) -> SortTuning {
        let o = overrides();
        if let Some(v) = o.threads {
            t.threads = v;
        }
        if let Some(v) = o.items {
            t.items = v;
        }
        if let Some(v) = o.local_threads {
            t.local_threads = v;
        }
        if let Some(v) = o.local_max {
            t.local_max = v;
        }
        if let Some(v) = o.hist_blocks_per_sm {
            t.hist_blocks_per_sm = v.max(1);
        }
        if let Some(v) = o.table_budget {
            t.table_budget = v;
        }
        if let Some(v) = o.peer_match {
            t.peer_match = v;
        }
        if let Some(v) = o.min_blocks {
            t.min_blocks = v;
        }
        if let Some(v) = env_u32("RUCUDA_SORT_THREADS") {
            t.threads = v;
        }
        if let Some(v) = env_u32("RUCUDA_SORT_ITEMS") {
            t.items = v;
        }
        if let Some(v) = env_u32("RUCUDA_SORT_LOCAL_THREADS") {
            t.local_threads = v;
        }
        if let Some(v) = env_u32("RUCUDA_SORT_LOCAL_MAX") {
            t.local_max = v as usize;
        }
        if let Some(v) = env_u32("RUCUDA_SORT_HIST_BLOCKS_PER_SM") {
            t.hist_blocks_per_sm = v.max(1);
        }
        if let Some(v) = env_u32("RUCUDA_SORT_TABLE_MIB") {
            t.table_budget = (v as usize) << 20;
        }
        if let Some(v) = env_u32("RUCUDA_SORT_MIN_BLOCKS") {
            t.min_blocks = v;
        }
        if let Some(v) = std::env::var("RUCUDA_SORT_PEER_MATCH")
            .ok()
            .and_then(|v| PeerMatch::parse(&v))
        {
            t.peer_match = v;
        }
        t
    }

    /// Elements per onesweep tile.
    pub fn tile(&self) -> usize {
        self.threads as usize * self.items as usize
    }

    /// Checks the shapes for keys of `key_size` and values of `value_size` bytes.
    pub fn check(&self, key_size: usize, value_size: usize) -> Result<()> {
        let exchange = key_size.max(value_size);
        for (what, threads) in [
            ("threads", self.threads),
            ("local_threads", self.local_threads),
        ] {
            if threads % 32 != 0 || !(256..=1024).contains(&threads) {
                return Err(ArrayError::InvalidArgument(format!(
                    "sort tuning: {what} = {threads} (a multiple of 32 from 256 to 1024)"
                )));
            }
        }
        if self.min_blocks.saturating_mul(self.threads) > 2048 {
            return Err(ArrayError::InvalidArgument(format!(
                "sort tuning: min_blocks = {} blocks of {} threads (at most 2048 threads a multiprocessor)",
                self.min_blocks, self.threads
            )));
        }
        if !(1..=32).contains(&self.items) {
            return Err(ArrayError::InvalidArgument(format!(
                "sort tuning: items = {} (1 to 32)",
                self.items
            )));
        }
        if shared_bytes(self.threads, self.items, exchange) > ONESWEEP_SHARED {
            return Err(ArrayError::InvalidArgument(format!(
                "sort tuning: tiles of {} × {} keys of {key_size} bytes (values {value_size}) need more than 227 KiB of shared memory",
                self.threads, self.items
            )));
        }
        if self.local_max > 0 {
            let items = self.local_items(self.local_max);
            if items > 64 || shared_bytes(self.local_threads, items, exchange) > STATIC_SHARED {
                return Err(ArrayError::InvalidArgument(format!(
                    "sort tuning: rows of {} elements do not fit one block of {} threads",
                    self.local_max, self.local_threads
                )));
            }
        }
        Ok(())
    }

    /// Keys per thread of the one-block sort of rows of `len` elements: a power of 4 (1,
    /// 4, 16, ...: few instantiations to compile, at most 4× the row in a tile).
    ///
    /// ```
    /// let t = rucuda_array::sort::SortTuning::for_sizes(4, 0);
    /// assert_eq!([t.local_items(1), t.local_items(300), t.local_items(1025)], [1, 4, 16]);
    /// ```
    pub fn local_items(&self, len: usize) -> u32 {
        let need = len.div_ceil(self.local_threads as usize).max(1) as u32;
        let mut items = 1;
        while items < need {
            items *= 4;
        }
        items
    }
}
