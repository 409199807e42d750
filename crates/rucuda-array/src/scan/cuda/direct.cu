// The kernel: one block per tile (see render.rs). `ahead`: how many elements past its own
// index's tile a block asks L2 to prefetch (a multiple of the tile; 0: none).
extern "C" __global__ void __launch_bounds__(RUCUDA_THREADS) $ENTRY$(const rucuda_t *$RESTRICT$rucuda_in, rucuda_t *$RESTRICT$rucuda_out, long long n, unsigned long long *rucuda_scratch, long long ahead)
{
  __shared__ unsigned int rucuda_ticket;
  __shared__ __align__(16) unsigned char rucuda_totals[RUCUDA_TOTALS * sizeof(rucuda_t)];
#if RUCUDA_EARLY
  __shared__ __align__(16) unsigned char rucuda_excl[sizeof(rucuda_t)];
  __shared__ int rucuda_ready;
  if (threadIdx.x == 0) rucuda_ready = 0;
#endif
  if (threadIdx.x == 0) rucuda_ticket = atomicAdd(reinterpret_cast<unsigned int *>(rucuda_scratch), 1u);
  // Warms L2 with the tile a block starting about one block lifetime later will take.
  if (ahead > 0) {
    const long long later = (long long)blockIdx.x * RUCUDA_TILE + ahead;
    if (later + RUCUDA_TILE <= n) rucuda_prefetch_l2(rucuda_in + later, RUCUDA_TILE * sizeof(rucuda_t), RUCUDA_THREADS);
  }
  rucuda_vec x[RUCUDA_V];
  __syncthreads();
  const long long tile = rucuda_ticket;
  const long long base = tile * RUCUDA_TILE;
  const bool full = $VECTORIZED$ && base + RUCUDA_TILE <= n;
#if RUCUDA_EARLY
  if (threadIdx.x < 32u) {
    rucuda_early_look_back(tile, rucuda_scratch + 2, reinterpret_cast<rucuda_t *>(rucuda_excl), &rucuda_ready);
    return;
  }
  rucuda_load_tile(x, rucuda_in, base, n, full);
  rucuda_scan_tile_early(x, tile, rucuda_scratch + 2, reinterpret_cast<rucuda_t *>(rucuda_totals), reinterpret_cast<const rucuda_t *>(rucuda_excl), &rucuda_ready);
#else
  rucuda_load_tile(x, rucuda_in, base, n, full);
  rucuda_scan_tile(x, tile, rucuda_scratch + 2, reinterpret_cast<rucuda_t *>(rucuda_totals));
#endif
  rucuda_store_tile(x, rucuda_out, base, n, full);
}
