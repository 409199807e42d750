//! CUDA source of a single-pass scan with decoupled look-back (Merrill & Garland,
//! "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016). Pure text: every
//! variant is unit-tested here and compiled with NVRTC in CI.
//!
//! One launch, one block per tile of `TILE = B threads × V vectors × K` elements (`K` =
//! 16 bytes of the element type, so a tile is 16 KiB whatever the type; `B × V` = 128 × 8
//! for 4- and 8-byte types, 256 × 4 for the others, see [`block_shape`]: 8 vectors per
//! thread at 63 registers (ptxas, sm_90, 4-byte inclusive) let 8 blocks, 128 KiB of
//! loads, reside per multiprocessor, where 256 × 4 at 40 registers allowed 6, 96 KiB):
//!
//! 1. Thread 0 takes the block's tile index from an atomic counter (not `blockIdx`): tiles
//!    are handed out in the order blocks start, so every tile a block waits for belongs
//!    to a block that is already running, whatever the scheduler does.
//! 2. Each thread loads its V vectors with 16-byte loads (`__ldg` unless in place), vector
//!    `c` of thread `t` being vector `c × B + t` of the tile, so each warp load is 512
//!    contiguous bytes and all `V × 16` bytes a thread needs are in flight at once. The last
//!    tile (and unaligned arrays) load element by element, padding with the neutral.
//! 3. In registers: each vector's inclusive scan; warp-shuffle scans of the V vector
//!    totals across each warp; the 32 warp totals (V × B / 32 warps) in shared memory are
//!    scanned by warp 0, giving the tile's aggregate.
//! 4. Warp 0 publishes the aggregate (tile 0: its inclusive prefix) in the tile's status,
//!    then looks back: lane `l` reads the status of tile `t - 1 - l`, the warp waits until
//!    every lane up to the nearest tile with an inclusive prefix has at least an
//!    aggregate, folds those values in tile order (a shuffle tree that keeps the order),
//!    and moves 32 tiles back if no prefix was in the window. It publishes the tile's
//!    inclusive prefix.
//! 5. Every thread combines the tile prefix, its warp's prefix, its lane's prefix and its
//!    vector's elements, and stores with 16-byte stores.
//!
//! Status words: see `crate::reduction::warp` — the value's 32-bit chunks each in a
//! 64-bit word with the flag, written and read with single 64-bit `volatile` accesses
//! (relaxed, L1-bypassing), so no fence is needed and 8- and 16-byte types are never read
//! torn. The status array (and the tile counter) is zeroed by a memset before the launch.

use crate::codegen::prelude_for;
use crate::reduction::warp::{SHUFFLES, STATUS_WORDS};

use super::{ScanKind, ScanSpec};

/// Threads per block of 4- and 8-byte element types (twice as many for the others).
pub const BLOCK_SIZE: u32 = 128;
/// 16-byte vectors each thread holds for 4- and 8-byte element types (half as many for
/// the others). Every type's tile is `BLOCK_SIZE × VECTORS_PER_THREAD` vectors, 16 KiB.
pub const VECTORS_PER_THREAD: usize = 8;

// Warp 0 scans the V × (threads / 32) warp totals one per lane, in both shapes.
const _: () = assert!(VECTORS_PER_THREAD * (BLOCK_SIZE as usize / 32) <= 32);
const _: () = assert!(BLOCK_SIZE % 32 == 0 && VECTORS_PER_THREAD % 2 == 0);

