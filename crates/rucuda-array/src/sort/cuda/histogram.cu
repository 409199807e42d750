// Histograms privatized in shared memory: each block counts into its own bins (dynamic
// shared memory; `shared` = 0 counts straight into the global bins instead), then adds
// its counts to the global 64-bit bins. The lanes kernels at the end keep 32 copies. Template text: rucuda-array's renderer fills
// each dollar-delimited slot.
$PRELUDE$
typedef $T$ rucuda_t;
#define RUCUDA_THREADS 256
#define RUCUDA_K (16 / sizeof(rucuda_t) > 0 ? 16 / sizeof(rucuda_t) : 1)
union rucuda_hist_vec {
  uint4 raw;
  rucuda_t e[RUCUDA_K];
};
__device__ __forceinline__ double rucuda_to_double(rucuda_t x) { return $TO_DOUBLE$; }
__device__ __forceinline__ long long rucuda_to_int(rucuda_t x) { return $TO_INT$; }
// 1 for float, half and bfloat16 elements: the lanes kernels' float estimate applies.
#define RUCUDA_FLOAT_INPUT $FLOAT_INPUT$
// The smallest and largest value of an 8- or 16-bit integer type (bool: 0 and 1); 1 and
// 0 for the other types.
#define RUCUDA_TYPE_MIN ($TYPE_MIN$)
#define RUCUDA_TYPE_MAX ($TYPE_MAX$)

// mode 0: `bins` even bins over [lo, hi] (NumPy's corrections at the edges, computed
// here); mode 1: explicit increasing `edges` (the last bin closed); mode 2: the value
// itself (bincount); mode 3: integers, bins of the integral `width` over the integral
// [lo, hi]. -1: not counted (outside, NaN). Only mode 1 reads `edges`.
// Edge b of `bins` even bins over [lo, hi]: NumPy's linspace, b * step + lo rounded
// twice (no fused multiply-add), the last edge hi itself.
__device__ __forceinline__ double rucuda_even_edge(long long b, long long bins, double lo, double hi, double step)
{
  return b >= bins ? hi : __dadd_rn(__dmul_rn((double)b, step), lo);
}

// `norm`: bins / (hi - lo) (mode 0) or 1 / width (mode 3), computed once per thread.
__device__ __forceinline__ long long rucuda_bin(rucuda_t v, int mode, const double *edges, long long bins, double lo, double hi, double step, double norm, long long width)
{
  if (mode == 2) {
    const long long b = rucuda_to_int(v);
    return b >= 0 && b < bins ? b : -1;
  }
  if (mode == 3) {
    // Integers into even bins of an integral width over an integral range: exact.
    const long long x = rucuda_to_int(v), l = (long long)lo, h = (long long)hi;
    if (x < l || x > h) return -1;
    const long long off = x - l;
    long long b = off;
    if (width != 1) {
      // floor(off / width) without a 64-bit division: the reciprocal's estimate, then
      // one step either way (off and width are exact in a double).
      b = (long long)((double)off * norm);
      if (b * width > off) b -= 1;
      else if ((b + 1) * width <= off) b += 1;
    }
    return b < bins ? b : bins - 1;
  }
  const double x = rucuda_to_double(v);
  if (!(x >= lo && x <= hi)) return -1;
  long long b;
  if (mode == 0) {
    b = (long long)((x - lo) * norm);
    if (b >= bins) b = bins - 1;
    if (b < 0) b = 0;
    if (x < rucuda_even_edge(b, bins, lo, hi, step)) b -= 1;
    else if (b != bins - 1 && x >= rucuda_even_edge(b + 1, bins, lo, hi, step)) b += 1;
  } else {
    long long l = 0, h = bins + 1;
    while (l < h) {
      const long long m = l + ((h - l) >> 1);
      if (edges[m] <= x) l = m + 1; else h = m;
    }
    b = l - 1;
    if (b >= bins) b = bins - 1;
  }
  return b >= 0 && b < bins ? b : -1;
}

__device__ __forceinline__ void rucuda_count(unsigned int *s, unsigned long long *counts, bool shared, long long b)
{
  if (b < 0) return;
  if (shared) atomicAdd(&s[b], 1u); else atomicAdd(&counts[b], 1ull);
}

extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS) $ENTRY$_histogram(
    const rucuda_t *__restrict__ x, long long n, int vectorized, int mode, const double *__restrict__ edges,
    long long bins, double lo, double hi, double step, long long width, int shared,
    unsigned long long *__restrict__ counts)
{
  extern __shared__ unsigned int rucuda_bins[];
  if (shared) {
    for (long long b = threadIdx.x; b < bins; b += RUCUDA_THREADS) rucuda_bins[b] = 0u;
    __syncthreads();
  }
  const long long stride = (long long)gridDim.x * RUCUDA_THREADS;
  const double norm = mode == 3 ? 1.0 / (double)width : (double)bins / (hi - lo);
  long long tail = 0;
  if (vectorized) {
    const long long vectors = n / RUCUDA_K;
    const uint4 *src = reinterpret_cast<const uint4 *>(x);
    for (long long i = (long long)blockIdx.x * RUCUDA_THREADS + threadIdx.x; i < vectors; i += stride) {
      rucuda_hist_vec v;
      v.raw = __ldcs(src + i);
#pragma unroll
      for (int j = 0; j < (int)RUCUDA_K; ++j) rucuda_count(rucuda_bins, counts, shared, rucuda_bin(v.e[j], mode, edges, bins, lo, hi, step, norm, width));
    }
    tail = vectors * RUCUDA_K;
  }
  for (long long i = tail + (long long)blockIdx.x * RUCUDA_THREADS + threadIdx.x; i < n; i += stride) {
    rucuda_count(rucuda_bins, counts, shared, rucuda_bin(x[i], mode, edges, bins, lo, hi, step, norm, width));
  }
  if (shared) {
    __syncthreads();
    for (long long b = threadIdx.x; b < bins; b += RUCUDA_THREADS) {
      const unsigned int c = rucuda_bins[b];
      if (c != 0u) atomicAdd(&counts[b], (unsigned long long)c);
    }
  }
}

// ---- The lanes kernels (the default, rucuda-array's HistogramVariant::Lanes) -----------
// 32 copies of the bins in shared memory, copy j at word b * 32 + j: lane j of every warp
// counts into copy j, so the lanes of a warp never share a bank and their atomics never
// conflict. One kernel per mode (the template argument), so each is straight-line code.
// Mode 0 on float inputs first places the value with float arithmetic when `fast` (the
// host proved the estimate's error below a quarter of RUCUDA_LANES_MARGIN bins): a
// position more than the margin inside a bin is that bin whatever the rounding; one
// nearer an edge takes the exact double path above.
// The loops repeat the classic kernel's: the classic kernel still counts where 32 copies
// do not fit shared memory (more than 383 bins) and when HistogramVariant::Classic asks.
// (The fast path tests it as 1024ths of a bin: RUCUDA_LANES_MARGIN is 2^-10.)
#define RUCUDA_LANES_MARGIN 0x1p-10f
// 16-byte vectors each thread loads before counting them.
#define RUCUDA_LANES_LOADS 4

// Counts every element of x into the lanes copies with `bin_of` (a bin below `bins`, or
// `bins` itself: not counted, a row of copies only ever added to), so that every element
// takes one unconditional shared atomic. One loop per way of placing a value, each
// straight-line: a test of the kernel's arguments (or of the bin) inside the loop cost a
// branch per element.
template <class BinOf>
__device__ __forceinline__ void rucuda_lanes_count(const rucuda_t *__restrict__ x, long long n, int vectorized, unsigned int *bins32, BinOf bin_of)
{
  unsigned int *mine = bins32 + (threadIdx.x & 31);
  const long long stride = (long long)gridDim.x * RUCUDA_THREADS;
  long long tail = 0;
  if (vectorized) {
    const long long vectors = n / RUCUDA_K;
    const uint4 *src = reinterpret_cast<const uint4 *>(x);
    long long i = (long long)blockIdx.x * RUCUDA_THREADS + threadIdx.x;
    // RUCUDA_LANES_LOADS vectors in flight per thread before any is counted: with one,
    // the blocks that fit a multiprocessor (32 KiB of bins each for 256 bins) kept too
    // few bytes in flight to cover the memory's latency.
    for (; i + (RUCUDA_LANES_LOADS - 1) * stride < vectors; i += RUCUDA_LANES_LOADS * stride) {
      rucuda_hist_vec v[RUCUDA_LANES_LOADS];
#pragma unroll
      for (int u = 0; u < RUCUDA_LANES_LOADS; ++u) v[u].raw = __ldcs(src + i + u * stride);
#pragma unroll
      for (int u = 0; u < RUCUDA_LANES_LOADS; ++u) {
#pragma unroll
        for (int j = 0; j < (int)RUCUDA_K; ++j) {
          atomicAdd(&mine[bin_of(v[u].e[j]) << 5], 1u);
        }
      }
    }
    for (; i < vectors; i += stride) {
      rucuda_hist_vec v;
      v.raw = __ldcs(src + i);
#pragma unroll
      for (int j = 0; j < (int)RUCUDA_K; ++j) {
        atomicAdd(&mine[bin_of(v.e[j]) << 5], 1u);
      }
    }
    tail = vectors * RUCUDA_K;
  }
  for (long long i = tail + (long long)blockIdx.x * RUCUDA_THREADS + threadIdx.x; i < n; i += stride) {
    atomicAdd(&mine[bin_of(x[i]) << 5], 1u);
  }
}

