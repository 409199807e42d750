// Top-k by radix select: per row, the k smallest sortable keys (rucuda_twiddle: the k
// largest values when the order is descending). One launch per 8-bit digit, most
// significant first, narrows each row's prefix of the k-th key; then one block per row
// gathers the chosen elements in index order.

__device__ __forceinline__ unsigned long long rucuda_high_bits(unsigned long long x, int from)
{
  return from >= 64 ? 0ull : x >> from;
}

// Digit `pass` (0: most significant; it starts from prefix 0 and k) of the keys whose
// higher digits equal the row's prefix so far, counted by `parts` blocks per row into hist[row] (zeroed); the last block
// of each row to finish picks the digit holding the remaining[row]-th key, extends
// prefix[row], lowers remaining[row] by the keys below it, and zeroes hist[row] and
// done[row] for the next digit.
extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS) $ENTRY$_select_pass(
    const rucuda_key_t *__restrict__ keys, long long row_len, unsigned int parts, int pass, long long k,
    unsigned int *hist, unsigned int *done, unsigned long long *prefix, unsigned long long *remaining)
{
  __shared__ unsigned int counts[RUCUDA_RADIX];
  __shared__ unsigned int s_scan[RUCUDA_WARPS];
  __shared__ int s_last;
  for (int i = threadIdx.x; i < RUCUDA_RADIX; i += RUCUDA_THREADS) counts[i] = 0u;
  __syncthreads();
  const unsigned int row = blockIdx.x / parts, part = blockIdx.x - row * parts;
  const int shift = RUCUDA_KEY_BITS - 8 * (pass + 1);
  // The first digit starts from an empty prefix and k (the tables hold nothing yet).
  const unsigned long long pre = pass == 0 ? 0ull : *(volatile unsigned long long *)&prefix[row];
  const unsigned long long want = rucuda_high_bits(pre, shift + 8);
  const long long share = (row_len + parts - 1) / parts;
  const long long begin = (long long)part * share;
  const long long end = begin + share < row_len ? begin + share : row_len;
  const rucuda_key_t *src = keys + (long long)row * row_len;
  for (long long i = begin + threadIdx.x; i < end; i += RUCUDA_THREADS) {
    const rucuda_key_t t = rucuda_twiddle(src[i]);
    if (rucuda_high_bits((unsigned long long)t, shift + 8) == want) atomicAdd(&counts[rucuda_digit(t, shift)], 1u);
  }
  __syncthreads();
  unsigned int *h = hist + (size_t)row * RUCUDA_RADIX;
  for (int i = threadIdx.x; i < RUCUDA_RADIX; i += RUCUDA_THREADS) {
    if (counts[i] != 0u) atomicAdd(&h[i], counts[i]);
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) s_last = atomicAdd(&done[row], 1u) == parts - 1u;
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  const unsigned int d = threadIdx.x;
  const unsigned int c = d < RUCUDA_RADIX ? *(volatile unsigned int *)&h[d] : 0u;
  const unsigned int excl = rucuda_digit_scan(c, s_scan);
  const unsigned long long rem = pass == 0 ? (unsigned long long)k : *(volatile unsigned long long *)&remaining[row];
  if (d < RUCUDA_RADIX) {
    if ((unsigned long long)excl < rem && (unsigned long long)excl + c >= rem) {
      prefix[row] = pre | ((unsigned long long)d << shift);
      remaining[row] = rem - excl;
    }
    h[d] = 0u;
  }
  if (threadIdx.x == 0) done[row] = 0u;
}

// One block per row: the row's k chosen elements in index order (keys below the k-th
// key, then the first remaining[row] keys equal to it), keys to out_keys[row * k ...] and
// their positions in the row to out_pos.
extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS) $ENTRY$_select_gather(
    const rucuda_key_t *__restrict__ keys, long long row_len, long long k,
    const unsigned long long *__restrict__ prefix, const unsigned long long *__restrict__ remaining,
    rucuda_key_t *__restrict__ out_keys, rucuda_value_t *__restrict__ out_pos)
{
  __shared__ unsigned int s_less[RUCUDA_WARPS], s_eq[RUCUDA_WARPS];
  const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned int below = (1u << lane) - 1u;
  const long long row = blockIdx.x;
  const rucuda_key_t *src = keys + row * row_len;
  const rucuda_key_t kth = (rucuda_key_t)prefix[row];
  const long long take_eq = (long long)remaining[row];
  long long base_less = 0, base_eq = 0;
  for (long long tile = 0; tile < row_len; tile += RUCUDA_TILE) {
    unsigned int bl[RUCUDA_ITEMS], be[RUCUDA_ITEMS];
    rucuda_key_t key[RUCUDA_ITEMS];
    unsigned int run_l = 0u, run_e = 0u;
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) {
      const long long i = tile + warp * 32 * RUCUDA_ITEMS + j * 32 + lane;
      key[j] = i < row_len ? src[i] : (rucuda_key_t)0;
      const rucuda_key_t t = rucuda_twiddle(key[j]);
      bl[j] = __ballot_sync(RUCUDA_FULL_MASK, i < row_len && t < kth);
      be[j] = __ballot_sync(RUCUDA_FULL_MASK, i < row_len && t == kth);
      run_l += (unsigned int)__popc((int)bl[j]);
      run_e += (unsigned int)__popc((int)be[j]);
    }
    if (lane == 0u) {
      s_less[warp] = run_l;
      s_eq[warp] = run_e;
    }
    __syncthreads();
    long long wl = base_less, we = base_eq, tl = 0, te = 0;
    for (unsigned int w = 0; w < RUCUDA_WARPS; ++w) {
      if (w < warp) {
        wl += s_less[w];
        we += s_eq[w];
      }
      tl += s_less[w];
      te += s_eq[w];
    }
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) {
      const unsigned int me = 1u << lane;
      const long long eq_rank = we + __popc((int)(be[j] & below));
      const long long less_rank = wl + __popc((int)(bl[j] & below));
      const bool take = (bl[j] & me) || ((be[j] & me) && eq_rank < take_eq);
      const long long at = less_rank + (eq_rank < take_eq ? eq_rank : take_eq);
      if (take && at < k) {
        out_keys[row * k + at] = key[j];
        out_pos[row * k + at] = (rucuda_value_t)(tile + warp * 32 * RUCUDA_ITEMS + j * 32 + lane);
      }
      wl += __popc((int)bl[j]);
      we += __popc((int)be[j]);
    }
    base_less += tl;
    base_eq += te;
    __syncthreads();
  }
}