/// Threads per block and vectors per thread for elements of `size` bytes. 4- and 8-byte
/// types (the common scans) use 128 × 8: ptxas (sm_90) gives them 56–79 registers, so
/// 6–9 blocks (96–144 KiB of tiles) reside per multiprocessor, against 5–6 blocks
/// (80–96 KiB) with 256 × 4. 1-, 2- and 16-byte types keep 256 × 4, which needs fewer
/// registers for them (the in-place bfloat16 scan spilled with 128 × 8).
pub fn block_shape(size: usize) -> (u32, usize) {
    if size == 4 || size == 8 {
        (BLOCK_SIZE, VECTORS_PER_THREAD)
    } else {
        (2 * BLOCK_SIZE, VECTORS_PER_THREAD / 2)
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
    /// Threads per block (see [`block_shape`]).
    pub block_size: u32,
}

/// Elements per 16-byte vector of `d`.
pub(crate) fn vector_elements(size: usize) -> usize {
    (16 / size.max(1)).max(1)
}

const KERNEL: &str = r#"typedef $T$ rucuda_t;
#define RUCUDA_BLOCK $BLOCK$
#define RUCUDA_WARPS (RUCUDA_BLOCK / 32)
#define RUCUDA_V $V$
#define RUCUDA_K $K$
#define RUCUDA_TILE (RUCUDA_BLOCK * RUCUDA_V * RUCUDA_K)
__device__ __forceinline__ rucuda_t rucuda_scan_op(rucuda_t a, rucuda_t b)
{
  return ($EXPR$);
}
__device__ __forceinline__ rucuda_t rucuda_neutral_value()
{
  return (rucuda_t)($NEUTRAL$);
}
union rucuda_vec {
  uint4 raw;
  rucuda_t e[RUCUDA_K];
};
__device__ __forceinline__ void rucuda_backoff(unsigned int spins)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  if (spins > 8u) __nanosleep(64u);
#else
  (void)spins;
#endif
}
// Warp-wide: the exclusive prefix of `tile` from its predecessors' statuses, in every lane.
__device__ __forceinline__ rucuda_t rucuda_look_back(const unsigned long long *rucuda_status, long long tile)
{
  const unsigned int lane = threadIdx.x & 31u;
  rucuda_t running = rucuda_neutral_value();
  for (long long pred = tile - 1;; pred -= 32) {
    const long long idx = pred - (long long)lane;
    rucuda_t v = rucuda_neutral_value();
    unsigned int flag = idx < 0 ? RUCUDA_STATUS_PREFIX : RUCUDA_STATUS_EMPTY;
    unsigned int prefixes;
    for (unsigned int spins = 0;; ++spins) {
      if (flag == RUCUDA_STATUS_EMPTY) flag = rucuda_status_load(rucuda_status, idx, v);
      prefixes = __ballot_sync(RUCUDA_FULL_MASK, flag == RUCUDA_STATUS_PREFIX);
      const unsigned int empty = __ballot_sync(RUCUDA_FULL_MASK, flag == RUCUDA_STATUS_EMPTY);
      const unsigned int upto = prefixes ? ((prefixes & (0u - prefixes)) << 1) - 1u : RUCUDA_FULL_MASK;
      if ((empty & upto) == 0u) break;
      rucuda_backoff(spins);
    }
    const unsigned int first = prefixes ? (unsigned int)(__ffs(prefixes) - 1) : 32u;
    if (lane > first) v = rucuda_neutral_value();
    // Lane l holds tile pred - l: fold so that earlier tiles (higher lanes) come first.
#pragma unroll
    for (unsigned int o = 1; o < 32u; o <<= 1) {
      const rucuda_t later = rucuda_shfl_down(v, o);
      if (lane + o < 32u) v = rucuda_scan_op(later, v);
    }
    running = rucuda_scan_op(rucuda_shfl_idx(v, 0u), running);
    if (prefixes) return running;
  }
}
extern "C" __global__ void __launch_bounds__(RUCUDA_BLOCK) $ENTRY$(const rucuda_t *$RESTRICT$rucuda_in, rucuda_t *$RESTRICT$rucuda_out, long long n, unsigned long long *rucuda_scratch)
{
  __shared__ unsigned int rucuda_tile_shared;
  __shared__ __align__(16) unsigned char rucuda_prefix_raw[RUCUDA_V * RUCUDA_WARPS * sizeof(rucuda_t)];
  rucuda_t *rucuda_prefix = reinterpret_cast<rucuda_t *>(rucuda_prefix_raw);
  unsigned long long *rucuda_status = rucuda_scratch + 2;
  const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) rucuda_tile_shared = atomicAdd(reinterpret_cast<unsigned int *>(rucuda_scratch), 1u);
  __syncthreads();
  const long long rucuda_tile = rucuda_tile_shared;
  const long long rucuda_base = rucuda_tile * RUCUDA_TILE;
  const bool rucuda_full = $VECTORIZED$ && rucuda_base + RUCUDA_TILE <= n;
  rucuda_vec x[RUCUDA_V];
  if (rucuda_full) {
    const uint4 *rucuda_src = reinterpret_cast<const uint4 *>(rucuda_in + rucuda_base);
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) x[c].raw = $LOAD$(rucuda_src + c * RUCUDA_BLOCK + threadIdx.x);
  } else {
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) {
#pragma unroll
      for (int j = 0; j < RUCUDA_K; ++j) {
        const long long k = rucuda_base + (long long)(c * RUCUDA_BLOCK + threadIdx.x) * RUCUDA_K + j;
        x[c].e[j] = k < n ? rucuda_in[k] : rucuda_neutral_value();
      }
    }
  }
  // Each vector's inclusive scan; agg[c] becomes the inclusive scan of the totals of
  // vector c across the warp, then (after the warp totals are saved) the exclusive one.
  rucuda_t agg[RUCUDA_V];
#pragma unroll
  for (int c = 0; c < RUCUDA_V; ++c) {
#pragma unroll
    for (int j = 1; j < RUCUDA_K; ++j) x[c].e[j] = rucuda_scan_op(x[c].e[j - 1], x[c].e[j]);
    agg[c] = x[c].e[RUCUDA_K - 1];
  }
#pragma unroll
  for (unsigned int o = 1; o < 32u; o <<= 1) {
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) {
      const rucuda_t earlier = rucuda_shfl_up(agg[c], o);
      if (lane >= o) agg[c] = rucuda_scan_op(earlier, agg[c]);
    }
  }
  if (lane == 31u) {
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) rucuda_prefix[c * RUCUDA_WARPS + warp] = agg[c];
  }
