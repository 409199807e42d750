// Asks L2 for the `bytes` bytes at `p`, one prefetch per 128-byte line, the `threads`
// threads of the block taking every threads-th line (the scan's and the compaction's
// look-ahead to the tile a later block will take).
__device__ __forceinline__ void rucuda_prefetch_l2(const void *p, unsigned int bytes, unsigned int threads)
{
  const char *rucuda_c = reinterpret_cast<const char *>(p);
  for (unsigned int j = threadIdx.x * 128u; j < bytes; j += threads * 128u)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(rucuda_c + j));
}
