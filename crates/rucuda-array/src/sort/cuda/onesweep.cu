// Device-wide (and per-row) LSD radix sort, onesweep style: one histogram pass computes
// every digit's counts per chunk (a row, or a part of a row below 2^30 elements), one
// small kernel turns them into each chunk's output offsets, then one pass per digit
// ranks each tile in shared memory and finds its digit offsets among the chunk's earlier
// tiles by decoupled look-back, and scatters through shared memory.
// The digit pass keeps every key's digit below 256 (a partial tile pads with all-ones
// keys, which rank last) so that ranking takes 8 ballots a key, loads and stores carry
// their offsets as immediates, and full tiles skip the bounds tests: 59-64 registers and
// two thirds of the instructions of the version before (95 registers, a ninth ballot
// for padding, 64-bit index arithmetic per key). 2^28 u32 keys, H200, one bench call
// (2026-11-28): 41.5 GK/s against CUB's 42.4, from 24.6. Tiles of 512 threads (24 keys
// each, 19 with values; SortTuning) with the exchange buffer in dynamic shared memory
// then gave 50.3 (keys) and 36.3 GK/s (u32 pairs; CUB 35.9).
#define RUCUDA_STATUS_AGGREGATE 1u
#define RUCUDA_STATUS_PREFIX 2u
#define RUCUDA_STATUS_VALUE 0x3fffffffu

#define RUCUDA_KEYS_PER_VECTOR ((int)(16 / sizeof(rucuda_key_t)))
union rucuda_key_vector {
  uint4 raw;
  rucuda_key_t k[RUCUDA_KEYS_PER_VECTOR];
};
__device__ __forceinline__ void rucuda_count_key(unsigned int *counts, rucuda_key_t key, int twiddled)
{
  const rucuda_key_t t = twiddled ? key : rucuda_twiddle(key);
#pragma unroll
  for (int p = 0; p < RUCUDA_PASSES; ++p) atomicAdd(&counts[p * RUCUDA_RADIX + rucuda_digit(t, 8 * p)], 1u);
}

// Counts of every digit of every pass for each chunk: block b takes part b % parts of
// chunk `chunk0 + b / parts`, counts in shared memory, then adds into
// hist[chunk][pass][digit] (zeroed). `twiddled`: the keys are an earlier pass's output,
// already in radix order (a row of several chunks is counted again before each pass: a
// chunk holds other elements after every pass).
extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS) $ENTRY$_histogram(
    const rucuda_key_t *__restrict__ keys, long long first, long long seg_len, long long seg_stride,
    unsigned int parts, unsigned int chunk0, unsigned int *__restrict__ hist, int twiddled)
{
  __shared__ unsigned int counts[RUCUDA_PASSES * RUCUDA_RADIX];
  for (int i = threadIdx.x; i < RUCUDA_PASSES * RUCUDA_RADIX; i += RUCUDA_THREADS) counts[i] = 0u;
  __syncthreads();
  const unsigned int seg = blockIdx.x / parts, part = blockIdx.x - seg * parts;
  const long long share = (seg_len + parts - 1) / parts;
  const long long begin = (long long)part * share;
  const long long end = begin + share < seg_len ? begin + share : seg_len;
  const rucuda_key_t *src = keys + first + (long long)seg * seg_stride;
  // A scalar head up to a 16-byte boundary, 16-byte vectors, a scalar tail.
  long long head_end = begin;
  while (head_end < end && (reinterpret_cast<size_t>(src + head_end) & 15u) != 0u) ++head_end;
  for (long long i = begin + threadIdx.x; i < head_end; i += RUCUDA_THREADS) rucuda_count_key(counts, src[i], twiddled);
  const long long vectors = (end - head_end) / RUCUDA_KEYS_PER_VECTOR;
  const uint4 *vsrc = reinterpret_cast<const uint4 *>(src + head_end);
  for (long long q = threadIdx.x; q < vectors; q += RUCUDA_THREADS) {
    rucuda_key_vector v;
    v.raw = __ldcs(vsrc + q);
#pragma unroll
    for (int j = 0; j < RUCUDA_KEYS_PER_VECTOR; ++j) rucuda_count_key(counts, v.k[j], twiddled);
  }
  for (long long i = head_end + vectors * RUCUDA_KEYS_PER_VECTOR + threadIdx.x; i < end; i += RUCUDA_THREADS)
    rucuda_count_key(counts, src[i], twiddled);
  __syncthreads();
  unsigned int *out = hist + (size_t)(chunk0 + seg) * (RUCUDA_PASSES * RUCUDA_RADIX);
  for (int i = threadIdx.x; i < RUCUDA_PASSES * RUCUDA_RADIX; i += RUCUDA_THREADS) {
    if (counts[i] != 0u) atomicAdd(&out[i], counts[i]);
  }
}

