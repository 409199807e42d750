//! The C++ definitions generated kernels put before their own code: our half, bfloat16
//! and complex types, so that no kernel needs CUDA's headers (NVRTC then compiles them
//! with no include path, and the cache key is the source alone).
//!
//! - `rucuda_half`: IEEE binary16 bits; converts to and from `float` (and from any
//!   arithmetic type) with PTX `cvt` instructions, so arithmetic happens in `float`.
//! - `rucuda_bfloat16`: bfloat16 bits; round-to-nearest-even from `float` in software
//!   (the same bits as `half::bf16::from_f32`, NaNs kept quiet), any architecture.
//! - `rucuda_complex<T>` with `rucuda_complex64`/`rucuda_complex128`: `{re, im}` with the
//!   component's alignment (Rust's `Complex<T>` layout); `+ - * /` (Smith's division),
//!   `==`, `!=` with complex or real operands of the same precision; `real`, `imag`,
//!   `conj`, `abs`, `norm`, `arg`.

use crate::dtype::DType;

const HALF: &str = r#"struct rucuda_half {
  unsigned short bits;
  rucuda_half() = default;
  __device__ rucuda_half(float f) { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ rucuda_half(double d) { asm("cvt.rn.f16.f64 %0, %1;" : "=h"(bits) : "d"(d)); }
  template <typename T> __device__ rucuda_half(T v) : rucuda_half((float)v) {}
  __device__ operator float() const { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits)); return f; }
  __device__ rucuda_half& operator+=(float v) { return *this = rucuda_half((float)*this + v); }
  __device__ rucuda_half& operator-=(float v) { return *this = rucuda_half((float)*this - v); }
  __device__ rucuda_half& operator*=(float v) { return *this = rucuda_half((float)*this * v); }
  __device__ rucuda_half& operator/=(float v) { return *this = rucuda_half((float)*this / v); }
};
"#;

const BFLOAT16: &str = r#"struct rucuda_bfloat16 {
  unsigned short bits;
  rucuda_bfloat16() = default;
  __device__ rucuda_bfloat16(float f) {
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) bits = (unsigned short)((u >> 16) | 0x40u);
    else bits = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  template <typename T> __device__ rucuda_bfloat16(T v) : rucuda_bfloat16((float)v) {}
  __device__ operator float() const { return __uint_as_float(((unsigned int)bits) << 16); }
  __device__ rucuda_bfloat16& operator+=(float v) { return *this = rucuda_bfloat16((float)*this + v); }
  __device__ rucuda_bfloat16& operator-=(float v) { return *this = rucuda_bfloat16((float)*this - v); }
  __device__ rucuda_bfloat16& operator*=(float v) { return *this = rucuda_bfloat16((float)*this * v); }
  __device__ rucuda_bfloat16& operator/=(float v) { return *this = rucuda_bfloat16((float)*this / v); }
};
"#;

const COMPLEX: &str = r#"__device__ inline float rucuda_fabs(float x) { return fabsf(x); }
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
  friend __device__ rucuda_complex operator/(rucuda_complex a, rucuda_complex b) {
    if (rucuda_fabs(b.re) >= rucuda_fabs(b.im)) {
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
"#;

/// The prelude a kernel over `dtypes` needs (empty when only built-in C types occur).
///
/// ```
/// use rucuda_array::{codegen::prelude_for, DType};
/// assert!(prelude_for([DType::F32, DType::I64]).is_empty());
/// assert!(prelude_for([DType::C64]).contains("rucuda_complex64"));
/// assert!(prelude_for([DType::F16]).contains("struct rucuda_half"));
/// ```
pub fn prelude_for(dtypes: impl IntoIterator<Item = DType>) -> String {
    let (mut half, mut bf16, mut complex) = (false, false, false);
    for d in dtypes {
        match d {
            DType::F16 => half = true,
            DType::BF16 => bf16 = true,
            DType::C64 | DType::C128 => complex = true,
            _ => {}
        }
    }
    let mut s = String::new();
    if half {
        s.push_str(HALF);
    }
    if bf16 {
        s.push_str(BFLOAT16);
    }
    if complex {
        s.push_str(COMPLEX);
    }
    s
}

/// The whole prelude (every type), for users who write kernels by hand.
pub fn full_prelude() -> String {
    prelude_for([DType::F16, DType::BF16, DType::C64])
}
