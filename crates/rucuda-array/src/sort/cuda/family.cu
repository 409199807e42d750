// Searches and runs over keys in the sort order (rucuda_twiddle, -0.0 and +0.0 alike): searchsorted, and the
// run heads, scatters and counts behind unique and run-length encoding.
// NumPy compares values here, not bits: -0.0 and +0.0 are one value (NaNs stay alike).
__device__ __forceinline__ rucuda_key_t rucuda_value_key(rucuda_key_t b)
{
#if RUCUDA_KEY_KIND == 2
  if (b == RUCUDA_SIGN) b = (rucuda_key_t)0;
#endif
  return rucuda_twiddle(b);
}
#define RUCUDA_GRID_STRIDE(i, n) \
  for (long long i = (long long)blockIdx.x * RUCUDA_THREADS + threadIdx.x; i < (n); i += (long long)gridDim.x * RUCUDA_THREADS)

// out[q] = the first position in sorted[0..n) whose key is not below (left) or above
// (right) queries[q]'s, in the sort order (NaNs last).
extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS) $ENTRY$_searchsorted(
    const rucuda_key_t *__restrict__ sorted, long long n, const rucuda_key_t *__restrict__ queries,
    long long m, long long *__restrict__ out, int right)
{
  RUCUDA_GRID_STRIDE(q, m) {
    const rucuda_key_t t = rucuda_value_key(queries[q]);
    long long lo = 0, hi = n;
    while (lo < hi) {
      const long long mid = lo + ((hi - lo) >> 1);
      const rucuda_key_t s = rucuda_value_key(__ldg(sorted + mid));
      if (right ? s <= t : s < t) lo = mid + 1; else hi = mid;
    }
    out[q] = lo;
  }
}

// head[i] = 1 where element i starts a run of equal keys (every NaN alike), else 0.
extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS) $ENTRY$_run_heads(
    const rucuda_key_t *__restrict__ keys, long long n, long long *__restrict__ head)
{
  RUCUDA_GRID_STRIDE(i, n) {
    head[i] = (i == 0 || rucuda_value_key(keys[i]) != rucuda_value_key(keys[i - 1])) ? 1 : 0;
  }
}

// With run[i] = the inclusive count of heads up to i (run number + 1): each head writes
// its key to values[run], its position to starts[run] and, given `perm` (the sort's
// positions; null for runs of the data itself), first[run] = perm[i]; with `inverse`,
// inverse[perm[i]] = run for every element.
extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS) $ENTRY$_run_scatter(
    const rucuda_key_t *__restrict__ keys, long long n, const long long *__restrict__ run,
    const long long *__restrict__ perm, long long runs, rucuda_key_t *__restrict__ values,
    long long *__restrict__ starts, long long *__restrict__ first, long long *__restrict__ inverse)
{
  RUCUDA_GRID_STRIDE(i, n) {
    const long long r = run[i] - 1;
    if (r < 0 || r >= runs) continue;
    const bool is_head = i == 0 || run[i - 1] != run[i];
    if (is_head) {
      values[r] = keys[i];
      starts[r] = i;
      if (first != 0) first[r] = perm[i];
    }
    if (inverse != 0 && perm[i] >= 0 && perm[i] < n) inverse[perm[i]] = r;
  }
}

// counts[r] = starts[r + 1] - starts[r] (the last run ends at n).
extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS) $ENTRY$_run_counts(
    const long long *__restrict__ starts, long long runs, long long n, long long *__restrict__ counts)
{
  RUCUDA_GRID_STRIDE(r, runs) {
    counts[r] = (r + 1 < runs ? starts[r + 1] : n) - starts[r];
  }
}
