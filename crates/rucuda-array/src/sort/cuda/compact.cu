// Stream compaction in one pass (CUB's DeviceSelect / DevicePartition): each block takes a
// tile by ticket, loads it in vectors of up to 4 elements (16 bytes at most), counts the
// kept elements of each vector slot across its warp with packed shuffle scans, publishes
// the tile's count, rearranges the tile in shared memory (kept elements first, in order,
// then the others) while one warp looks back over the earlier tiles' counts (decoupled
// look-back), and stores the rearranged tile coalesced.
//
// Tile layout (the scan's): vector c of thread t is vector c * THREADS + t of the tile, so
// element k of it is element (c * THREADS + t) * K + k.
// Template text: rucuda-array's renderer fills each dollar-delimited slot.
$PRELUDE$
$PREFETCH_L2$
typedef $T$ rucuda_t;
typedef $FLAG_T$ rucuda_flag_t;
#define RUCUDA_THREADS $THREADS$
// The vector type (16, 8 or 4 bytes: up to 4 elements, 16 bytes at most) and vectors per
// thread and tile.
typedef $VECTOR_T$ rucuda_raw_t;
#define RUCUDA_V $VECTORS$
// 1: full tiles load whole vectors (input aligned to a vector), 0: element loads.
#define RUCUDA_VECTOR_LOADS $VECTOR_LOADS$
// 1: the others are written too (DevicePartition), 0: only the kept ones (DeviceSelect).
#define RUCUDA_PARTITION $PARTITION$
// Elements per vector.
#define RUCUDA_K ((int)(sizeof(rucuda_raw_t) / sizeof(rucuda_t)))
#define RUCUDA_WARPS (RUCUDA_THREADS / 32)
#define RUCUDA_TILE (RUCUDA_THREADS * RUCUDA_V * RUCUDA_K)
// Counts of the tile's vector slots per warp, in tile order (slot c of warp w is c * WARPS + w).
#define RUCUDA_TOTALS (RUCUDA_V * RUCUDA_WARPS)
#define RUCUDA_PER_LANE ((RUCUDA_TOTALS + 31) / 32)
// Bytes per count in the packed warp scans: a warp keeps at most 32 K <= 128 elements of one
// vector slot, so no field carries into the next.
#define RUCUDA_FIELD 8
#define RUCUDA_PER_WORD 4
#define RUCUDA_WORDS ((RUCUDA_V + RUCUDA_PER_WORD - 1) / RUCUDA_PER_WORD)
// Keep bits per thread: bit c * K + k for element k of vector c.
#define RUCUDA_MASK_WORDS ((RUCUDA_V * RUCUDA_K + 31) / 32)
// Resident blocks asked of the compiler: 64 registers a thread at most.
#define RUCUDA_MIN_BLOCKS (1024 / RUCUDA_THREADS)
#define RUCUDA_FULL_MASK 0xffffffffu
#define RUCUDA_AGGREGATE 1ull
#define RUCUDA_PREFIX 2ull
#define RUCUDA_COUNT_MASK ((1ull << 62) - 1ull)
union rucuda_vec {
  rucuda_raw_t raw;
  rucuda_t e[RUCUDA_K];
};
// Whether element `i` (value x) is kept.
__device__ __forceinline__ bool rucuda_keep(const rucuda_t &x, const rucuda_flag_t *__restrict__ flags, long long i)
{
$KEEP$
}
__device__ __forceinline__ void rucuda_compact_backoff(unsigned int spins)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  if (spins > 8u) __nanosleep(32u);
#else
  (void)spins;