template <int MODE>
__device__ __forceinline__ void rucuda_histogram_lanes(
    const rucuda_t *__restrict__ x, long long n, int vectorized, const double *__restrict__ edges,
    long long bins, double lo, double hi, double step, long long width, int fast, float lo32,
    float norm32, unsigned long long *__restrict__ counts)
{
  // bins + 1 rows of 32 copies: the last row takes the elements not counted.
  extern __shared__ unsigned int rucuda_bins[];
  for (long long i = threadIdx.x; i < (bins + 1) * 32; i += RUCUDA_THREADS) rucuda_bins[i] = 0u;
  __syncthreads();
  const double norm = MODE == 3 ? 1.0 / (double)width : (double)bins / (hi - lo);
  const int none = (int)bins;
  // The general placement (rucuda_bin): bins here are at most a few hundred.
  auto general = [=](rucuda_t v) -> int {
    const long long b = rucuda_bin(v, MODE, edges, bins, lo, hi, step, norm, width);
    return b >= 0 ? (int)b : none;
  };
  if (MODE == 3 && !RUCUDA_FLOAT_INPUT && sizeof(rucuda_t) <= 2 && width == 1 &&
      lo >= -2147483648.0 && hi <= 2147483647.0 && hi >= lo) {
    // 8- and 16-bit integers in bins of width 1 (a byte histogram, say) over a range
    // that fits 32 bits: 32-bit arithmetic and one unsigned compare for both ends, where
    // the general path takes 64-bit integers. The same bins: x in [lo, hi], the last
    // closed.
    const int lo_i = (int)lo, last = (int)bins - 1;
    const unsigned int span = (unsigned int)((int)hi - lo_i);
    // The type's whole range, when every value has its own bin (a byte histogram of 256
    // bins over [0, 256], say): the bin is the value less lo, with no test at all.
    if (RUCUDA_TYPE_MIN <= RUCUDA_TYPE_MAX && RUCUDA_TYPE_MIN >= lo_i && RUCUDA_TYPE_MAX - lo_i <= last &&
        (unsigned int)(RUCUDA_TYPE_MAX - lo_i) <= span) {
      rucuda_lanes_count(x, n, vectorized, rucuda_bins, [=](rucuda_t v) -> int { return (int)rucuda_to_int(v) - lo_i; });
    } else {
      rucuda_lanes_count(x, n, vectorized, rucuda_bins, [=](rucuda_t v) -> int {
        const int off = (int)rucuda_to_int(v) - lo_i;
        if ((unsigned int)off > span) return none;
        return off < last ? off : last;
      });
    }
  } else if (MODE == 0 && RUCUDA_FLOAT_INPUT && fast) {
    // Float inputs first placed with float arithmetic (the host proved the estimate's
    // error below a quarter of RUCUDA_LANES_MARGIN bins): a position more than the margin
    // inside a bin is that bin whatever the rounding; one nearer an edge takes the exact
    // double path.
    // The position in 1024ths of a bin: q = 1024 p exactly (a power of two scales a
    // rounded product exactly), truncated to an unsigned integer (negative values and
    // NaNs give 0, values past 2^32 all ones). The bin is q >> 10 and the fraction
    // q & 1023: a fraction of 1 to 1022 (so at least the margin, 2^-10, from either
    // edge) and a bin below `bins` are that bin. Everything else (outside [lo, hi],
    // infinities, NaNs, positions near an edge) takes the exact path. It replaced a
    // float floor, a fraction and six compares; with it the kernel counted 2^28 f32 in
    // 259 us on an H200 (Nsight Compute, 86% of DRAM throughput, 2026-11-28; the
    // version before was not timed alone).
    const float norm_q = norm32 * 1024.0f;
    const unsigned int bins_u = (unsigned int)bins;
    rucuda_lanes_count(x, n, vectorized, rucuda_bins, [=](rucuda_t v) -> int {
      const unsigned int q = __float2uint_rz(__fmul_rn(__fsub_rn((float)(v), lo32), norm_q));
      const unsigned int b = q >> 10;
      if (((q & 1023u) - 1u) < 1022u && b < bins_u) return (int)b;
      return general(v);
    });
  } else {
    rucuda_lanes_count(x, n, vectorized, rucuda_bins, general);
  }
  __syncthreads();
  // Bin b's copies, read in an order rotated by b: the 32 lanes of a warp (32 consecutive
  // bins) read 32 different banks.
  for (long long b = threadIdx.x; b < bins; b += RUCUDA_THREADS) {
    unsigned int c = 0u;
    for (int j = 0; j < 32; ++j) c += rucuda_bins[b * 32 + ((j + (int)b) & 31)];
    if (c != 0u) atomicAdd(&counts[b], (unsigned long long)c);
  }
}

#define RUCUDA_LANES_ENTRY(M)                                                                  \
  extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS) $ENTRY$_histogram_lanes_m##M(    \
      const rucuda_t *__restrict__ x, long long n, int vectorized, const double *__restrict__ edges, \
      long long bins, double lo, double hi, double step, long long width, int fast, float lo32,  \
      float norm32, unsigned long long *__restrict__ counts)                                    \
  {                                                                                             \
    rucuda_histogram_lanes<M>(x, n, vectorized, edges, bins, lo, hi, step, width, fast, lo32,  \
                              norm32, counts);                                                  \
  }
RUCUDA_LANES_ENTRY(0)
RUCUDA_LANES_ENTRY(1)
RUCUDA_LANES_ENTRY(2)
RUCUDA_LANES_ENTRY(3)
