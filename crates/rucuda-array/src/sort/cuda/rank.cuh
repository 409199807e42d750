// Ranking a tile of RUCUDA_TILE items by one digit, stably. Items are warp-striped: item
// j of lane l in warp w is element w * 32 * ITEMS + j * 32 + l of the tile, so the order
// (warp, j, lane) is the elements' order.
//
// Each warp ranks its items with rucuda_peers (the lanes holding the same digit learn
// each other; the highest of them bumps the warp's counter for the digit in shared
// memory), so `rank[j]` is the counter's value before the call plus the item's
// position among its warp's items of its digit: with counters zeroed, the rank within
// the warp (the one-block sort); with counters set to the warp's first position of each
// digit in the tile, the item's position in the sorted tile (onesweep, after its early
// counts). Every digit is below RUCUDA_RADIX: a partial tile pads with all-ones keys
// (digit 255 in every pass), which come after every element and so rank last.
// The lanes of this warp whose digit equals `d` (below RUCUDA_RADIX). RUCUDA_PEER_MATCH
// 0: the hardware's __match_any_sync; 1: one ballot per bit of the digit, the lanes
// agreeing on every bit kept (the way CUB's onesweep finds peers: __match_any_sync is a
// slow instruction on some GPUs). The bench's sort_tune cases compare them.
__device__ __forceinline__ unsigned int rucuda_peers(unsigned int d)
{
#if RUCUDA_PEER_MATCH == 1
  unsigned int peers = RUCUDA_FULL_MASK;
#pragma unroll
  for (int b = 0; b < 8; ++b) {
    // Written in PTX so that each bit costs a test, a vote and a conditional not: the
    // C++ form (`set ? ones : ~ones`) compiled to twice the instructions (sm_90 SASS,
    // NVRTC 13.0).
    unsigned int agree;
    asm("{\n"
        "  .reg .pred p;\n"
        "  .reg .b32 t;\n"
        "  and.b32 t, %1, %2;\n"
        "  setp.ne.u32 p, t, 0;\n"
        "  vote.sync.ballot.b32 %0, p, 0xffffffff;\n"
        "  @!p not.b32 %0, %0;\n"
        "}"
        : "=r"(agree)
        : "r"(d), "r"(1u << b));
    peers &= agree;
  }
  return peers;
#else
  return __match_any_sync(RUCUDA_FULL_MASK, d);
#endif
}
__device__ __forceinline__ void rucuda_rank_warp(const unsigned int (&digit)[RUCUDA_ITEMS], unsigned int (&rank)[RUCUDA_ITEMS], unsigned int *hist)
{
  const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned int below = (1u << lane) - 1u;
  unsigned int *h = hist + warp * RUCUDA_RADIX;
#pragma unroll
  for (int j = 0; j < RUCUDA_ITEMS; ++j) {
    const unsigned int d = digit[j];
    const unsigned int peers = rucuda_peers(d);
    const unsigned int leader = 31u - (unsigned int)__clz((int)peers);
    unsigned int before = 0u;
    if (lane == leader) {
      before = h[d];
      h[d] = before + (unsigned int)__popc((int)peers);
    }
    before = __shfl_sync(RUCUDA_FULL_MASK, before, (int)leader);
    rank[j] = before + (unsigned int)__popc((int)(peers & below));
    __syncwarp();
  }
}
// Thread d < 256 (after a __syncthreads following rucuda_rank_warp): turns the warps'
// counters of digit d into each warp's exclusive prefix among the tile's items of that
// digit; returns the tile's count of digit d (0 for other threads).
__device__ __forceinline__ unsigned int rucuda_warp_prefixes(unsigned int *hist)
{
  unsigned int running = 0u;
  if (threadIdx.x < RUCUDA_RADIX) {
#pragma unroll
    for (int w = 0; w < RUCUDA_WARPS; ++w) {
      const unsigned int c = hist[w * RUCUDA_RADIX + threadIdx.x];
      hist[w * RUCUDA_RADIX + threadIdx.x] = running;
      running += c;
    }
  }
  return running;
}
// Block-wide exclusive scan of one count per thread (threads 0..255: the digits' counts;
// others pass 0). Every thread calls it; `tmp` holds RUCUDA_WARPS words of shared memory.
__device__ __forceinline__ unsigned int rucuda_digit_scan(unsigned int count, unsigned int *tmp)
{
  const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  unsigned int incl = count;
#pragma unroll
  for (unsigned int o = 1; o < 32u; o <<= 1) {
    const unsigned int v = __shfl_up_sync(RUCUDA_FULL_MASK, incl, o);
    if (lane >= o) incl += v;
  }
  if (lane == 31u) tmp[warp] = incl;
  __syncthreads();
  unsigned int base = 0u;
  for (unsigned int w = 0; w < warp; ++w) base += tmp[w];
  return base + incl - count;
}
// Thread d < 256: adds the digit's tile prefix to every warp's prefix of digit d.
__device__ __forceinline__ void rucuda_add_digit_prefix(unsigned int *hist, unsigned int excl)
{
  if (threadIdx.x < RUCUDA_RADIX) {
#pragma unroll
    for (int w = 0; w < RUCUDA_WARPS; ++w) hist[w * RUCUDA_RADIX + threadIdx.x] += excl;
  }
}