// One block of 256 threads per row of `chunks` chunks: offsets[chunk][pass][digit] is
// where the chunk's first element of that digit goes (absolute element index): the row's
// start, plus the row's elements of smaller digits, plus the digit's elements in the
// row's earlier chunks.
extern "C" __global__ void __launch_bounds__(256) $ENTRY$_offsets(
    const unsigned int *__restrict__ hist, long long *__restrict__ offsets, unsigned int chunks, long long row_len)
{
  __shared__ long long warp_sums[8];
  const unsigned int d = threadIdx.x, lane = d & 31u, warp = d >> 5;
  const size_t row_chunk0 = (size_t)blockIdx.x * chunks;
  for (int p = 0; p < RUCUDA_PASSES; ++p) {
    long long total = 0;
    for (unsigned int c = 0; c < chunks; ++c) total += hist[(row_chunk0 + c) * (RUCUDA_PASSES * RUCUDA_RADIX) + p * RUCUDA_RADIX + d];
    long long incl = total;
#pragma unroll
    for (unsigned int o = 1; o < 32u; o <<= 1) {
      const long long v = __shfl_up_sync(RUCUDA_FULL_MASK, incl, o);
      if (lane >= o) incl += v;
    }
    if (lane == 31u) warp_sums[warp] = incl;
    __syncthreads();
    long long run = (long long)blockIdx.x * row_len + incl - total;
    for (unsigned int w = 0; w < warp; ++w) run += warp_sums[w];
    for (unsigned int c = 0; c < chunks; ++c) {
      const size_t at = (row_chunk0 + c) * (RUCUDA_PASSES * RUCUDA_RADIX) + p * RUCUDA_RADIX + d;
      offsets[at] = run;
      run += hist[at];
    }
    __syncthreads();
  }
}

// One digit pass over `segs` chunks of `seg_len` elements (chunk s starts at element
// first + s * seg_stride; its offsets are those of chunk chunk0 + s). One block per tile,
// tiles taken from `counter` in order (so a tile waits only for running blocks); tiles of
// one chunk are consecutive. flags: 1 first pass (twiddle the keys read), 2 last pass
// (untwiddle the keys written), 4 the values are the elements' positions in their row
// (index_base + position in the chunk) rather than read.
extern "C" __global__ void RUCUDA_ONESWEEP_BOUNDS $ENTRY$_onesweep(
    const rucuda_key_t *__restrict__ keys_in, rucuda_key_t *__restrict__ keys_out,
    const rucuda_value_t *__restrict__ values_in, rucuda_value_t *__restrict__ values_out,
    long long first, long long seg_len, long long seg_stride, long long index_base,
    unsigned int tiles_per_seg, unsigned int chunk0, const long long *__restrict__ offsets,
    unsigned int *status, unsigned int *counter, int pass, int flags)
{
  __shared__ unsigned int s_tile;
  __shared__ unsigned int s_hist[RUCUDA_WARPS * RUCUDA_RADIX];
  __shared__ unsigned int s_scan[RUCUDA_WARPS];
  __shared__ long long s_base[RUCUDA_RADIX];
  // RUCUDA_TILE * RUCUDA_EXCHANGE_BYTES bytes, dynamic so that tiles past 48 KiB fit.
  extern __shared__ __align__(16) unsigned char s_exchange[];
  if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u);
  for (int i = threadIdx.x; i < RUCUDA_WARPS * RUCUDA_RADIX; i += RUCUDA_THREADS) s_hist[i] = 0u;
  __syncthreads();
  const unsigned int tile = s_tile;
  const unsigned int seg = tile / tiles_per_seg, tile_in_seg = tile - seg * tiles_per_seg;
  const long long seg_start = first + (long long)seg * seg_stride;
  const long long tile_start = (long long)tile_in_seg * RUCUDA_TILE;
  const long long rest = seg_len - tile_start;
  const unsigned int count = rest < (long long)RUCUDA_TILE ? (unsigned int)rest : (unsigned int)RUCUDA_TILE;
  const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned int wbase = warp * 32u * RUCUDA_ITEMS;
  const int shift = 8 * pass;
  // This lane's first key: item j is j * 32 keys further (offsets the loads carry as
  // immediates).
  const rucuda_key_t *src = keys_in + seg_start + tile_start + wbase + lane;
  const bool full = count == (unsigned int)RUCUDA_TILE;

  rucuda_key_t key[RUCUDA_ITEMS];
  unsigned int digit[RUCUDA_ITEMS], pos[RUCUDA_ITEMS];
  if (full) {
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) key[j] = src[j * 32];
  } else {
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) key[j] = wbase + j * 32 + lane < count ? src[j * 32] : (rucuda_key_t)0;
  }
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) {
    if (flags & 1) key[j] = rucuda_twiddle(key[j]);
  }
  // A partial tile pads with all-ones keys (after the twiddle): digit 255 in every pass,
  // after every element, so padding ranks last in the tile and is never written out; it
  // is left out of the counts the tile publishes.
  if (!full) {
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) {
      if (wbase + j * 32 + lane >= count) key[j] = RUCUDA_ALL_ONES;
    }
  }
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) digit[j] = rucuda_digit(key[j], shift);
  // Early counts (CUB's "match early counts"): each warp counts its digits with shared
  // atomics, so that the tile's digit counts are published before the ranking.
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) atomicAdd(&s_hist[warp * RUCUDA_RADIX + digit[j]], 1u);
  __syncthreads();
  const unsigned int d = threadIdx.x;
  // The tile's count of digit d, padding included (it sets the positions in the tile),
  // and without it (what later tiles add).
  const unsigned int tile_count = rucuda_warp_prefixes(s_hist);
  const unsigned int tile_real = d == RUCUDA_RADIX - 1 ? tile_count - ((unsigned int)RUCUDA_TILE - count) : tile_count;
  volatile unsigned int *st = status;
  if (d < RUCUDA_RADIX) {
    st[(size_t)tile * RUCUDA_RADIX + d] = ((tile_in_seg == 0 ? RUCUDA_STATUS_PREFIX : RUCUDA_STATUS_AGGREGATE) << 30) | tile_real;
  }
  const unsigned int excl = rucuda_digit_scan(tile_count, s_scan);
  rucuda_add_digit_prefix(s_hist, excl);
  __syncthreads();
  // Each warp's counters now start at its first position of each digit in the tile: the
  // ranking turns them into each item's position.
  rucuda_rank_warp(digit, pos, s_hist);
  if (d < RUCUDA_RADIX) {
    unsigned int before = 0u;
    if (tile_in_seg > 0) {
      for (unsigned int pred = tile - 1;; --pred) {
        unsigned int s = 0u;
        for (unsigned int spins = 0;; ++spins) {
          s = st[(size_t)pred * RUCUDA_RADIX + d];
          if ((s >> 30) != 0u) break;
          rucuda_backoff(spins);
        }
        before += s & RUCUDA_STATUS_VALUE;
        if ((s >> 30) == RUCUDA_STATUS_PREFIX) break;
      }
      st[(size_t)tile * RUCUDA_RADIX + d] = (RUCUDA_STATUS_PREFIX << 30) | (before + tile_real);
    }
    s_base[d] = offsets[(size_t)(chunk0 + seg) * (RUCUDA_PASSES * RUCUDA_RADIX) + pass * RUCUDA_RADIX + d] + (long long)before - (long long)excl;
  }
  __syncthreads();
  rucuda_key_t *s_keys = reinterpret_cast<rucuda_key_t *>(s_exchange);
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) s_keys[pos[j]] = key[j];
  __syncthreads();
  // The digit of each key this thread wrote, 8 bits each, four to a word: the values
  // go where their keys went (16 separate words made the pairs kernel's 80 registers).
  unsigned int sorted_digits[(RUCUDA_ITEMS + 3) / 4];
