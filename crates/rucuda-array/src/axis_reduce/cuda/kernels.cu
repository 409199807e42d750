// Axis reductions of one (operation, element type): the problem arrives normalized as
// kept axes (the output, C order) and reduced axes, at most RUCUDA_MAXD of each, with the
// input's strides in elements (signed, relative to element 0). Three kernels:
// - rucuda_axis_rows: a warp per (output, chunk of the reduced axes); for a contiguous
//   reduced axis (16-byte loads after a scalar head, four in flight per lane).
// - rucuda_axis_cols: a thread per (output, chunk); adjacent threads take adjacent
//   outputs, so reads coalesce when the innermost kept axis is contiguous. Also the
//   general path (any strides).
// - rucuda_axis_merge: a thread per output folding the `splits` chunk partials.
// With splits == 1 the first two write the finished output; else the partials, chunk-major.
$PRELUDE$
$SHUFFLES$
$OPS$
#define RUCUDA_MAXD $MAXD$
#define RUCUDA_V (16 / (int)sizeof(rucuda_in_t))
#define RUCUDA_U (sizeof(rucuda_in_t) <= 4 ? 16 : 8)

__device__ __forceinline__ long long rucuda_min_ll(long long a, long long b) { return a < b ? a : b; }

struct rucuda_geometry {
  long long kshape[RUCUDA_MAXD], kstride[RUCUDA_MAXD], rshape[RUCUDA_MAXD], rstride[RUCUDA_MAXD];
  long long kn, rn, nout, len, chunk, splits;
};

// The input offset of output `o` (its kept-axes index, C order).
__device__ __forceinline__ long long rucuda_kept_offset(const rucuda_geometry &g, long long o)
{
  long long off = 0;
#pragma unroll
  for (int d = RUCUDA_MAXD - 1; d >= 0; --d) {
    if (d < g.kn) {
      const long long n = g.kshape[d];
      const long long q = o / n;
      off += (o - q * n) * g.kstride[d];
      o = q;
    }
  }
  return off;
}

// The input offset of flat index `j` over the reduced axes (C order).
__device__ __forceinline__ long long rucuda_reduce_offset(const rucuda_geometry &g, long long j)
{
  long long off = 0;
#pragma unroll
  for (int d = RUCUDA_MAXD - 1; d >= 0; --d) {
    if (d < g.rn) {
      const long long n = g.rshape[d];
      const long long q = j / n;
      off += (j - q * n) * g.rstride[d];
      j = q;
    }
  }
  return off;
}

__device__ __forceinline__ void rucuda_store(const rucuda_geometry &g, rucuda_out_t *out, rucuda_acc_t *partials, long long o, long long s, const rucuda_acc_t &acc, double ddof)
{
  if (g.splits == 1)
    out[o] = rucuda_finish(acc, g.len, ddof);
  else
    partials[s * g.nout + o] = acc;
}

// Folds the V elements of one 16-byte vector whose first element has index j.
__device__ __forceinline__ rucuda_acc_t rucuda_fold_vector(rucuda_acc_t acc, const uint4 &v, long long j)
{
  rucuda_in_t e[RUCUDA_V];
  memcpy(e, &v, 16);
#pragma unroll
  for (int k = 0; k < RUCUDA_V; ++k) acc = rucuda_combine(acc, rucuda_map(e[k], j + k));
  return acc;
}

extern "C" __global__ void __launch_bounds__(256) rucuda_axis_rows(const rucuda_in_t *__restrict__ x, rucuda_out_t *__restrict__ out, rucuda_acc_t *__restrict__ partials, const rucuda_geometry g, const double ddof)
{
  const int lane = threadIdx.x & 31;
  const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
  const long long units = g.nout * g.splits;
  const bool contiguous = g.rn == 1 && g.rstride[0] == 1;
  for (long long unit = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); unit < units; unit += warps) {
    const long long o = unit / g.splits;
    const long long s = unit - o * g.splits;
    const long long base = rucuda_kept_offset(g, o);
    const long long j0 = s * g.chunk;
    const long long j1 = rucuda_min_ll(j0 + g.chunk, g.len);
    rucuda_acc_t acc = rucuda_identity();
    const rucuda_in_t *row = x + base;
    // Bytes from this chunk's first element to the next 16-byte boundary: a whole number
    // of elements unless the element is wider than its alignment (complex128 at 8 mod 16).
    const unsigned long long gap = (16ull - ((unsigned long long)(row + j0) & 15ull)) & 15ull;
    if (contiguous && gap % sizeof(rucuda_in_t) == 0) {
      // Scalar head up to the boundary, vectors, scalar tail.
      const long long head = rucuda_min_ll((long long)(gap / sizeof(rucuda_in_t)), j1 - j0);
      if (lane < head) acc = rucuda_combine(acc, rucuda_map(row[j0 + lane], j0 + lane));
      const long long jb = j0 + head;
      const long long nvec = (j1 - jb) / RUCUDA_V;
      const uint4 *vec = reinterpret_cast<const uint4 *>(row + jb);
      rucuda_acc_t a1 = rucuda_identity(), a2 = rucuda_identity(), a3 = rucuda_identity();
      long long k = lane;
      for (; k + 96 < nvec; k += 128) {
        const uint4 v0 = vec[k], v1 = vec[k + 32], v2 = vec[k + 64], v3 = vec[k + 96];
        acc = rucuda_fold_vector(acc, v0, jb + k * RUCUDA_V);
        a1 = rucuda_fold_vector(a1, v1, jb + (k + 32) * RUCUDA_V);
        a2 = rucuda_fold_vector(a2, v2, jb + (k + 64) * RUCUDA_V);
        a3 = rucuda_fold_vector(a3, v3, jb + (k + 96) * RUCUDA_V);
      }
      for (; k < nvec; k += 32) acc = rucuda_fold_vector(acc, vec[k], jb + k * RUCUDA_V);
      acc = rucuda_combine(rucuda_combine(acc, a1), rucuda_combine(a2, a3));
      const long long jt = jb + nvec * RUCUDA_V + lane;
      if (jt < j1) acc = rucuda_combine(acc, rucuda_map(row[jt], jt));
    } else {
      for (long long j = j0 + lane; j < j1; j += 32) acc = rucuda_combine(acc, rucuda_map(x[base + rucuda_reduce_offset(g, j)], j));
    }
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) acc = rucuda_combine(acc, rucuda_shfl_down(acc, d));
    if (lane == 0) rucuda_store(g, out, partials, o, s, acc, ddof);
  }
}

