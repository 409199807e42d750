#define RUCUDA_STATUS_EMPTY 0u
#define RUCUDA_STATUS_AGGREGATE 1u
#define RUCUDA_STATUS_PREFIX 2u
template <typename T>
__device__ __forceinline__ void rucuda_status_store(unsigned long long *status, long long tile,
                                                    unsigned int flag, const T &v) {
  constexpr int W = (int)((sizeof(T) + 3) / 4);
  unsigned int w[W];
  w[W - 1] = 0u;
  memcpy(w, &v, sizeof(T));
  volatile unsigned long long *p = status + tile * W;
#pragma unroll
  for (int k = 0; k < W; ++k) p[k] = ((unsigned long long)flag << 32) | (unsigned long long)w[k];
}
template <typename T>
__device__ __forceinline__ unsigned int rucuda_status_load(const unsigned long long *status,
                                                           long long tile, T &v) {
  constexpr int W = (int)((sizeof(T) + 3) / 4);
  unsigned int w[W];
  const volatile unsigned long long *p = status + tile * W;
  unsigned int flag = 0u;
  bool same = true;
#pragma unroll
  for (int k = 0; k < W; ++k) {
    const unsigned long long word = p[k];
    const unsigned int f = (unsigned int)(word >> 32);
    w[k] = (unsigned int)word;
    if (k == 0) flag = f; else same = same && f == flag;
  }
  if (!same) return RUCUDA_STATUS_EMPTY;
  if (flag != RUCUDA_STATUS_EMPTY) memcpy(&v, w, sizeof(T));
  return flag;
}
