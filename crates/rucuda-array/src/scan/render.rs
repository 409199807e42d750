//! CUDA source of a single-pass scan with decoupled look-back (Merrill & Garland,
//! "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016). Pure text: every
//! variant is unit-tested here and compiled with NVRTC in CI. The CUDA text lives in
//! `cuda/` beside this file (`tile.cu`: one tile's work; `direct.cu`: the kernel).
//!
//! A tile is `B threads × V vectors × K` elements (`K` = 16 bytes of the element type);
//! [`ScanTuning`] chooses `B`, `V`, cache hints and prefetching; [`ScanTuning::for_size`]
//! gives the default per element size. One block per tile:
//!
//! 1. Thread 0 takes the tile index from an atomic counter (not `blockIdx`): tiles are
//!    handed out in the order blocks ask, so every tile a block waits for belongs to a
//!    block that is already running, whatever the scheduler does.
//! 2. Each thread loads its V vectors with 16-byte loads, vector `c` of thread `t` being
//!    vector `c × B + t` of the tile, so each warp load is 512 contiguous bytes. The last
//!    tile (and unaligned arrays) load element by element, padding with the neutral.
//! 3. In registers: each vector's inclusive scan; warp-shuffle scans of the V vector
//!    totals across each warp; the V × B / 32 warp totals in shared memory are scanned by
//!    warp 0 (a few consecutive ones per lane), giving the tile's aggregate.
//! 4. Warp 0 publishes the aggregate (tile 0: its inclusive prefix) in the tile's status,
//!    then looks back: lane `l` reads the status of tile `t - 1 - l`, the warp waits until
//!    every lane up to the nearest tile with an inclusive prefix has at least an
//!    aggregate, folds those values in tile order (a shuffle tree that keeps the order),
//!    and moves 32 tiles back if no prefix was in the window. It publishes the tile's
//!    inclusive prefix.
//! 5. Every thread combines the tile prefix, its warp's prefix, its lane's prefix and its
//!    vector's elements, and stores with 16-byte stores.
//!
//! Two things keep HBM busy while blocks wait for their predecessors (measured on an
//! H100 with 2^28 int32: 77% of the copy bandwidth without them, 90% with them):
//! - **L2 prefetch**: each block asks L2 (`prefetch.global.L2`, one per 128-byte line)
//!   for the tile some megabytes past its own index ([`L2Prefetch`]; by default a sixth
//!   of the device's L2, 8 MiB on an H100), which the block starting about one block
//!   lifetime later takes: its loads then hit L2. The index is only a guess (blocks take
//!   tiles by ticket), so a wrong guess costs bandwidth, never correctness.
//! - **Streaming hints**: loads and stores are evict-first (`ld.global.cs`,
//!   `st.global.cs`), so the data streaming through does not push the prefetched tiles
//!   out of L2.
//!
//! Why blocks do not overlap their own next tile instead (`RUCUDA_BENCH_SCAN_SWEEP` in
//! the bench measures tunings): a persistent kernel copying its next tile into shared
//! memory (`cp.async`) while scanning the current one makes blocks advance in lock-step
//! generations whose look-back spans the whole grid (half the copy bandwidth); loading
//! the tile of the block's index while its ticket is on the way costs more than it gains
//! once prefetching is on (17 points).
//!
//! Where the H200's last 15% go (2^28 int32, one bench process per setting, same machine,
//! 2026-11-27): this kernel 3248–3302 GB/s (78% of copy). Without the look-back (every
//! tile scanned as if it were the first: wrong sums, same traffic) 3910 GB/s with
//! prefetching off and 3751 with it; loading and storing the tiles with no scan at all,
//! 3936 and 3740. So the look-back's waiting, not the loads, stores or arithmetic, costs
//! the difference, and prefetching pays only while blocks wait. Measured again then: the
//! persistent `cp.async` kernel above, 1736 GB/s (its grid at the resident count or at
//! the tile count, prefetching on or off: 1620–1750); 8 blocks per multiprocessor forced
//! through `__launch_bounds__` (64 registers), 3335 GB/s, 3364 with 8 MiB of prefetch.
//!
//! More tiles in flight do not buy it back either (H200, same measure, 2026-11-27, this
//! kernel 3275–3298 GB/s in the same call): a variant that staged each tile in shared
//! memory with one bulk copy (`cp.async.bulk` on an mbarrier) and read it there before
//! and after the look-back held only the vectors' totals across the wait, 32–48
//! registers instead of 63–72, so 12 blocks resided per multiprocessor instead of 8. It
//! reached 3211 GB/s, 3223 with 12 blocks forced, 3147 without prefetching, 3017 with
//! 8 KiB tiles at 16 blocks and 3132 with 256-thread tiles; 8 blocks forced on this kernel
//! gave 3303. So the waiting is not for room to load more: it is the look-back's own
//! latency. The variant was not kept. Nor is it the polls' traffic: pacing them
//! ([`ScanTuning::poll_spins`], [`ScanTuning::poll_sleep_ns`]) moved the same scan only
//! within its run-to-run spread (another H200, default 3306 and 3329 GB/s; no waits 3286;
//! a wait after every poll of 32, 200, 500 or 1000 ns: 3305, 3331, 3341, 3297; 32 polls
//! back to back: 3295).
//!
//! Nor is it the look-back's reach or the aggregates' arrival (H200, 2^28 elements, one
//! bench process per setting, 2026-11-28; this kernel 3301 / 3297 / 3352 GB/s for
//! i32 / f32 / i64 in the first call, 3324 / 3276 / 3380 in the second). A look-back whose
//! lanes each read 2, 4 or 8 statuses per poll (a window of 64 to 256 tiles) was slower
//! at every width: 3233 / 3234 / 3063, 3107 / 2986 / 2468, 2193 / 2210 / 1536. Blocks that
//! loaded and reduced the tile the prefetch distance ahead and published its aggregate,
//! instead of prefetching it (so every block found all its predecessors' aggregates
//! long published and its own tile in L2; exact on the GPU tests, in and out of place,
//! with and without a neutral element), gave 3262 / 3282 / 3191 at the automatic 12 MiB,
//! 3357 / 3362 / 3003 at 6 MiB, 2706 / 2711 / 2608 at 24 MiB, and no better with the
//! wider look-backs. Neither was kept.
//!
//! Nor is it the look-back's start (H200, same measure, 2026-11-28): a look-back warp in
//! front of the tile's threads ([`ScanTuning::early_look_back`]; `cuda/early.cu`) looks
//! back from the block's start while they load, and the tile publishes its inclusive
//! prefix at once when the look-back has ended by the time its aggregate is known. Exact
//! on the GPU tests; with 40 KiB tiles slower (3337–3404 / 3370–3411 / 3126–3173 GB/s
//! for i32 / f32 / i64 against 3450–3454 / 3453–3466 / 3426–3448 without it in the same
//! call), with 16 KiB tiles faster for 4-byte types (3391–3428 against 3306–3344) but
//! slower for int64 (3281–3304 against 3336–3387), and below the 40 KiB tiles without
//! it. It stays a tuning, off by default: a device whose default tiles are the 16 KiB
//! ones (an H100) may gain from it, which nobody has measured yet.
//!
//! Status words (`cuda/status_words.cuh`): the value's bytes in 32-bit chunks, each chunk
//! in its own 64-bit word with the flag in the high half (0 = not yet published, 1 = the
//! tile's aggregate, 2 = its inclusive prefix). Each word is written and read with one
//! aligned 64-bit `volatile` access (relaxed, L1-bypassing), which is single-copy atomic,
//! so a reader sees every word either before or after a write and no fence is needed; a
//! status is valid when all its words carry the same nonzero flag, so a value of more
//! than 4 bytes is never read torn (the flag says which write each chunk came from, and
//! each write happens once per flag). The status array (and the tile counter) is zeroed
//! by a memset before the launch.
//!
//! The CUDA text is in `cuda/`: `head.cuh` (what the module puts first), `tile.cu` (one
//! tile's work), `direct.cu` (the kernel), and the last step of each kind of scan.

