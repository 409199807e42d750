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
  rucuda_scan_vectors(x, agg, lane, warp, totals);
  // The tile's threads only (the look-back warp may still be looking back).
  asm volatile("bar.sync 1, %0;" ::"r"(RUCUDA_BLOCK) : "memory");
  rucuda_t t[RUCUDA_PER_LANE];
  rucuda_t total = rucuda_neutral_value(), before = rucuda_neutral_value();
  bool published = false;
  if (warp == 0u) {
    rucuda_scan_totals(lane, totals, t, total, before);
    if (lane == 0u) {
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
    rucuda_write_runs(lane, t, tile_prefix, tile > 0, before, totals);
  }
  __syncthreads();
  rucuda_finish_vectors(x, agg, tile, lane, warp, totals);
}
