// One tile of the single-pass scan: types, look-back, loads, stores, the scan of a tile in
// registers. Template text: rucuda-array's renderer (codegen/template.rs) fills each
// dollar-delimited slot in one pass.
typedef $T$ rucuda_t;
#define RUCUDA_BLOCK $BLOCK$
#define RUCUDA_WARPS (RUCUDA_BLOCK / 32)
#define RUCUDA_V $V$
#define RUCUDA_K $K$
#define RUCUDA_TILE (RUCUDA_BLOCK * RUCUDA_V * RUCUDA_K)
#define RUCUDA_TOTALS (RUCUDA_V * RUCUDA_WARPS)
#define RUCUDA_PER_LANE ((RUCUDA_TOTALS + 31) / 32)
// 1: a look-back warp in front of the tile's threads looks back from the block's start,
// while they load (scans with a neutral element only; see render.rs).
#define RUCUDA_EARLY $EARLY$
#define RUCUDA_THREADS (RUCUDA_BLOCK + 32 * RUCUDA_EARLY)
// This thread's index among the tile's threads.
#define RUCUDA_TID (threadIdx.x - 32u * RUCUDA_EARLY)
__device__ __forceinline__ rucuda_t rucuda_scan_op(rucuda_t a, rucuda_t b)
{
  return ($EXPR$);
}
// 1 when the scan has a neutral element. Without one (inclusive scans only), a value
// that may be empty (no element combined yet) travels with a flag, and rucuda_join /
// rucuda_join2 skip empty sides; with one, the empty value is the neutral element and
// both are the operator itself (the flags fold away at compile time).
#define RUCUDA_HAS_NEUTRAL $HAS_NEUTRAL$
// All-zero bits: the value of slots no element has filled yet when there is no neutral
// element (never combined into a result that is stored).
__device__ __forceinline__ rucuda_t rucuda_placeholder()
{
  rucuda_t v;
  memset(&v, 0, sizeof(v));
  return v;
}
__device__ __forceinline__ rucuda_t rucuda_neutral_value()
{
  return (rucuda_t)($NEUTRAL$);
}
// earlier ⊕ later, where `earlier` may be empty (`has` false).
__device__ __forceinline__ rucuda_t rucuda_join(rucuda_t earlier, bool has, rucuda_t later)
{
  return (RUCUDA_HAS_NEUTRAL || has) ? rucuda_scan_op(earlier, later) : later;
}
// a ⊕ b, where either may be empty.
__device__ __forceinline__ rucuda_t rucuda_join2(rucuda_t a, bool a_has, rucuda_t b, bool b_has)
{
  if (RUCUDA_HAS_NEUTRAL || (a_has && b_has)) return rucuda_scan_op(a, b);
  return a_has ? a : b;
}
// A flag from lane `lane + o` (scans without a neutral element only).
__device__ __forceinline__ bool rucuda_flag_down(bool f, unsigned int o)
{
  return RUCUDA_HAS_NEUTRAL || __shfl_down_sync(RUCUDA_FULL_MASK, (int)f, o) != 0;
}
union rucuda_vec {
  uint4 raw;
  rucuda_t e[RUCUDA_K];
};
__device__ __forceinline__ void rucuda_store_plain(uint4 *p, uint4 v)
{
  *p = v;
}
__device__ __forceinline__ void rucuda_backoff(unsigned int spins)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  if (spins >= $POLL_SPINS$u && $POLL_NS$u > 0u) __nanosleep($POLL_NS$u);
#else
  (void)spins;
