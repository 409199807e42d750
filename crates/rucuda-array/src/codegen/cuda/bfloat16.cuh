struct rucuda_bfloat16 {
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