use crate::codegen::prelude::{PREFETCH_L2, SHUFFLES};
use crate::codegen::prelude_for;
use crate::codegen::template::{block, render};
use crate::error::{ArrayError, Result};

use super::{ScanKind, ScanSpec};

const HEAD: &str = include_str!("cuda/head.cuh");
const STATUS_WORDS: &str = include_str!("cuda/status_words.cuh");
const TILE: &str = include_str!("cuda/tile.cu");
const DIRECT_KERNEL: &str = include_str!("cuda/direct.cu");
const EARLY_TILE: &str = include_str!("cuda/early.cu");
const FINISH_INCLUSIVE: &str = include_str!("cuda/finish_inclusive.cuh");
const FINISH_EXCLUSIVE: &str = include_str!("cuda/finish_exclusive.cuh");

/// Threads per block of 4- and 8-byte element types (twice as many for the others).
pub const BLOCK_SIZE: u32 = 128;
/// 16-byte vectors each thread holds for 4- and 8-byte element types (half as many for
/// the others). Every type's default tile is `BLOCK_SIZE × VECTORS_PER_THREAD` vectors,
/// 16 KiB.
pub const VECTORS_PER_THREAD: usize = 8;

/// 16-byte vectors each thread holds for 4- and 8-byte element types on devices with
/// fast memory ([`ScanTuning::for_device`]; the measurements are in
/// [`DeviceFacts`](super::DeviceFacts)'s module).
pub const FAST_MEMORY_VECTORS: usize = 20;