extern "C" __global__ void __launch_bounds__(256) rucuda_axis_cols(const rucuda_in_t *__restrict__ x, rucuda_out_t *__restrict__ out, rucuda_acc_t *__restrict__ partials, const rucuda_geometry g, const double ddof)
{
  const long long threads = (long long)gridDim.x * blockDim.x;
  const long long units = g.nout * g.splits;
  for (long long unit = (long long)blockIdx.x * blockDim.x + threadIdx.x; unit < units; unit += threads) {
    const long long s = unit / g.nout;
    const long long o = unit - s * g.nout;
    const long long j0 = s * g.chunk;
    const long long j1 = rucuda_min_ll(j0 + g.chunk, g.len);
    const rucuda_in_t *p = x + rucuda_kept_offset(g, o);
    rucuda_acc_t acc = rucuda_identity();
    if (g.rn == 1) {
      const long long st = g.rstride[0];
      rucuda_acc_t a1 = rucuda_identity(), a2 = rucuda_identity(), a3 = rucuda_identity();
      // RUCUDA_U loads in flight per thread (64 bytes of small elements), folded into
      // four accumulators.
      long long j = j0;
      for (; j + RUCUDA_U <= j1; j += RUCUDA_U) {
        rucuda_in_t v[RUCUDA_U];
#pragma unroll
        for (int k = 0; k < RUCUDA_U; ++k) v[k] = p[(j + k) * st];
#pragma unroll
        for (int k = 0; k < RUCUDA_U; k += 4) {
          acc = rucuda_combine(acc, rucuda_map(v[k], j + k));
          a1 = rucuda_combine(a1, rucuda_map(v[k + 1], j + k + 1));
          a2 = rucuda_combine(a2, rucuda_map(v[k + 2], j + k + 2));
          a3 = rucuda_combine(a3, rucuda_map(v[k + 3], j + k + 3));
        }
      }
      for (; j < j1; ++j) acc = rucuda_combine(acc, rucuda_map(p[j * st], j));
      acc = rucuda_combine(rucuda_combine(acc, a1), rucuda_combine(a2, a3));
    } else if (j0 < j1) {
      // An odometer over the reduced axes from j0's index.
      long long idx[RUCUDA_MAXD];
      long long off = 0, r = j0;
#pragma unroll
      for (int d = RUCUDA_MAXD - 1; d >= 0; --d) {
        idx[d] = 0;
        if (d < g.rn) {
          const long long q = r / g.rshape[d];
          idx[d] = r - q * g.rshape[d];
          off += idx[d] * g.rstride[d];
          r = q;
        }
      }
      for (long long j = j0; j < j1; ++j) {
        acc = rucuda_combine(acc, rucuda_map(p[off], j));
#pragma unroll
        for (int d = RUCUDA_MAXD - 1; d >= 0; --d) {
          if (d < g.rn) {
            off += g.rstride[d];
            if (++idx[d] < g.rshape[d]) break;
            off -= idx[d] * g.rstride[d];
            idx[d] = 0;
          }
        }
      }
    }
    rucuda_store(g, out, partials, o, s, acc, ddof);
  }
}

extern "C" __global__ void __launch_bounds__(256) rucuda_axis_merge(const rucuda_acc_t *__restrict__ partials, rucuda_out_t *__restrict__ out, const rucuda_geometry g, const double ddof)
{
  const long long threads = (long long)gridDim.x * blockDim.x;
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < g.nout; o += threads) {
    rucuda_acc_t acc = partials[o];
    for (long long s = 1; s < g.splits; ++s) acc = rucuda_combine(acc, partials[s * g.nout + o]);
    out[o] = rucuda_finish(acc, g.len, ddof);
  }
}
