template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_add(rucuda_complex<R> a, rucuda_complex<R> b) { return rucuda_complex<R>(rucuda_add(a.re, b.re), rucuda_add(a.im, b.im)); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_sub(rucuda_complex<R> a, rucuda_complex<R> b) { return rucuda_complex<R>(rucuda_sub(a.re, b.re), rucuda_sub(a.im, b.im)); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_mul(rucuda_complex<R> a, rucuda_complex<R> b) {
  return rucuda_complex<R>(rucuda_sub(rucuda_mul(a.re, b.re), rucuda_mul(a.im, b.im)), rucuda_add(rucuda_mul(a.re, b.im), rucuda_mul(a.im, b.re)));
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_div(rucuda_complex<R> a, rucuda_complex<R> b) {
  const R br = rucuda_abs(b.re), bi = rucuda_abs(b.im);
  if (br >= bi) {
    if (br == (R)0 && bi == (R)0) return rucuda_complex<R>(rucuda_div(a.re, br), rucuda_div(a.im, bi));
    const R rat = rucuda_div(b.im, b.re);
    const R scl = rucuda_div((R)1, rucuda_add(b.re, rucuda_mul(b.im, rat)));
    return rucuda_complex<R>(rucuda_mul(rucuda_add(a.re, rucuda_mul(a.im, rat)), scl), rucuda_mul(rucuda_sub(a.im, rucuda_mul(a.re, rat)), scl));
  }
  const R rat = rucuda_div(b.re, b.im);
  const R scl = rucuda_div((R)1, rucuda_add(b.im, rucuda_mul(b.re, rat)));
  return rucuda_complex<R>(rucuda_mul(rucuda_add(rucuda_mul(a.re, rat), a.im), scl), rucuda_mul(rucuda_sub(rucuda_mul(a.im, rat), a.re), scl));
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_neg(rucuda_complex<R> a) { return rucuda_complex<R>(-a.re, -a.im); }
template <typename R> __device__ __forceinline__ R rucuda_abs(rucuda_complex<R> a) { return rucuda_m_hypot(a.re, a.im); }
template <typename R> __device__ __forceinline__ bool rucuda_eq(rucuda_complex<R> a, rucuda_complex<R> b) { return a.re == b.re && a.im == b.im; }
template <typename R> __device__ __forceinline__ bool rucuda_ne(rucuda_complex<R> a, rucuda_complex<R> b) { return !(a.re == b.re && a.im == b.im); }
template <typename R> __device__ __forceinline__ bool rucuda_lt(rucuda_complex<R> a, rucuda_complex<R> b) { return (a.re < b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im < b.im); }
template <typename R> __device__ __forceinline__ bool rucuda_le(rucuda_complex<R> a, rucuda_complex<R> b) { return (a.re < b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im <= b.im); }
template <typename R> __device__ __forceinline__ bool rucuda_gt(rucuda_complex<R> a, rucuda_complex<R> b) { return (a.re > b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im > b.im); }
template <typename R> __device__ __forceinline__ bool rucuda_ge(rucuda_complex<R> a, rucuda_complex<R> b) { return (a.re > b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im >= b.im); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_maximum(rucuda_complex<R> a, rucuda_complex<R> b) { return (rucuda_ge(a, b) || a.re != a.re || a.im != a.im) ? a : b; }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_minimum(rucuda_complex<R> a, rucuda_complex<R> b) { return (rucuda_le(a, b) || a.re != a.re || a.im != a.im) ? a : b; }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_exp(rucuda_complex<R> z) {
  const R e = rucuda_m_exp(z.re);
  if (z.im == (R)0) return rucuda_complex<R>(e, z.im);
  return rucuda_complex<R>(rucuda_mul(e, rucuda_m_cos(z.im)), rucuda_mul(e, rucuda_m_sin(z.im)));
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_log(rucuda_complex<R> z) { return rucuda_complex<R>(rucuda_m_log(rucuda_m_hypot(z.re, z.im)), rucuda_m_atan2(z.im, z.re)); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_log10(rucuda_complex<R> z) {
  const rucuda_complex<R> l = rucuda_m_log(z);
  const R k = (R)0.43429448190325182765112891891660508;
  return rucuda_complex<R>(rucuda_mul(l.re, k), rucuda_mul(l.im, k));
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_sqrt(rucuda_complex<R> z) {
  if (z.re == (R)0 && z.im == (R)0) return rucuda_complex<R>((R)0, z.im);
  const R t = rucuda_m_sqrt(rucuda_mul(rucuda_add(rucuda_abs(z.re), rucuda_m_hypot(z.re, z.im)), (R)0.5));
  if (z.re >= (R)0) return rucuda_complex<R>(t, rucuda_div(z.im, rucuda_mul((R)2, t)));
  return rucuda_complex<R>(rucuda_div(rucuda_abs(z.im), rucuda_mul((R)2, t)), rucuda_copysign(t, z.im));
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_sin(rucuda_complex<R> z) { return rucuda_complex<R>(rucuda_mul(rucuda_m_sin(z.re), rucuda_m_cosh(z.im)), rucuda_mul(rucuda_m_cos(z.re), rucuda_m_sinh(z.im))); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_cos(rucuda_complex<R> z) { return rucuda_complex<R>(rucuda_mul(rucuda_m_cos(z.re), rucuda_m_cosh(z.im)), -rucuda_mul(rucuda_m_sin(z.re), rucuda_m_sinh(z.im))); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_sinh(rucuda_complex<R> z) { return rucuda_complex<R>(rucuda_mul(rucuda_m_sinh(z.re), rucuda_m_cos(z.im)), rucuda_mul(rucuda_m_cosh(z.re), rucuda_m_sin(z.im))); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_cosh(rucuda_complex<R> z) { return rucuda_complex<R>(rucuda_mul(rucuda_m_cosh(z.re), rucuda_m_cos(z.im)), rucuda_mul(rucuda_m_sinh(z.re), rucuda_m_sin(z.im))); }
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_tanh(rucuda_complex<R> z) {
  // Kahan's formula: no cancellation near the poles at i*pi/2.
  if (rucuda_abs(z.re) > (R)20) {
    const R e = rucuda_m_exp(rucuda_mul((R)-2, rucuda_abs(z.re)));
    return rucuda_complex<R>(rucuda_copysign((R)1, z.re), rucuda_mul(rucuda_mul((R)4, e), rucuda_mul(rucuda_m_sin(z.im), rucuda_m_cos(z.im))));
  }
  const R t = rucuda_m_tan(z.im);
  const R beta = rucuda_add((R)1, rucuda_mul(t, t));
  const R sh = rucuda_m_sinh(z.re);
  const R rho = rucuda_m_sqrt(rucuda_add((R)1, rucuda_mul(sh, sh)));
  const R den = rucuda_add((R)1, rucuda_mul(beta, rucuda_mul(sh, sh)));
  return rucuda_complex<R>(rucuda_div(rucuda_mul(rucuda_mul(beta, rho), sh), den), rucuda_div(t, den));
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_m_tan(rucuda_complex<R> z) {
  const rucuda_complex<R> t = rucuda_m_tanh(rucuda_complex<R>(-z.im, z.re));
  return rucuda_complex<R>(t.im, -t.re);
}
template <typename R> __device__ __forceinline__ rucuda_complex<R> rucuda_pow(rucuda_complex<R> a, rucuda_complex<R> b) {
  typedef rucuda_complex<R> C;
  if (b.re == (R)0 && b.im == (R)0) return C((R)1, (R)0);
  if (a.re == (R)0 && a.im == (R)0) {
    if (b.re > (R)0 && b.im == (R)0) return C((R)0, (R)0);
    return C(rucuda_qnan((R)0), rucuda_qnan((R)0));
  }
  if (b.im == (R)0 && b.re == rucuda_floor_(b.re) && rucuda_abs(b.re) <= (R)100) {
    int n = (int)b.re;
    unsigned int e = n < 0 ? (unsigned int)(-n) : (unsigned int)n;
    C r((R)1, (R)0), x = a;
    while (e) { if (e & 1u) r = rucuda_mul(r, x); x = rucuda_mul(x, x); e >>= 1; }
    return n < 0 ? rucuda_div(C((R)1, (R)0), r) : r;
  }
  const C t = rucuda_mul(b, rucuda_m_log(a));
  const R e = rucuda_m_exp(t.re);
  return C(rucuda_mul(e, rucuda_m_cos(t.im)), rucuda_mul(e, rucuda_m_sin(t.im)));
}
