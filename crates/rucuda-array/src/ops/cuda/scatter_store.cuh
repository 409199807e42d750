// Scatter stores of rucuda-array (put, multi_put, put_axis, multi_take_put). Indices may
// repeat, so several threads may write one element; plain stores would then be a data
// race under the PTX memory model. These are relaxed stores at gpu scope (morally strong,
// so the conflicting writes are no race and one of the values lands). An element wider
// than 8 bytes (complex128, 16-byte vectors, float3, structs) is stored as its aligned
// 8/4/2/1-byte words, each a relaxed store: each word comes from one of the values, and
// with repeated indices an element may mix words of different values (so may one aligned
// to less than its size: complex64 is two 4-byte words, char3 three bytes). Before sm_70 the
// PTX memory model has no scopes: the words are volatile stores there.
__device__ __forceinline__ void rucuda_st_relaxed(unsigned char* p, unsigned char v) {
#if __CUDA_ARCH__ >= 700
  asm volatile("st.relaxed.gpu.b8 [%0], %1;" : : "l"(p), "h"((unsigned short)v) : "memory");
#else
  *(volatile unsigned char*)p = v;
#endif
}
__device__ __forceinline__ void rucuda_st_relaxed(unsigned short* p, unsigned short v) {
#if __CUDA_ARCH__ >= 700
  asm volatile("st.relaxed.gpu.b16 [%0], %1;" : : "l"(p), "h"(v) : "memory");
#else
  *(volatile unsigned short*)p = v;
#endif
}
__device__ __forceinline__ void rucuda_st_relaxed(unsigned int* p, unsigned int v) {
#if __CUDA_ARCH__ >= 700
  asm volatile("st.relaxed.gpu.b32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
#else
  *(volatile unsigned int*)p = v;
#endif
}
__device__ __forceinline__ void rucuda_st_relaxed(unsigned long long* p, unsigned long long v) {
#if __CUDA_ARCH__ >= 700
  asm volatile("st.relaxed.gpu.b64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
#else
  *(volatile unsigned long long*)p = v;
#endif
}
// The widest word (8, 4, 2 or 1 bytes) that both the size S and the alignment A allow.
template <int S, int A> struct rucuda_store_word {
  static const int bytes = (A % 8 == 0 && S % 8 == 0) ? 8 : (A % 4 == 0 && S % 4 == 0) ? 4 : (A % 2 == 0 && S % 2 == 0) ? 2 : 1;
};
template <int W> struct rucuda_word_of { typedef unsigned char type; };
template <> struct rucuda_word_of<2> { typedef unsigned short type; };
template <> struct rucuda_word_of<4> { typedef unsigned int type; };
template <> struct rucuda_word_of<8> { typedef unsigned long long type; };
// `*p = v`, word by word, each word a relaxed gpu-scope store.
template <typename T> __device__ __forceinline__ void rucuda_scatter_store(T* p, T v) {
  const int W = rucuda_store_word<sizeof(T), alignof(T)>::bytes;
  typedef typename rucuda_word_of<W>::type U;
  U w[sizeof(T) / W];
  memcpy(w, &v, sizeof(T));
  U* d = reinterpret_cast<U*>(p);
#pragma unroll
  for (int k = 0; k < (int)(sizeof(T) / W); ++k) rucuda_st_relaxed(d + k, w[k]);
}
