// Index normalization of rucuda-array's axis gathers and scatters (take_axis, put_axis,
// multi_take_put): every mode maps every index into 0..len-1, so no access leaves the
// array. `raise` records the first offending index in err[1] (err[0] is the flag, zeroed
// before the launch) and reads element 0 instead; the host reports it after the kernel.
__device__ __forceinline__ long long rucuda_index_u64(unsigned long long v)
{
  return v > 9223372036854775807ull ? 9223372036854775807ll : (long long)v;
}
__device__ __forceinline__ long long rucuda_axis_raise(long long v, long long len, unsigned long long *err)
{
  long long j = v < 0 ? v + len : v;
  if (j < 0 || j >= len) {
    if (atomicCAS(err, 0ull, 1ull) == 0ull) err[1] = (unsigned long long)v;
    j = 0;
  }
  return j;
}
__device__ __forceinline__ long long rucuda_axis_wrap(long long v, long long len)
{
  long long j = v % len;
  return j < 0 ? j + len : j;
}
__device__ __forceinline__ long long rucuda_axis_clip(long long v, long long len)
{
  return v < 0 ? 0 : (v >= len ? len - 1 : v);
}