/// Threads per block and vectors per thread of the default tuning for elements of `size`
/// bytes. 4- and 8-byte types (the common scans) use 128 × 8: ptxas (sm_90) gives them
/// 56–79 registers, so 6–9 blocks (96–144 KiB of tiles) reside per multiprocessor,
/// against 5–6 blocks (80–96 KiB) with 256 × 4. 1-, 2- and 16-byte types keep 256 × 4,
/// which needs fewer registers for them (the in-place bfloat16 scan spilled with 128 × 8).
/// Devices with fast memory give 4- and 8-byte types [`FAST_MEMORY_VECTORS`] vectors
/// instead ([`ScanTuning::for_device`]).
pub fn block_shape(size: usize) -> (u32, usize) {
    if size == 4 || size == 8 {
        (BLOCK_SIZE, VECTORS_PER_THREAD)
    } else {
        (2 * BLOCK_SIZE, VECTORS_PER_THREAD / 2)
    }
}

/// How far ahead of its own tile each block asks L2 to prefetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum L2Prefetch {
    /// No prefetching.
    Off,
    /// Chosen from the device: its peak bandwidth times a lead time, within an eighth
    /// and a third of its L2 (8 MiB on an H100, about 12 on an H200; see
    /// [`DeviceFacts`](super::DeviceFacts)), rounded to whole tiles.
    /// [`L2Prefetch::tiles_ahead`] alone, without the bandwidth, takes a sixth of the L2.
    Auto,
    /// This many bytes, rounded to whole tiles (at least one).
    Bytes(u64),
}

impl L2Prefetch {
    /// The distance in tiles of `tile_bytes` for a device with `l2_bytes` of L2 (0: off).
    ///
    /// ```
    /// use rucuda_array::scan::L2Prefetch;
    /// assert_eq!(L2Prefetch::Auto.tiles_ahead(16384, 50 << 20), 533);
    /// assert_eq!(L2Prefetch::Bytes(1).tiles_ahead(16384, 50 << 20), 1);
    /// assert_eq!(L2Prefetch::Off.tiles_ahead(16384, 50 << 20), 0);
    /// ```
    pub fn tiles_ahead(self, tile_bytes: usize, l2_bytes: u64) -> u64 {
        let bytes = match self {
            L2Prefetch::Off => return 0,
            L2Prefetch::Auto => l2_bytes / 6,
            L2Prefetch::Bytes(b) => b,
        };
        (bytes / tile_bytes.max(1) as u64).max(1)
    }
}

/// The shape of a scan's tiles, its cache hints and its prefetching.
///
/// ```
/// use rucuda_array::scan::{L2Prefetch, ScanTuning};
/// let t = ScanTuning::for_size(4);
/// assert_eq!((t.threads, t.vectors, t.prefetch), (128, 8, L2Prefetch::Auto));
/// assert!(t.check().is_ok());
/// assert!(ScanTuning { threads: 100, ..t }.check().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScanTuning {
    /// Threads per block: a multiple of 32, at most 1024.
    pub threads: u32,
    /// 16-byte vectors per thread, 1 to 32.
    pub vectors: usize,
    /// Evict-first loads and stores (`ld.global.cs`, `st.global.cs`).
    pub streaming: bool,
    /// How far ahead each block asks L2 to prefetch.
    pub prefetch: L2Prefetch,
    /// Polls of the look-back window made back to back before each further poll waits.
    pub poll_spins: u32,
    /// The wait between later polls (`__nanosleep`), in nanoseconds; 0: none.
    pub poll_sleep_ns: u32,
    /// A look-back warp in front of the tile's threads starts looking back when the block
    /// starts, while they load (scans with a neutral element; others ignore it). The
    /// block has `threads + 32` threads then.
    pub early_look_back: bool,
}

