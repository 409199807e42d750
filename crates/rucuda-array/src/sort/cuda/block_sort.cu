// Rows of at most RUCUDA_TILE elements, one block per row: the row in registers (warp-
// striped, padded with all-ones keys that sort after every element), then for every
// digit: rank in shared memory, exchange through shared memory back into the striped
// arrangement, so that after the last digit item j of lane l in warp w is element
// w * 32 * ITEMS + j * 32 + l of the sorted row. gen_index: the values are the
// elements' positions in the row (argsort) rather than read.
extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS) $ENTRY$_block(
    const rucuda_key_t *__restrict__ keys_in, rucuda_key_t *__restrict__ keys_out,
    const rucuda_value_t *__restrict__ values_in, rucuda_value_t *__restrict__ values_out,
    long long seg_len, int gen_index)
{
  __shared__ unsigned int s_hist[RUCUDA_WARPS * RUCUDA_RADIX];
  __shared__ unsigned int s_scan[RUCUDA_WARPS];
  __shared__ __align__(16) unsigned char s_exchange[RUCUDA_TILE * RUCUDA_EXCHANGE_BYTES];
  (void)values_in;
  (void)values_out;
  (void)gen_index;
  rucuda_key_t *s_keys = reinterpret_cast<rucuda_key_t *>(s_exchange);
  const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned int wbase = warp * 32u * RUCUDA_ITEMS;
  const unsigned int count = (unsigned int)seg_len;
  const long long row = (long long)blockIdx.x + (long long)blockIdx.y * gridDim.x;
  const long long start = row * seg_len;
  rucuda_key_t key[RUCUDA_ITEMS];
  unsigned int digit[RUCUDA_ITEMS], pos[RUCUDA_ITEMS];
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) {
    const unsigned int i = wbase + j * 32 + lane;
    key[j] = i < count ? rucuda_twiddle(keys_in[start + i]) : RUCUDA_ALL_ONES;
  }
#if RUCUDA_VALUES
  rucuda_value_t value[RUCUDA_ITEMS];
  rucuda_value_t *s_values = reinterpret_cast<rucuda_value_t *>(s_exchange);
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) {
    const unsigned int i = wbase + j * 32 + lane;
    value[j] = gen_index ? (rucuda_value_t)i : (i < count ? values_in[start + i] : (rucuda_value_t)0);
  }
#endif
#pragma unroll 1
  for (int pass = 0; pass < RUCUDA_PASSES; ++pass) {
    for (int i = threadIdx.x; i < RUCUDA_WARPS * RUCUDA_RADIX; i += RUCUDA_THREADS) s_hist[i] = 0u;
    __syncthreads();
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) digit[j] = rucuda_digit(key[j], 8 * pass);
    rucuda_rank_warp(digit, pos, s_hist);
    __syncthreads();
    const unsigned int tile_count = rucuda_warp_prefixes(s_hist);
    const unsigned int excl = rucuda_digit_scan(tile_count, s_scan);
    rucuda_add_digit_prefix(s_hist, excl);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) {
      pos[j] += s_hist[warp * RUCUDA_RADIX + digit[j]];
      s_keys[pos[j]] = key[j];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) key[j] = s_keys[wbase + j * 32 + lane];
#if RUCUDA_VALUES
    __syncthreads();
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) s_values[pos[j]] = value[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < RUCUDA_ITEMS; ++j) value[j] = s_values[wbase + j * 32 + lane];
#endif
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) {
    const unsigned int i = wbase + j * 32 + lane;
    if (i < count) {
      keys_out[start + i] = rucuda_untwiddle(key[j]);
#if RUCUDA_VALUES
      values_out[start + i] = value[j];
#endif
    }
  }
}
