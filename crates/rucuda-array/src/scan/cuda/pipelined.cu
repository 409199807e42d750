// The persistent, prefetching kernel (see render.rs).
// Copies a full tile into `stage` (shared) without waiting: each thread its own V vectors,
// where it will read them back (cp.async, sm_80 and later; plain copies before).
__device__ __forceinline__ void rucuda_prefetch_tile(uint4 *stage, const rucuda_t *rucuda_in, long long base)
{
  const uint4 *rucuda_src = reinterpret_cast<const uint4 *>(rucuda_in + base);
#pragma unroll
  for (int c = 0; c < RUCUDA_V; ++c) {
    const unsigned int i = c * RUCUDA_BLOCK + threadIdx.x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"((unsigned int)__cvta_generic_to_shared(stage + i)), "l"(rucuda_src + i) : "memory");
#else
    stage[i] = rucuda_src[i];
#endif
  }
}
__device__ __forceinline__ void rucuda_prefetch_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits for every prefetch but the last committed one.
__device__ __forceinline__ void rucuda_prefetch_wait_previous()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
#endif
}
// Persistent blocks: each takes tiles from the counter until none is left, and takes (and
// starts loading) its next tile before scanning the current one, so that its loads are in
// flight while it waits for its predecessors.
extern "C" __global__ void __launch_bounds__(RUCUDA_BLOCK) $ENTRY$(const rucuda_t *$RESTRICT$rucuda_in, rucuda_t *$RESTRICT$rucuda_out, long long n, unsigned long long *rucuda_scratch)
{
  extern __shared__ uint4 rucuda_stage[];
  __shared__ unsigned int rucuda_ticket[2];
  __shared__ __align__(16) unsigned char rucuda_totals[RUCUDA_TOTALS * sizeof(rucuda_t)];
  unsigned int *rucuda_counter = reinterpret_cast<unsigned int *>(rucuda_scratch);
  const long long tiles = (n + RUCUDA_TILE - 1) / RUCUDA_TILE;
  const long long full_tiles = $VECTORIZED$ ? n / RUCUDA_TILE : 0;
  if (threadIdx.x == 0) rucuda_ticket[0] = atomicAdd(rucuda_counter, 1u);
  __syncthreads();
  long long tile = rucuda_ticket[0];
  unsigned int buf = 0u;
  if (tile < full_tiles) rucuda_prefetch_tile(rucuda_stage, rucuda_in, tile * RUCUDA_TILE);
  rucuda_prefetch_commit();
  while (tile < tiles) {
    if (threadIdx.x == 0) rucuda_ticket[buf ^ 1u] = atomicAdd(rucuda_counter, 1u);
    __syncthreads();
    const long long next = rucuda_ticket[buf ^ 1u];
    if (next < full_tiles) rucuda_prefetch_tile(rucuda_stage + (buf ^ 1u) * (RUCUDA_V * RUCUDA_BLOCK), rucuda_in, next * RUCUDA_TILE);
    rucuda_prefetch_commit();
    const long long base = tile * RUCUDA_TILE;
    const bool full = tile < full_tiles;
    rucuda_vec x[RUCUDA_V];
    if (full) {
      rucuda_prefetch_wait_previous();
      const uint4 *rucuda_mine = rucuda_stage + buf * (RUCUDA_V * RUCUDA_BLOCK);
#pragma unroll
      for (int c = 0; c < RUCUDA_V; ++c) x[c].raw = rucuda_mine[c * RUCUDA_BLOCK + threadIdx.x];
    } else {
      rucuda_load_tile(x, rucuda_in, base, n, false);
    }
    rucuda_scan_tile(x, tile, rucuda_scratch + 2, reinterpret_cast<rucuda_t *>(rucuda_totals));
    rucuda_store_tile(x, rucuda_out, base, n, full);
    tile = next;
    buf ^= 1u;
  }
}
