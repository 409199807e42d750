// rucuda-array's operation helpers: NumPy semantics, no FMA contraction.
template <int S> struct rucuda_uint_of { typedef unsigned int type; };
template <> struct rucuda_uint_of<8> { typedef unsigned long long type; };
template <typename T> struct rucuda_is_signed { static const bool value = (T)-1 < (T)0; };
template <typename T, bool S = rucuda_is_signed<T>::value> struct rucuda_int {
  typedef typename rucuda_uint_of<sizeof(T)>::type U;
  static __device__ __forceinline__ T abs(T a) { return a; }
  static __device__ __forceinline__ T floor_div(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); }
  static __device__ __forceinline__ T rem(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }
  static __device__ __forceinline__ T pow(T a, T b) {
    U r = 1, x = (U)a, e = (U)b;
    while (e) { if (e & 1u) r *= x; x *= x; e >>= 1; }
    return (T)r;
  }
};
template <typename T> struct rucuda_int<T, true> {
  typedef typename rucuda_uint_of<sizeof(T)>::type U;
  static __device__ __forceinline__ T abs(T a) { return a < (T)0 ? (T)(U)((U)0 - (U)a) : a; }
  static __device__ __forceinline__ T floor_div(T a, T b) {
    if (b == 0) return (T)0;
    if (b == (T)-1) return (T)(U)((U)0 - (U)a);
    T q = (T)(a / b);
    if ((T)(a % b) != 0 && ((a < 0) != (b < 0))) q = (T)(q - 1);
    return q;
  }
  static __device__ __forceinline__ T rem(T a, T b) {
    if (b == 0 || b == (T)-1) return (T)0;
    T r = (T)(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);
    return r;
  }
  static __device__ __forceinline__ T pow(T a, T b) {
    if (b < 0) { if (a == 1) return (T)1; if (a == (T)-1) return (b & 1) ? (T)-1 : (T)1; return (T)0; }
    U r = 1, x = (U)a, e = (U)b;
    while (e) { if (e & 1u) r *= x; x *= x; e >>= 1; }
    return (T)r;
  }
};
template <typename T> __device__ __forceinline__ T rucuda_add(T a, T b) { typedef typename rucuda_uint_of<sizeof(T)>::type U; return (T)(U)((U)a + (U)b); }
template <typename T> __device__ __forceinline__ T rucuda_sub(T a, T b) { typedef typename rucuda_uint_of<sizeof(T)>::type U; return (T)(U)((U)a - (U)b); }
template <typename T> __device__ __forceinline__ T rucuda_mul(T a, T b) { typedef typename rucuda_uint_of<sizeof(T)>::type U; return (T)(U)((U)a * (U)b); }
template <typename T> __device__ __forceinline__ T rucuda_neg(T a) { typedef typename rucuda_uint_of<sizeof(T)>::type U; return (T)(U)((U)0 - (U)a); }
template <typename T> __device__ __forceinline__ T rucuda_abs(T a) { return rucuda_int<T>::abs(a); }
template <typename T> __device__ __forceinline__ T rucuda_floor_div(T a, T b) { return rucuda_int<T>::floor_div(a, b); }
template <typename T> __device__ __forceinline__ T rucuda_remainder(T a, T b) { return rucuda_int<T>::rem(a, b); }
template <typename T> __device__ __forceinline__ T rucuda_pow(T a, T b) { return rucuda_int<T>::pow(a, b); }
template <typename T> __device__ __forceinline__ T rucuda_bitand(T a, T b) { return (T)(a & b); }
template <typename T> __device__ __forceinline__ T rucuda_bitor(T a, T b) { return (T)(a | b); }
template <typename T> __device__ __forceinline__ T rucuda_bitxor(T a, T b) { return (T)(a ^ b); }
template <typename T> __device__ __forceinline__ T rucuda_bitnot(T a) { return (T)~a; }
__device__ __forceinline__ bool rucuda_bitnot(bool a) { return !a; }
template <typename T> __device__ __forceinline__ T rucuda_select(bool c, T a, T b) { return c ? a : b; }
template <typename T> __device__ __forceinline__ T rucuda_maximum(T a, T b) { return a >= b ? a : b; }
template <typename T> __device__ __forceinline__ T rucuda_minimum(T a, T b) { return a <= b ? a : b; }
template <typename T> __device__ __forceinline__ bool rucuda_eq(T a, T b) { return a == b; }
template <typename T> __device__ __forceinline__ bool rucuda_ne(T a, T b) { return a != b; }
template <typename T> __device__ __forceinline__ bool rucuda_lt(T a, T b) { return a < b; }
template <typename T> __device__ __forceinline__ bool rucuda_le(T a, T b) { return a <= b; }
template <typename T> __device__ __forceinline__ bool rucuda_gt(T a, T b) { return a > b; }
template <typename T> __device__ __forceinline__ bool rucuda_ge(T a, T b) { return a >= b; }
__device__ __forceinline__ float rucuda_add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double rucuda_add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float rucuda_sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double rucuda_sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float rucuda_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double rucuda_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float rucuda_div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double rucuda_div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float rucuda_neg(float a) { return -a; }
__device__ __forceinline__ double rucuda_neg(double a) { return -a; }
__device__ __forceinline__ float rucuda_abs(float a) { return fabsf(a); }
__device__ __forceinline__ double rucuda_abs(double a) { return fabs(a); }
__device__ __forceinline__ float rucuda_maximum(float a, float b) { return (a >= b || a != a) ? a : b; }
__device__ __forceinline__ double rucuda_maximum(double a, double b) { return (a >= b || a != a) ? a : b; }
__device__ __forceinline__ float rucuda_minimum(float a, float b) { return (a <= b || a != a) ? a : b; }
__device__ __forceinline__ double rucuda_minimum(double a, double b) { return (a <= b || a != a) ? a : b; }
__device__ __forceinline__ float rucuda_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double rucuda_pow(double a, double b) { return pow(a, b); }
__device__ __forceinline__ float rucuda_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double rucuda_fmod(double a, double b) { return fmod(a, b); }
__device__ __forceinline__ float rucuda_floor_(float a) { return floorf(a); }
__device__ __forceinline__ double rucuda_floor_(double a) { return floor(a); }
__device__ __forceinline__ float rucuda_copysign(float a, float b) { return copysignf(a, b); }
__device__ __forceinline__ double rucuda_copysign(double a, double b) { return copysign(a, b); }
template <typename F> __device__ __forceinline__ F rucuda_fdivmod(F a, F b, F *m) {
  F mod = rucuda_fmod(a, b);
  if (b == (F)0) { *m = mod; return rucuda_div(a, b); }
  F div = rucuda_div(rucuda_sub(a, mod), b);
  if (mod != (F)0) {
    if ((b < (F)0) != (mod < (F)0)) { mod = rucuda_add(mod, b); div = rucuda_sub(div, (F)1); }
  } else {
    mod = rucuda_copysign((F)0, b);
  }
  F fd;
  if (div != (F)0) {
    fd = rucuda_floor_(div);
    if (rucuda_sub(div, fd) > (F)0.5) fd = rucuda_add(fd, (F)1);
  } else {
    fd = rucuda_copysign((F)0, rucuda_div(a, b));
  }
  *m = mod;
  return fd;
}
__device__ __forceinline__ float rucuda_floor_div(float a, float b) { float m; return rucuda_fdivmod(a, b, &m); }
__device__ __forceinline__ double rucuda_floor_div(double a, double b) { double m; return rucuda_fdivmod(a, b, &m); }
__device__ __forceinline__ float rucuda_remainder(float a, float b) { float m; rucuda_fdivmod(a, b, &m); return m; }
__device__ __forceinline__ double rucuda_remainder(double a, double b) { double m; rucuda_fdivmod(a, b, &m); return m; }
__device__ __forceinline__ float rucuda_f64_to_f32_odd(double d) {
  float f = __double2float_rz(d);
  if ((double)f != d && f == f) f = __uint_as_float(__float_as_uint(f) | 1u);
  return f;
}
__device__ __forceinline__ unsigned long long rucuda_float_to_u64(float x) { return x != x ? 0ull : x < 0.0f ? (unsigned long long)__float2ll_rz(x) : __float2ull_rz(x); }
__device__ __forceinline__ unsigned long long rucuda_double_to_u64(double x) { return x != x ? 0ull : x < 0.0 ? (unsigned long long)__double2ll_rz(x) : __double2ull_rz(x); }
__device__ __forceinline__ long long rucuda_float_to_i64(float x) { return x != x ? 0ll : __float2ll_rz(x); }
__device__ __forceinline__ int rucuda_float_to_i32(float x) { return x != x ? 0 : __float2int_rz(x); }
__device__ __forceinline__ int rucuda_double_to_i32(double x) { return x != x ? 0 : __double2int_rz(x); }
__device__ __forceinline__ long long rucuda_double_to_i64(double x) { return x != x ? 0ll : __double2ll_rz(x); }
__device__ __forceinline__ float rucuda_m_sin(float x) { return sinf(x); }
__device__ __forceinline__ double rucuda_m_sin(double x) { return sin(x); }
__device__ __forceinline__ float rucuda_m_cos(float x) { return cosf(x); }
__device__ __forceinline__ double rucuda_m_cos(double x) { return cos(x); }
__device__ __forceinline__ float rucuda_m_tan(float x) { return tanf(x); }
__device__ __forceinline__ double rucuda_m_tan(double x) { return tan(x); }
__device__ __forceinline__ float rucuda_m_asin(float x) { return asinf(x); }
__device__ __forceinline__ double rucuda_m_asin(double x) { return asin(x); }
__device__ __forceinline__ float rucuda_m_acos(float x) { return acosf(x); }
__device__ __forceinline__ double rucuda_m_acos(double x) { return acos(x); }
__device__ __forceinline__ float rucuda_m_atan(float x) { return atanf(x); }
__device__ __forceinline__ double rucuda_m_atan(double x) { return atan(x); }
__device__ __forceinline__ float rucuda_m_sinh(float x) { return sinhf(x); }
__device__ __forceinline__ double rucuda_m_sinh(double x) { return sinh(x); }
__device__ __forceinline__ float rucuda_m_cosh(float x) { return coshf(x); }
__device__ __forceinline__ double rucuda_m_cosh(double x) { return cosh(x); }
__device__ __forceinline__ float rucuda_m_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double rucuda_m_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float rucuda_m_exp(float x) { return expf(x); }
__device__ __forceinline__ double rucuda_m_exp(double x) { return exp(x); }
__device__ __forceinline__ float rucuda_m_log(float x) { return logf(x); }
__device__ __forceinline__ double rucuda_m_log(double x) { return log(x); }
__device__ __forceinline__ float rucuda_m_log10(float x) { return log10f(x); }
__device__ __forceinline__ double rucuda_m_log10(double x) { return log10(x); }
__device__ __forceinline__ float rucuda_m_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double rucuda_m_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float rucuda_m_fabs(float x) { return fabsf(x); }
__device__ __forceinline__ double rucuda_m_fabs(double x) { return fabs(x); }
__device__ __forceinline__ float rucuda_m_ceil(float x) { return ceilf(x); }
__device__ __forceinline__ double rucuda_m_ceil(double x) { return ceil(x); }
__device__ __forceinline__ float rucuda_m_floor(float x) { return floorf(x); }
__device__ __forceinline__ double rucuda_m_floor(double x) { return floor(x); }
__device__ __forceinline__ float rucuda_m_ldexp(float x, int e) { return ldexpf(x, e); }
__device__ __forceinline__ double rucuda_m_ldexp(double x, int e) { return ldexp(x, e); }
__device__ __forceinline__ float rucuda_m_frexp(float x, int *e) { return frexpf(x, e); }
__device__ __forceinline__ double rucuda_m_frexp(double x, int *e) { return frexp(x, e); }
__device__ __forceinline__ float rucuda_m_modf(float x, float *ip) { return modff(x, ip); }
__device__ __forceinline__ double rucuda_m_modf(double x, double *ip) { return modf(x, ip); }
__device__ __forceinline__ float rucuda_m_atan2(float y, float x) { return atan2f(y, x); }
__device__ __forceinline__ double rucuda_m_atan2(double y, double x) { return atan2(y, x); }
__device__ __forceinline__ float rucuda_m_hypot(float x, float y) { return hypotf(x, y); }
__device__ __forceinline__ double rucuda_m_hypot(double x, double y) { return hypot(x, y); }
__device__ __forceinline__ float rucuda_qnan(float) { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double rucuda_qnan(double) { return __longlong_as_double(0x7ff8000000000000LL); }