#endif
}
// Warp-wide: the kept elements of the tiles before `tile`, in every lane.
__device__ __forceinline__ unsigned long long rucuda_count_before(const unsigned long long *status, long long tile)
{
  const unsigned int lane = threadIdx.x & 31u;
  unsigned long long sum = 0ull;
  for (long long pred = tile - 1;; pred -= 32) {
    const long long idx = pred - (long long)lane;
    unsigned long long s = idx < 0 ? (RUCUDA_PREFIX << 62) : 0ull;
    unsigned int prefixes;
    for (unsigned int spins = 0;; ++spins) {
      if ((s >> 62) == 0ull) s = *(const volatile unsigned long long *)(status + idx);
      prefixes = __ballot_sync(RUCUDA_FULL_MASK, (s >> 62) == RUCUDA_PREFIX);
      const unsigned int empty = __ballot_sync(RUCUDA_FULL_MASK, (s >> 62) == 0ull);
      const unsigned int upto = prefixes ? ((prefixes & (0u - prefixes)) << 1) - 1u : RUCUDA_FULL_MASK;
      if ((empty & upto) == 0u) break;
      rucuda_compact_backoff(spins);
    }
    const unsigned int first = prefixes ? (unsigned int)(__ffs((int)prefixes) - 1) : 32u;
    unsigned long long v = lane <= first ? (s & RUCUDA_COUNT_MASK) : 0ull;
#pragma unroll
    for (unsigned int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(RUCUDA_FULL_MASK, v, o);
    sum += v;
    if (prefixes) return sum;
  }
}
// The keep bits of vector c (K bits).
__device__ __forceinline__ unsigned int rucuda_vector_bits(const unsigned int (&m)[RUCUDA_MASK_WORDS], int c)
{
  const int b = c * RUCUDA_K;
  return (m[b / 32] >> (b % 32)) & ((1u << RUCUDA_K) - 1u);
}
// Field c of packed counts.
__device__ __forceinline__ unsigned int rucuda_field(const unsigned int (&p)[RUCUDA_WORDS], int c)
{
  return (p[c / RUCUDA_PER_WORD] >> ((c % RUCUDA_PER_WORD) * RUCUDA_FIELD)) & ((1u << RUCUDA_FIELD) - 1u);
}

extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS, RUCUDA_MIN_BLOCKS) $ENTRY$(
    const rucuda_t *__restrict__ in, const rucuda_flag_t *__restrict__ flags, long long n,
    rucuda_t *__restrict__ selected, rucuda_t *__restrict__ rejected,
    unsigned int *scratch, long long ahead)
{
  // The scratch words (all zero at launch): the tile counter, a pad word, the count of
  // kept elements (64 bits), then each tile's status (64 bits).
  unsigned int *counter = scratch;
  unsigned long long *count_out = reinterpret_cast<unsigned long long *>(scratch + 2);
  unsigned long long *status = reinterpret_cast<unsigned long long *>(scratch + 4);
  __shared__ unsigned int s_tile;
  __shared__ unsigned int s_totals[RUCUDA_TOTALS];
  __shared__ unsigned int s_total;
  __shared__ unsigned long long s_before;
  __shared__ __align__(16) unsigned char s_buf[RUCUDA_TILE * sizeof(rucuda_t)];
  if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u);
  // Warms L2 with the tile (and its flags) a block starting about one block lifetime
  // later will take, as the scan does: `ahead` elements past this block's index's tile.
  if (ahead > 0) {
    const long long later = (long long)blockIdx.x * RUCUDA_TILE + ahead;
    if (later + RUCUDA_TILE <= n) {
      rucuda_prefetch_l2(in + later, RUCUDA_TILE * sizeof(rucuda_t), RUCUDA_THREADS);
      if (flags != 0) rucuda_prefetch_l2(flags + later, RUCUDA_TILE * sizeof(rucuda_flag_t), RUCUDA_THREADS);
    }
  }
  __syncthreads();
  const long long tile = s_tile;
  const long long base = tile * RUCUDA_TILE;
  const long long rest = n - base;
  const bool full = rest >= (long long)RUCUDA_TILE;
  const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  rucuda_vec x[RUCUDA_V];
  unsigned int m[RUCUDA_MASK_WORDS];
#pragma unroll
  for (int w = 0; w < RUCUDA_MASK_WORDS; ++w) m[w] = 0u;
  if (RUCUDA_VECTOR_LOADS && full) {
    const rucuda_raw_t *src = reinterpret_cast<const rucuda_raw_t *>(in + base) + threadIdx.x;
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) x[c].raw = src[c * RUCUDA_THREADS];
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) {
#pragma unroll
      for (int k = 0; k < RUCUDA_K; ++k) {
        const int b = c * RUCUDA_K + k;
        const long long i = base + (long long)((c * RUCUDA_THREADS + (int)threadIdx.x) * RUCUDA_K + k);
        m[b / 32] |= (unsigned int)rucuda_keep(x[c].e[k], flags, i) << (b % 32);
      }
    }
  } else {
    const rucuda_t *src = in + base + (long long)threadIdx.x * RUCUDA_K;
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) {
#pragma unroll
      for (int k = 0; k < RUCUDA_K; ++k) {
        const int li = (c * RUCUDA_THREADS + (int)threadIdx.x) * RUCUDA_K + k;
        const int b = c * RUCUDA_K + k;
        if (full || (long long)li < rest) {
          x[c].e[k] = src[c * RUCUDA_THREADS * RUCUDA_K + k];
          m[b / 32] |= (unsigned int)rucuda_keep(x[c].e[k], flags, base + li) << (b % 32);
        }
      }
    }
  }
  // Each vector slot's count, packed, scanned across the warp (inclusive, then exclusive).
  unsigned int own[RUCUDA_WORDS], incl[RUCUDA_WORDS];
#pragma unroll
  for (int w = 0; w < RUCUDA_WORDS; ++w) own[w] = 0u;
#pragma unroll
  for (int c = 0; c < RUCUDA_V; ++c)
    own[c / RUCUDA_PER_WORD] += (unsigned int)__popc((int)rucuda_vector_bits(m, c)) << ((c % RUCUDA_PER_WORD) * RUCUDA_FIELD);
