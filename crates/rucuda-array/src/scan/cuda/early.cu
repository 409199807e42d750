// The look-back warp of a tile (ScanTuning::early_look_back): included after tile.cu only
// when the kernel has one (RUCUDA_EARLY 1).
// The look-back warp's part: the exclusive prefix of `tile` into *excl, then *ready, while
// the tile's threads load; then the block's two barriers of rucuda_scan_tile_early.
__device__ __forceinline__ void rucuda_early_look_back(long long tile, const unsigned long long *rucuda_status, rucuda_t *excl, volatile int *ready)
{
  if (tile > 0) {
    const rucuda_t e = rucuda_look_back(rucuda_status, tile);
    if ((threadIdx.x & 31u) == 0u) {
      *excl = e;
      __threadfence_block();
      *ready = 1;
    }
  }
  __syncthreads();
  __syncthreads();
}
// rucuda_scan_tile for the tile's threads when a look-back warp runs beside them: the
// tile's status gets its inclusive prefix at once when the look-back has ended by the
// time the aggregate is known, else the aggregate, then the prefix after the barrier.
__device__ __forceinline__ void rucuda_scan_tile_early(rucuda_vec (&x)[RUCUDA_V], long long tile, unsigned long long *rucuda_status, rucuda_t *totals, const rucuda_t *excl, const volatile int *ready)
{
  const unsigned int lane = RUCUDA_TID & 31u, warp = RUCUDA_TID >> 5;
  rucuda_t agg[RUCUDA_V];
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
  // The tile's threads only (the look-back warp may still be looking back).
  asm volatile("bar.sync 1, %0;" ::"r"(RUCUDA_BLOCK) : "memory");
  rucuda_t t[RUCUDA_PER_LANE];
  rucuda_t total = rucuda_neutral_value(), before = rucuda_neutral_value();
  bool published = false;
  if (warp == 0u) {
#pragma unroll
    for (int p = 0; p < RUCUDA_PER_LANE; ++p) {
      const unsigned int i = lane * RUCUDA_PER_LANE + p;
      t[p] = i < RUCUDA_TOTALS ? totals[i] : rucuda_neutral_value();
    }
    rucuda_t incl = t[0];
#pragma unroll
    for (int p = 1; p < RUCUDA_PER_LANE; ++p) incl = rucuda_scan_op(incl, t[p]);
#pragma unroll
    for (unsigned int o = 1; o < 32u; o <<= 1) {
      const rucuda_t earlier = rucuda_shfl_up(incl, o);
      if (lane >= o) incl = rucuda_scan_op(earlier, incl);
    }
    total = rucuda_shfl_idx(incl, 31u);
    before = rucuda_shfl_up(incl, 1u);
    if (lane == 0u) {
      before = rucuda_neutral_value();
      if (tile == 0) {
        rucuda_status_store(rucuda_status, tile, RUCUDA_STATUS_PREFIX, total);
        published = true;
      } else if (*ready) {
        __threadfence_block();
        rucuda_status_store(rucuda_status, tile, RUCUDA_STATUS_PREFIX, rucuda_scan_op(*excl, total));
        published = true;
      } else {
        rucuda_status_store(rucuda_status, tile, RUCUDA_STATUS_AGGREGATE, total);
      }
    }
  }
  __syncthreads();
  if (warp == 0u) {
    const rucuda_t tile_prefix = tile > 0 ? *excl : rucuda_neutral_value();
    if (lane == 0u && !published) rucuda_status_store(rucuda_status, tile, RUCUDA_STATUS_PREFIX, rucuda_scan_op(tile_prefix, total));
    rucuda_t run = rucuda_scan_op(tile_prefix, before);
#pragma unroll
    for (int p = 0; p < RUCUDA_PER_LANE; ++p) {
      const unsigned int i = lane * RUCUDA_PER_LANE + p;
      if (i < RUCUDA_TOTALS) totals[i] = run;
      run = rucuda_scan_op(run, t[p]);
    }
  }
  __syncthreads();
#pragma unroll
  for (int c = 0; c < RUCUDA_V; ++c) {
    const bool p_has = true;
    const rucuda_t p = rucuda_scan_op(totals[c * RUCUDA_WARPS + warp], agg[c]);
    (void)p_has;
$FINISH$
  }
}
