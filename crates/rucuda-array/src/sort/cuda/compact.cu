// Stream compaction in one pass (CUB's DeviceSelect / DevicePartition): each block takes a
// tile by ticket, counts the kept elements with warp ballots, publishes its count and
// looks back over the earlier tiles' (decoupled look-back), stages the kept elements (and
// the others, for a partition) in shared memory in order, and writes them coalesced.
// Template text: rucuda-array's renderer fills each dollar-delimited slot.
$PRELUDE$
$PREFETCH_L2$
typedef $T$ rucuda_t;
typedef $FLAG_T$ rucuda_flag_t;
#define RUCUDA_THREADS $THREADS$
#define RUCUDA_ITEMS $ITEMS$
// 1: the others are written too (DevicePartition), 0: only the kept ones (DeviceSelect).
#define RUCUDA_PARTITION $PARTITION$
#define RUCUDA_WARPS (RUCUDA_THREADS / 32)
#define RUCUDA_TILE (RUCUDA_THREADS * RUCUDA_ITEMS)
#define RUCUDA_FULL_MASK 0xffffffffu
#define RUCUDA_AGGREGATE 1ull
#define RUCUDA_PREFIX 2ull
#define RUCUDA_COUNT_MASK ((1ull << 62) - 1ull)
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

extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS) $ENTRY$(
    const rucuda_t *__restrict__ in, const rucuda_flag_t *__restrict__ flags, long long n,
    rucuda_t *__restrict__ selected, rucuda_t *__restrict__ rejected,
    unsigned long long *status, unsigned int *counter, unsigned long long *count_out,
    long long ahead)
{
  __shared__ unsigned int s_tile;
  __shared__ unsigned int s_warp[RUCUDA_WARPS];
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
  const unsigned int count = rest < (long long)RUCUDA_TILE ? (unsigned int)rest : (unsigned int)RUCUDA_TILE;
  const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned int below = (1u << lane) - 1u;
  rucuda_t x[RUCUDA_ITEMS];
  unsigned int kept[RUCUDA_ITEMS];
  unsigned int mine = 0u;
  // This lane's first element: item j is j * 32 elements further (offsets the loads
  // carry as immediates); full tiles (all but the last) load without bounds tests.
  const unsigned int first = warp * 32u * RUCUDA_ITEMS + lane;
  const rucuda_t *src = in + base + first;
  if (count == (unsigned int)RUCUDA_TILE) {
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) x[j] = src[j * 32];
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) {
      kept[j] = __ballot_sync(RUCUDA_FULL_MASK, rucuda_keep(x[j], flags, base + first + j * 32));
      mine += (unsigned int)__popc((int)kept[j]);
    }
  } else {
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) {
      const unsigned int i = first + j * 32u;
      bool keep = false;
      if (i < count) {
        x[j] = src[j * 32];
        keep = rucuda_keep(x[j], flags, base + i);
      }
      kept[j] = __ballot_sync(RUCUDA_FULL_MASK, keep);
      mine += (unsigned int)__popc((int)kept[j]);
    }
  }
  if (lane == 0u) s_warp[warp] = mine;
  __syncthreads();
  unsigned int warp_before = 0u, total = 0u;
#pragma unroll
  for (unsigned int w = 0; w < RUCUDA_WARPS; ++w) {
    if (w < warp) warp_before += s_warp[w];
    total += s_warp[w];
  }
  if (warp == 0u) {
    volatile unsigned long long *st = status;
    unsigned long long before = 0ull;
    if (tile == 0) {
      if (lane == 0u) st[0] = (RUCUDA_PREFIX << 62) | (unsigned long long)total;
    } else {
      if (lane == 0u) st[tile] = (RUCUDA_AGGREGATE << 62) | (unsigned long long)total;
      before = rucuda_count_before(status, tile);
      if (lane == 0u) st[tile] = (RUCUDA_PREFIX << 62) | (before + total);
    }
    if (lane == 0u) s_before = before;
  }
  rucuda_t *s_x = reinterpret_cast<rucuda_t *>(s_buf);
  unsigned int run = warp_before;
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) {
    if ((kept[j] >> lane) & 1u) s_x[run + (unsigned int)__popc((int)(kept[j] & below))] = x[j];
    run += (unsigned int)__popc((int)kept[j]);
  }
  __syncthreads();
  const unsigned long long before = s_before;
  // Unrolled over the tile's ITEMS strides, one bounds test each (the loop over `total`
  // it replaces computed a 64-bit index per element).
  rucuda_t *dst = selected + before + threadIdx.x;
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) {
    if (threadIdx.x + j * RUCUDA_THREADS < total) dst[j * RUCUDA_THREADS] = s_x[threadIdx.x + j * RUCUDA_THREADS];
  }
#if RUCUDA_PARTITION
  // The others, in order: element i of the tile is the (i - kept before it)-th of them.
  __syncthreads();
  run = warp_before;
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) {
    const unsigned int i = first + j * 32u;
    if (i < count && !((kept[j] >> lane) & 1u)) s_x[i - run - (unsigned int)__popc((int)(kept[j] & below))] = x[j];
    run += (unsigned int)__popc((int)kept[j]);
  }
  __syncthreads();
  const unsigned long long rejected_before = (unsigned long long)base - before;
  rucuda_t *rdst = rejected + rejected_before + threadIdx.x;
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) {
    if (threadIdx.x + j * RUCUDA_THREADS < count - total) rdst[j * RUCUDA_THREADS] = s_x[threadIdx.x + j * RUCUDA_THREADS];
  }
#else
  (void)rejected;
#endif
  if (threadIdx.x == 0 && base + count == n) *count_out = before + total;
}