#endif
}
// Warp-wide: the exclusive prefix of `tile` from its predecessors' statuses, in every lane.
__device__ __forceinline__ rucuda_t rucuda_look_back(const unsigned long long *rucuda_status, long long tile)
{
  const unsigned int lane = threadIdx.x & 31u;
  rucuda_t running = rucuda_neutral_value();
  bool running_has = false;
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
    bool has = idx >= 0 && lane <= first;
    // Lane l holds tile pred - l: fold so that earlier tiles (higher lanes) come first.
#pragma unroll
    for (unsigned int o = 1; o < 32u; o <<= 1) {
      const rucuda_t later = rucuda_shfl_down(v, o);
      const bool later_has = rucuda_flag_down(has, o);
      if (lane + o < 32u) {
        v = rucuda_join2(later, later_has, v, has);
        has = has || later_has;
      }
    }
    const bool has0 = RUCUDA_HAS_NEUTRAL || __shfl_sync(RUCUDA_FULL_MASK, (int)has, 0) != 0;
    running = rucuda_join2(rucuda_shfl_idx(v, 0u), has0, running, running_has);
    running_has = running_has || has0;
    if (prefixes) return running;
  }
}
// One tile's V vectors per thread, vector c of thread t being vector c * BLOCK + t of the
// tile: 16-byte accesses when the tile is full (and the arrays aligned), else element by
// element, padding with the neutral element and storing nothing past n.
__device__ __forceinline__ void rucuda_load_tile(rucuda_vec (&x)[RUCUDA_V], const rucuda_t *$RESTRICT$rucuda_in, long long base, long long n, bool full)
{
  if (full) {
    const uint4 *rucuda_src = reinterpret_cast<const uint4 *>(rucuda_in + base);
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) x[c].raw = $LOAD$(rucuda_src + c * RUCUDA_BLOCK + RUCUDA_TID);
  } else {
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) {
#pragma unroll
      for (int j = 0; j < RUCUDA_K; ++j) {
        const long long k = base + (long long)(c * RUCUDA_BLOCK + RUCUDA_TID) * RUCUDA_K + j;
        x[c].e[j] = k < n ? rucuda_in[k] : (RUCUDA_HAS_NEUTRAL ? rucuda_neutral_value() : rucuda_in[n - 1]);
      }
    }
  }
}
__device__ __forceinline__ void rucuda_store_tile(const rucuda_vec (&x)[RUCUDA_V], rucuda_t *$RESTRICT$rucuda_out, long long base, long long n, bool full)
{
  if (full) {
    uint4 *rucuda_dst = reinterpret_cast<uint4 *>(rucuda_out + base);
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) $STORE$(rucuda_dst + c * RUCUDA_BLOCK + RUCUDA_TID, x[c].raw);
  } else {
#pragma unroll
    for (int c = 0; c < RUCUDA_V; ++c) {
#pragma unroll
      for (int j = 0; j < RUCUDA_K; ++j) {
        const long long k = base + (long long)(c * RUCUDA_BLOCK + RUCUDA_TID) * RUCUDA_K + j;
        if (k < n) rucuda_out[k] = x[c].e[j];
      }
    }
  }
}
// Each vector's inclusive scan in `x`; agg[c] becomes the inclusive scan of the totals of
// vector c across the warp, whose last lane saves it in `totals` (the warp's total of
// vector c), then the exclusive one.
__device__ __forceinline__ void rucuda_scan_vectors(rucuda_vec (&x)[RUCUDA_V], rucuda_t (&agg)[RUCUDA_V], unsigned int lane, unsigned int warp, rucuda_t *totals)
{
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
    for (int c = 0; c < RUCUDA_V; ++c) totals[c * RUCUDA_WARPS + warp] = agg[c];
  }