#pragma unroll
  for (int w = 0; w < (RUCUDA_ITEMS + 3) / 4; ++w) sorted_digits[w] = 0u;
  // Full tiles (all but a chunk's last) write without a bounds test per key.
  if (full) {
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) {
      const unsigned int i = threadIdx.x + j * RUCUDA_THREADS;
      const rucuda_key_t t = s_keys[i];
      const unsigned int dg = rucuda_digit(t, shift);
      sorted_digits[j >> 2] |= dg << (8 * (j & 3));
      keys_out[s_base[dg] + i] = (flags & 2) ? rucuda_untwiddle(t) : t;
    }
  } else {
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) {
      const unsigned int i = threadIdx.x + j * RUCUDA_THREADS;
      if (i < count) {
        const rucuda_key_t t = s_keys[i];
        const unsigned int dg = rucuda_digit(t, shift);
        sorted_digits[j >> 2] |= dg << (8 * (j & 3));
        keys_out[s_base[dg] + i] = (flags & 2) ? rucuda_untwiddle(t) : t;
      }
    }
  }
#if RUCUDA_VALUES
  rucuda_value_t value[RUCUDA_ITEMS];
  const rucuda_value_t *vsrc = values_in + seg_start + tile_start;
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) {
    const unsigned int i = wbase + j * 32 + lane;
    value[j] = (rucuda_value_t)0;
    if (i < count) value[j] = (flags & 4) ? (rucuda_value_t)(index_base + tile_start + i) : vsrc[i];
  }
  __syncthreads();
  rucuda_value_t *s_values = reinterpret_cast<rucuda_value_t *>(s_exchange);
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) s_values[pos[j]] = value[j];
  __syncthreads();
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) {
    const unsigned int i = threadIdx.x + j * RUCUDA_THREADS;
    if (i < count) values_out[s_base[(sorted_digits[j >> 2] >> (8 * (j & 3))) & 0xffu] + i] = s_values[i];
  }
#endif
}