impl ScanTuning {
    /// The default for elements of `size` bytes: [`block_shape`], streaming hints, L2
    /// prefetching a sixth of the L2 ahead.
    pub fn for_size(size: usize) -> ScanTuning {
        let (threads, vectors) = block_shape(size);
        ScanTuning {
            threads,
            vectors,
            streaming: true,
            prefetch: L2Prefetch::Auto,
            poll_spins: 9,
            poll_sleep_ns: 64,
            early_look_back: false,
        }
    }

    /// [`ScanTuning::for_size`] for `device`: 4- and 8-byte elements take
    /// [`FAST_MEMORY_VECTORS`] vectors a thread where memory is fast
    /// ([`DeviceFacts::has_fast_memory`](super::DeviceFacts::has_fast_memory)). The
    /// scan kernels use it for arrays of at least one wave of its tiles, and
    /// [`ScanTuning::for_size`] below that.
    ///
    /// ```
    /// use rucuda_array::scan::{DeviceFacts, ScanTuning};
    /// let h100 = DeviceFacts {
    ///     l2_bytes: 50 << 20,
    ///     bandwidth_bytes_per_s: Some(3.35e12),
    ///     multiprocessors: 132,
    ///     shared_per_multiprocessor: 228 << 10,
    ///     threads_per_multiprocessor: 2048,
    /// };
    /// assert_eq!(ScanTuning::for_device(4, &h100), ScanTuning::for_size(4));
    /// let h200 = DeviceFacts { bandwidth_bytes_per_s: Some(4.8e12), ..h100 };
    /// assert_eq!(ScanTuning::for_device(8, &h200).vectors, 20);
    /// assert_eq!(ScanTuning::for_device(2, &h200), ScanTuning::for_size(2));
    /// ```
    pub fn for_device(size: usize, device: &super::DeviceFacts) -> ScanTuning {
        let t = ScanTuning::for_size(size);
        if (size == 4 || size == 8) && device.has_fast_memory() {
            ScanTuning {
                vectors: FAST_MEMORY_VECTORS,
                ..t
            }
        } else {
            t
        }
    }

    /// Checks the shape.
    pub fn check(&self) -> Result<()> {
        if self.threads == 0 || self.threads % 32 != 0 || self.threads > 1024 {
            return Err(ArrayError::InvalidArgument(format!(
                "scan tuning: {} threads per block (a multiple of 32 up to 1024 is needed)",
                self.threads
            )));
        }
        if self.early_look_back && self.threads > 992 {
            return Err(ArrayError::InvalidArgument(format!(
                "scan tuning: {} threads per block and a look-back warp (992 at most)",
                self.threads
            )));
        }
        if !(1..=32).contains(&self.vectors) {
            return Err(ArrayError::InvalidArgument(format!(
                "scan tuning: {} vectors per thread (1 to 32)",
                self.vectors
            )));
        }
        if self.poll_sleep_ns > 1_000_000 {
            return Err(ArrayError::InvalidArgument(format!(
                "scan tuning: a poll wait of {} ns (at most 1 ms)",
                self.poll_sleep_ns
            )));
        }
        Ok(())
    }

    /// Bytes of one tile.
    pub fn tile_bytes(&self) -> usize {
        self.threads as usize * self.vectors * 16
    }
}

/// Which loads and stores the kernel makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Variant {
    /// Full tiles move with 16-byte loads and stores (both arrays 16-byte aligned).
    pub vectorized: bool,
    /// Input and output are the same array (no `__restrict__`, no read-only loads).
    pub in_place: bool,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 4] = [
        Variant {
            vectorized: true,
            in_place: false,
        },
        Variant {
            vectorized: true,
            in_place: true,
        },
        Variant {
            vectorized: false,
            in_place: false,
        },
        Variant {
            vectorized: false,
            in_place: true,
        },
    ];
}

/// A generated scan kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedScan {
    /// The `extern "C"` entry point.
    pub entry: String,
    /// The whole source.
    pub source: String,
    /// Elements per tile (one block's share).
    pub tile_elements: usize,
    /// 64-bit status words per tile.
    pub status_words: usize,
    /// Threads per block.
    pub block_size: u32,
}

/// Elements per 16-byte vector of `d`.
pub(crate) fn vector_elements(size: usize) -> usize {
    (16 / size.max(1)).max(1)
}

