struct rucuda_argpair {
  $T$ v;
  long long i;
  __device__ operator long long() const { return i; }
};
__device__ __forceinline__ rucuda_argpair rucuda_make_argpair($T$ v, long long i)
{
  rucuda_argpair p;
  p.v = v;
  p.i = i;
  return p;
}
__device__ __forceinline__ rucuda_argpair rucuda_argbest(rucuda_argpair a, rucuda_argpair b)
{
  const bool an = a.v != a.v, bn = b.v != b.v;
  if (an || bn) {
    if (an && bn) return a.i <= b.i ? a : b;
    return an ? a : b;
  }
  if (a.v $CMP$ b.v) return a;
  if (b.v $CMP$ a.v) return b;
  return a.i <= b.i ? a : b;
}
