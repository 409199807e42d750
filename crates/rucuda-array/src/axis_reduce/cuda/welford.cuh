// var/std: count, mean and sum of squared deviations, in double; two partial results
// merge with Chan et al.'s formula (an element is a partial result of count 1).
struct rucuda_moments {
  double n, mean, m2;
};
__device__ __forceinline__ rucuda_moments rucuda_make_moments(double n, double mean, double m2)
{
  rucuda_moments r;
  r.n = n;
  r.mean = mean;
  r.m2 = m2;
  return r;
}
__device__ __forceinline__ rucuda_moments rucuda_merge_moments(const rucuda_moments &a, const rucuda_moments &b)
{
  if (a.n == 0.0) return b;
  if (b.n == 0.0) return a;
  const double n = a.n + b.n;
  const double delta = b.mean - a.mean;
  const double f = b.n / n;
  return rucuda_make_moments(n, a.mean + delta * f, a.m2 + b.m2 + delta * delta * a.n * f);
}
// NumPy's var: m2 / max(n - ddof, 0) (0/0 gives NaN, x/0 infinity).
__device__ __forceinline__ double rucuda_variance(const rucuda_moments &a, double ddof)
{
  const double d = a.n - ddof;
  return a.m2 / (d > 0.0 ? d : 0.0);
}