impl ScanSpec {
    /// The source of one variant with the default tuning of the element type.
    ///
    /// ```
    /// use rucuda_array::scan::{ScanSpec, ScanVariant};
    /// let s = ScanSpec::builder(rucuda_array::DType::I32).scan("a + b").neutral("0")
    ///     .name("cumsum").build().unwrap();
    /// let k = s.render(ScanVariant { vectorized: true, in_place: false }).unwrap();
    /// assert_eq!(k.entry, "cumsum_incl_vo");
    /// assert_eq!((k.tile_elements, k.status_words), (4096, 1));
    /// assert!(k.source.contains("__ldcs") && k.source.contains("__stcs"));
    /// ```
    pub fn render(&self, variant: Variant) -> Result<RenderedScan> {
        self.render_tuned(variant, ScanTuning::for_size(self.dtype.size_bytes()))
    }

    /// The source of one variant with `tuning` (checked by [`ScanTuning::check`] where it
    /// is used). The prefetch distance is the kernel's last argument (elements, 0: none).
    ///
    /// ```
    /// use rucuda_array::scan::{ScanSpec, ScanTuning, ScanVariant};
    /// let s = ScanSpec::builder(rucuda_array::DType::F32).scan("a + b").neutral("0")
    ///     .build().unwrap();
    /// let t = ScanTuning { threads: 256, ..ScanTuning::for_size(4) };
    /// let k = s.render_tuned(ScanVariant { vectorized: true, in_place: false }, t).unwrap();
    /// assert_eq!((k.block_size, k.tile_elements), (256, 256 * 8 * 4));
    /// assert!(k.source.contains("prefetch.global.L2"));
    /// ```
    pub fn render_tuned(&self, variant: Variant, tuning: ScanTuning) -> Result<RenderedScan> {
        let size = self.dtype.size_bytes();
        let k = vector_elements(size);
        let kind = match self.kind {
            ScanKind::Inclusive => "incl",
            ScanKind::Exclusive => "excl",
        };
        let entry = format!(
            "{}_{kind}_{}{}",
            self.name,
            if variant.vectorized { 'v' } else { 's' },
            if variant.in_place { 'i' } else { 'o' }
        );
        let load = match (variant.in_place, tuning.streaming) {
            (_, true) => "__ldcs",
            (true, false) => "*",
            (false, false) => "__ldg",
        };
        let store = if tuning.streaming {
            "__stcs"
        } else {
            "rucuda_store_plain"
        };
        let early = tuning.early_look_back && self.has_neutral();
        let template = if early {
            [HEAD, TILE, EARLY_TILE, DIRECT_KERNEL].concat()
        } else {
            [HEAD, TILE, DIRECT_KERNEL].concat()
        };
        let block_threads = tuning.threads + if early { 32 } else { 0 };
        let (block_size, v, kk) = (
            tuning.threads.to_string(),
            tuning.vectors.to_string(),
            k.to_string(),
        );
        let (poll_spins, poll_ns) = (
            tuning.poll_spins.to_string(),
            tuning.poll_sleep_ns.to_string(),
        );
        let source = render(
            &template,
            &[
                ("PRELUDE", &prelude_for([self.dtype])),
                ("PREAMBLE", &block(&self.preamble)),
                ("SHUFFLES", SHUFFLES),
                ("STATUS_WORDS", STATUS_WORDS),
                ("PREFETCH_L2", PREFETCH_L2),
                ("T", self.dtype.c_type()),
                ("BLOCK", &block_size),
                ("V", &v),
                ("K", &kk),
                ("EXPR", &self.scan_expr),
                (
                    "NEUTRAL",
                    if self.has_neutral() {
                        &self.neutral
                    } else {
                        "rucuda_placeholder()"
                    },
                ),
                ("HAS_NEUTRAL", if self.has_neutral() { "1" } else { "0" }),
                ("ENTRY", &entry),
                ("POLL_SPINS", &poll_spins),
                ("POLL_NS", &poll_ns),
                ("EARLY", if early { "1" } else { "0" }),
                (
                    "RESTRICT",
                    if variant.in_place {
                        ""
                    } else {
                        "__restrict__ "
                    },
                ),
                ("LOAD", load),
                ("STORE", store),
                (
                    "VECTORIZED",
                    if variant.vectorized { "true" } else { "false" },
                ),
                (
                    "FINISH",
                    match self.kind {
                        ScanKind::Inclusive => FINISH_INCLUSIVE,
                        ScanKind::Exclusive => FINISH_EXCLUSIVE,
                    },
                ),
            ],
        )?;
        Ok(RenderedScan {
            entry,
            source,
            tile_elements: tuning.threads as usize * tuning.vectors * k,
            block_size: block_threads,
            status_words: size.div_ceil(4),
        })
    }
}
