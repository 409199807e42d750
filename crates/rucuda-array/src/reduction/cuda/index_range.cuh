struct rucuda_range { long long lo, hi; };
__device__ __forceinline__ rucuda_range rucuda_make_range(long long lo, long long hi)
{ rucuda_range r; r.lo = lo; r.hi = hi; return r; }