#pragma unroll
  for (int c = 0; c < RUCUDA_V; ++c) {
    const rucuda_t earlier = rucuda_shfl_up(agg[c], 1u);
    agg[c] = lane == 0u ? rucuda_neutral_value() : earlier;
  }
  __syncthreads();
  if (warp == 0u) {
    // The V x WARPS warp totals in tile order (vector c of warp w is total c * WARPS + w).
    rucuda_t t = lane < RUCUDA_V * RUCUDA_WARPS ? rucuda_prefix[lane] : rucuda_neutral_value();
#pragma unroll
    for (unsigned int o = 1; o < 32u; o <<= 1) {
      const rucuda_t earlier = rucuda_shfl_up(t, o);
      if (lane >= o) t = rucuda_scan_op(earlier, t);
    }
    const rucuda_t total = rucuda_shfl_idx(t, 31u);
    rucuda_t before = rucuda_shfl_up(t, 1u);
    if (lane == 0u) {
      before = rucuda_neutral_value();
      rucuda_status_store(rucuda_status, rucuda_tile, rucuda_tile == 0 ? RUCUDA_STATUS_PREFIX : RUCUDA_STATUS_AGGREGATE, total);
    }
    rucuda_t tile_prefix = rucuda_neutral_value();
    if (rucuda_tile > 0) {
      tile_prefix = rucuda_look_back(rucuda_status, rucuda_tile);
      if (lane == 0u) rucuda_status_store(rucuda_status, rucuda_tile, RUCUDA_STATUS_PREFIX, rucuda_scan_op(tile_prefix, total));
    }
    if (lane < RUCUDA_V * RUCUDA_WARPS) rucuda_prefix[lane] = rucuda_scan_op(tile_prefix, before);
  }
  __syncthreads();
#pragma unroll
  for (int c = 0; c < RUCUDA_V; ++c) {
    const rucuda_t p = rucuda_scan_op(rucuda_prefix[c * RUCUDA_WARPS + warp], agg[c]);
$FINISH$
  }
  if (rucuda_full) {
    uint4 *rucuda_dst = reinterpret_cast<uint4 *>(rucuda_out + rucuda_base);
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) rucuda_dst[c * RUCUDA_BLOCK + threadIdx.x] = x[c].raw;
  } else {
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) {
#pragma unroll
      for (int j = 0; j < RUCUDA_K; ++j) {
        const long long k = rucuda_base + (long long)(c * RUCUDA_BLOCK + threadIdx.x) * RUCUDA_K + j;
        if (k < n) rucuda_out[k] = x[c].e[j];
      }
    }
  }
}
"#;

const FINISH_INCLUSIVE: &str = r#"#pragma unroll
    for (int j = 0; j < RUCUDA_K; ++j) x[c].e[j] = rucuda_scan_op(p, x[c].e[j]);"#;

const FINISH_EXCLUSIVE: &str = r#"#pragma unroll
    for (int j = RUCUDA_K - 1; j > 0; --j) x[c].e[j] = rucuda_scan_op(p, x[c].e[j - 1]);
    x[c].e[0] = p;"#;

impl ScanSpec {
    /// The source of one variant.
    ///
    /// ```
    /// use rucuda_array::scan::{ScanSpec, ScanVariant};
    /// let s = ScanSpec::builder(rucuda_array::DType::I32).scan("a + b").neutral("0")
    ///     .name("cumsum").build().unwrap();
    /// let k = s.render(ScanVariant { vectorized: true, in_place: false });
    /// assert_eq!(k.entry, "cumsum_incl_vo");
    /// assert_eq!((k.tile_elements, k.status_words), (4096, 1));
    /// assert!(k.source.contains("__ldg"));
    /// ```
    pub fn render(&self, variant: Variant) -> RenderedScan {
        let size = self.dtype.size_bytes();
        let k = vector_elements(size);
        let (threads, vectors) = block_shape(size);
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
        let mut src = String::from("// Generated by rucuda-array's scan kernel generator.\n");
        src.push_str(&prelude_for([self.dtype]));
        if !self.preamble.is_empty() {
            src.push_str(&self.preamble);
            src.push('\n');
        }
        src.push_str(SHUFFLES);
        src.push_str(STATUS_WORDS);
        src.push_str(
            &KERNEL
                .replace("$T$", self.dtype.c_type())
                .replace("$BLOCK$", &threads.to_string())
                .replace("$V$", &vectors.to_string())
                .replace("$K$", &k.to_string())
                .replace("$EXPR$", &self.scan_expr)
                .replace("$NEUTRAL$", &self.neutral)
                .replace("$ENTRY$", &entry)
                .replace(
                    "$RESTRICT$",
                    if variant.in_place {
                        ""
                    } else {
                        "__restrict__ "
                    },
                )
                .replace("$LOAD$", if variant.in_place { "*" } else { "__ldg" })
                .replace(
                    "$VECTORIZED$",
                    if variant.vectorized { "true" } else { "false" },
                )
                .replace(
                    "$FINISH$",
                    match self.kind {
                        ScanKind::Inclusive => FINISH_INCLUSIVE,
                        ScanKind::Exclusive => FINISH_EXCLUSIVE,
                    },
                ),
        );
        RenderedScan {
            entry,
            source: src,
            tile_elements: threads as usize * vectors * k,
            block_size: threads,
            status_words: size.div_ceil(4),
        }
    }
}
