struct rucuda_half {
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