#pragma unroll
  for (int c = 0; c < RUCUDA_V; ++c) {
    const rucuda_t earlier = rucuda_shfl_up(agg[c], 1u);
    agg[c] = lane == 0u ? rucuda_neutral_value() : earlier;
  }
}
// One warp: the V x WARPS warp totals in tile order (vector c of warp w is total
// c * WARPS + w), PER_LANE consecutive ones per lane into `t`; the tile's aggregate in
// `total` (every lane) and in `before` what comes before this lane's first total (the
// neutral element in lane 0).
__device__ __forceinline__ void rucuda_scan_totals(unsigned int lane, const rucuda_t *totals, rucuda_t (&t)[RUCUDA_PER_LANE], rucuda_t &total, rucuda_t &before)
{
#pragma unroll
  for (int p = 0; p < RUCUDA_PER_LANE; ++p) {
    const unsigned int i = lane * RUCUDA_PER_LANE + p;
    t[p] = i < RUCUDA_TOTALS ? totals[i] : rucuda_neutral_value();
  }
  rucuda_t incl = t[0];
#pragma unroll
  for (int p = 1; p < RUCUDA_PER_LANE; ++p)
    if (RUCUDA_HAS_NEUTRAL || lane * RUCUDA_PER_LANE + p < RUCUDA_TOTALS) incl = rucuda_scan_op(incl, t[p]);
#pragma unroll
  for (unsigned int o = 1; o < 32u; o <<= 1) {
    const rucuda_t earlier = rucuda_shfl_up(incl, o);
    if (lane >= o) incl = rucuda_scan_op(earlier, incl);
  }
  // Without a neutral element, lanes past the last total hold no value.
  total = rucuda_shfl_idx(incl, RUCUDA_HAS_NEUTRAL ? 31u : (RUCUDA_TOTALS - 1u) / RUCUDA_PER_LANE);
  before = rucuda_shfl_up(incl, 1u);
  if (lane == 0u) before = rucuda_neutral_value();
}
// One warp: each total's exclusive prefix in the tile into `totals`, from the tile's
// prefix (`has_prefix` false: none, tile 0) and the scan of rucuda_scan_totals.
__device__ __forceinline__ void rucuda_write_runs(unsigned int lane, const rucuda_t (&t)[RUCUDA_PER_LANE], rucuda_t tile_prefix, bool has_prefix, rucuda_t before, rucuda_t *totals)
{
  // Empty only for the first total of tile 0 (no neutral element).
  rucuda_t run = rucuda_join2(tile_prefix, has_prefix, before, lane != 0u);
  bool run_has = has_prefix || lane != 0u;
#pragma unroll
  for (int p = 0; p < RUCUDA_PER_LANE; ++p) {
    const unsigned int i = lane * RUCUDA_PER_LANE + p;
    if (i < RUCUDA_TOTALS) totals[i] = run;
    run = rucuda_join(run, run_has, t[p]);
    run_has = true;
  }
}
// Every thread: its vectors' elements from their prefixes (the totals' prefixes in
// `totals`, its lane's in `agg`) and the kind of scan's last step.
__device__ __forceinline__ void rucuda_finish_vectors(rucuda_vec (&x)[RUCUDA_V], const rucuda_t (&agg)[RUCUDA_V], long long tile, unsigned int lane, unsigned int warp, const rucuda_t *totals)
{
#pragma unroll
  for (int c = 0; c < RUCUDA_V; ++c) {
    // The prefix of vector c of this thread: empty only for the tile's first element in
    // tile 0 (no neutral element).
    const bool totals_has = tile > 0 || c * RUCUDA_WARPS + warp > 0u;
    const bool p_has = totals_has || lane != 0u;
    const rucuda_t p = rucuda_join2(totals[c * RUCUDA_WARPS + warp], totals_has, agg[c], lane != 0u);
    (void)p_has;
$FINISH$
  }
}
// Scans the tile in `x` in place: each vector in registers, the vectors' totals across
// each warp by shuffles, the V x WARPS warp totals by warp 0 (through `totals`, shared),
// which also publishes the tile's status and looks back for its prefix. Every thread of
// the block calls it (it synchronises the block twice).
__device__ __forceinline__ void rucuda_scan_tile(rucuda_vec (&x)[RUCUDA_V], long long tile, unsigned long long *rucuda_status, rucuda_t *totals)
{
  const unsigned int lane = RUCUDA_TID & 31u, warp = RUCUDA_TID >> 5;
  rucuda_t agg[RUCUDA_V];
  rucuda_scan_vectors(x, agg, lane, warp, totals);
  __syncthreads();
  if (warp == 0u) {
    rucuda_t t[RUCUDA_PER_LANE];
    rucuda_t total, before;
    rucuda_scan_totals(lane, totals, t, total, before);
    if (lane == 0u) rucuda_status_store(rucuda_status, tile, tile == 0 ? RUCUDA_STATUS_PREFIX : RUCUDA_STATUS_AGGREGATE, total);
    rucuda_t tile_prefix = rucuda_neutral_value();
    if (tile > 0) {
      tile_prefix = rucuda_look_back(rucuda_status, tile);
      if (lane == 0u) rucuda_status_store(rucuda_status, tile, RUCUDA_STATUS_PREFIX, rucuda_scan_op(tile_prefix, total));
    }
    rucuda_write_runs(lane, t, tile_prefix, tile > 0, before, totals);
  }
  __syncthreads();
  rucuda_finish_vectors(x, agg, tile, lane, warp, totals);
}