#pragma unroll
  for (int w = 0; w < RUCUDA_WORDS; ++w) incl[w] = own[w];
#pragma unroll
  for (unsigned int o = 1; o < 32u; o <<= 1) {
#pragma unroll
    for (int w = 0; w < RUCUDA_WORDS; ++w) {
      const unsigned int earlier = __shfl_up_sync(RUCUDA_FULL_MASK, incl[w], o);
      if (lane >= o) incl[w] += earlier;
    }
  }
  if (lane == 31u) {
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) s_totals[c * RUCUDA_WARPS + warp] = rucuda_field(incl, c);
  }
#pragma unroll
  for (int w = 0; w < RUCUDA_WORDS; ++w) incl[w] -= own[w];
  __syncthreads();
  unsigned long long before = 0ull;
  if (warp == 0u) {
    // The slots' counts in tile order, PER_LANE consecutive ones per lane, scanned: each
    // slot's first place in the tile, and the tile's count, which is published at once.
    unsigned int t[RUCUDA_PER_LANE];
    unsigned int sum = 0u;
#pragma unroll
    for (int p = 0; p < RUCUDA_PER_LANE; ++p) {
      const unsigned int i = lane * RUCUDA_PER_LANE + p;
      t[p] = i < RUCUDA_TOTALS ? s_totals[i] : 0u;
      sum += t[p];
    }
    unsigned int scan = sum;
#pragma unroll
    for (unsigned int o = 1; o < 32u; o <<= 1) {
      const unsigned int earlier = __shfl_up_sync(RUCUDA_FULL_MASK, scan, o);
      if (lane >= o) scan += earlier;
    }
    const unsigned int total = __shfl_sync(RUCUDA_FULL_MASK, scan, 31);
    if (lane == 0u) {
      volatile unsigned long long *st = status;
      st[tile] = ((tile == 0 ? RUCUDA_PREFIX : RUCUDA_AGGREGATE) << 62) | (unsigned long long)total;
      s_total = total;
    }
    unsigned int run = scan - sum;
#pragma unroll
    for (int p = 0; p < RUCUDA_PER_LANE; ++p) {
      const unsigned int i = lane * RUCUDA_PER_LANE + p;
      if (i < RUCUDA_TOTALS) s_totals[i] = run;
      run += t[p];
    }
  }
  __syncthreads();
  // The tile rearranged in shared memory: the kept elements first, in order (each at its
  // slot's place, past this slot's earlier lanes and this vector's earlier elements), then
  // for a partition the others, in order (element i at count + i - the kept before it).
  rucuda_t *s_x = reinterpret_cast<rucuda_t *>(s_buf);
  const unsigned int total = s_total;
#pragma unroll
  for (int c = 0; c < RUCUDA_V; ++c) {
    const unsigned int bits = rucuda_vector_bits(m, c);
    const unsigned int at = s_totals[c * RUCUDA_WARPS + warp] + rucuda_field(incl, c);
#if RUCUDA_PARTITION
    const unsigned int li = (unsigned int)((c * RUCUDA_THREADS + (int)threadIdx.x) * RUCUDA_K);
#endif
#pragma unroll
    for (int k = 0; k < RUCUDA_K; ++k) {
      const unsigned int below = (unsigned int)__popc((int)(bits & ((1u << k) - 1u)));
      if ((bits >> k) & 1u) {
        s_x[at + below] = x[c].e[k];
      }
#if RUCUDA_PARTITION
      else if (full || (long long)(li + k) < rest) {
        s_x[total + li + k - (at + below)] = x[c].e[k];
      }
#endif
    }
  }
  // Meanwhile warp 0 looks back for the kept elements of the earlier tiles.
  if (warp == 0u) {
    if (tile > 0) {
      before = rucuda_count_before(status, tile);
      if (lane == 0u) ((volatile unsigned long long *)status)[tile] = (RUCUDA_PREFIX << 62) | (before + total);
    }
    if (lane == 0u) s_before = before;
  }
  __syncthreads();
  before = s_before;
  // Coalesced stores: tile place i goes to selected[before + i] (i < count), or to
  // rejected[base - before + i - count].
  const unsigned int count = full ? (unsigned int)RUCUDA_TILE : (unsigned int)rest;
  rucuda_t *dst = selected + before;
#if RUCUDA_PARTITION
  rucuda_t *rdst = rejected + ((unsigned long long)base - before) - total;
#else
  (void)rejected;
#endif
#pragma unroll
  for (int j = 0; j < RUCUDA_V * RUCUDA_K; ++j) {
    const unsigned int i = threadIdx.x + j * RUCUDA_THREADS;
    if (i < total) dst[i] = s_x[i];
#if RUCUDA_PARTITION
    else if (i < count) rdst[i] = s_x[i];
#endif
  }
  if (threadIdx.x == 0 && base + count == n) *count_out = before + total;
}
