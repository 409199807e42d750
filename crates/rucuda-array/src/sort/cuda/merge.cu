// A stable merge sort of each row by a user comparison (the fallback for orders a radix
// key cannot express): pass p merges the sorted runs of 2^p elements pairwise, each
// element finding its place by a binary search in the other run (elements of the left
// run go before equal elements of the right one). Template text: rucuda-array's renderer
// fills each dollar-delimited slot.
$PRELUDE$
typedef $T$ rucuda_t;
__device__ __forceinline__ bool rucuda_less(const rucuda_t &a, const rucuda_t &b)
{
  return ($LESS$);
}

// in/out: rows of `len` elements; pos_in/pos_out: the elements' positions in their row
// (pos_in null: the first pass, positions are the indices).
extern "C" __global__ void __launch_bounds__(256) $ENTRY$(
    const rucuda_t *__restrict__ in, rucuda_t *__restrict__ out, const long long *__restrict__ pos_in,
    long long *__restrict__ pos_out, long long total, long long len, long long width)
{
  for (long long g = (long long)blockIdx.x * 256 + threadIdx.x; g < total; g += (long long)gridDim.x * 256) {
    const long long r = g / len, i = g - r * len;
    const rucuda_t *row = in + r * len;
    const long long pair = i / (2 * width) * (2 * width);
    const long long a_end = pair + width < len ? pair + width : len;
    const long long b_end = pair + 2 * width < len ? pair + 2 * width : len;
    const rucuda_t x = row[i];
    long long at;
    if (i < a_end) {
      // Right-run elements strictly below x come first.
      long long lo = a_end, hi = b_end;
      while (lo < hi) {
        const long long mid = lo + ((hi - lo) >> 1);
        if (rucuda_less(row[mid], x)) lo = mid + 1; else hi = mid;
      }
      at = pair + (i - pair) + (lo - a_end);
    } else {
      // Left-run elements not above x come first.
      long long lo = pair, hi = a_end;
      while (lo < hi) {
        const long long mid = lo + ((hi - lo) >> 1);
        if (!rucuda_less(x, row[mid])) lo = mid + 1; else hi = mid;
      }
      at = pair + (i - a_end) + (lo - pair);
    }
    if (at < pair || at >= b_end) continue;
    out[r * len + at] = x;
    pos_out[r * len + at] = pos_in != 0 ? pos_in[g] : i;
  }
}
