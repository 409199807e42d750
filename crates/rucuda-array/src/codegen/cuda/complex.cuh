__device__ inline float rucuda_fabs(float x) { return fabsf(x); }
__device__ inline double rucuda_fabs(double x) { return fabs(x); }
__device__ inline float rucuda_hypot(float x, float y) { return hypotf(x, y); }
__device__ inline double rucuda_hypot(double x, double y) { return hypot(x, y); }
__device__ inline float rucuda_atan2(float y, float x) { return atan2f(y, x); }
__device__ inline double rucuda_atan2(double y, double x) { return atan2(y, x); }
template <typename T> struct rucuda_complex {
  T re, im;
  rucuda_complex() = default;
  __device__ rucuda_complex(T r, T i = T(0)) : re(r), im(i) {}
  template <typename U> __device__ explicit rucuda_complex(const rucuda_complex<U>& o) : re((T)o.re), im((T)o.im) {}
  friend __device__ rucuda_complex operator+(rucuda_complex a) { return a; }
  friend __device__ rucuda_complex operator-(rucuda_complex a) { return rucuda_complex(-a.re, -a.im); }
  friend __device__ rucuda_complex operator+(rucuda_complex a, rucuda_complex b) { return rucuda_complex(a.re + b.re, a.im + b.im); }
  friend __device__ rucuda_complex operator-(rucuda_complex a, rucuda_complex b) { return rucuda_complex(a.re - b.re, a.im - b.im); }
  friend __device__ rucuda_complex operator*(rucuda_complex a, rucuda_complex b) { return rucuda_complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
  // Smith's division, as NumPy's: a zero divisor gives each part divided by +0
  // (infinities, or NaN for a zero part), where the formula would give NaNs only.
  friend __device__ rucuda_complex operator/(rucuda_complex a, rucuda_complex b) {
    if (rucuda_fabs(b.re) >= rucuda_fabs(b.im)) {
      if (b.re == T(0) && b.im == T(0)) {
        const T zero = rucuda_fabs(b.re);
        return rucuda_complex(a.re / zero, a.im / zero);
      }
      T r = b.im / b.re, d = b.re + b.im * r;
      return rucuda_complex((a.re + a.im * r) / d, (a.im - a.re * r) / d);
    }
    T r = b.re / b.im, d = b.re * r + b.im;
    return rucuda_complex((a.re * r + a.im) / d, (a.im * r - a.re) / d);
  }
  friend __device__ bool operator==(rucuda_complex a, rucuda_complex b) { return a.re == b.re && a.im == b.im; }
  friend __device__ bool operator!=(rucuda_complex a, rucuda_complex b) { return !(a == b); }
  __device__ rucuda_complex& operator+=(rucuda_complex b) { return *this = *this + b; }
  __device__ rucuda_complex& operator-=(rucuda_complex b) { return *this = *this - b; }
  __device__ rucuda_complex& operator*=(rucuda_complex b) { return *this = *this * b; }
  __device__ rucuda_complex& operator/=(rucuda_complex b) { return *this = *this / b; }
  friend __device__ T real(rucuda_complex a) { return a.re; }
  friend __device__ T imag(rucuda_complex a) { return a.im; }
  friend __device__ rucuda_complex conj(rucuda_complex a) { return rucuda_complex(a.re, -a.im); }
  friend __device__ T abs(rucuda_complex a) { return rucuda_hypot(a.re, a.im); }
  friend __device__ T norm(rucuda_complex a) { return a.re * a.re + a.im * a.im; }
  friend __device__ T arg(rucuda_complex a) { return rucuda_atan2(a.im, a.re); }
};
typedef rucuda_complex<float> rucuda_complex64;
typedef rucuda_complex<double> rucuda_complex128;
