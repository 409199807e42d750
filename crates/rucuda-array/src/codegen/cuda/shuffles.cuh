#define RUCUDA_FULL_MASK 0xffffffffu
#define RUCUDA_DEFINE_SHUFFLE(rucuda_fn, rucuda_intrinsic)                                  \
  template <typename T>                                                                     \
  __device__ __forceinline__ T rucuda_fn(const T &v, unsigned int rucuda_arg) {             \
    constexpr int W = (int)((sizeof(T) + 3) / 4);                                           \
    unsigned int w[W];                                                                      \
    w[W - 1] = 0u;                                                                          \
    memcpy(w, &v, sizeof(T));                                                     \
    _Pragma("unroll") for (int k = 0; k < W; ++k)                                           \
      w[k] = rucuda_intrinsic(RUCUDA_FULL_MASK, w[k], rucuda_arg);                          \
    T r;                                                                                    \
    memcpy(&r, w, sizeof(T));                                                     \
    return r;                                                                               \
  }
RUCUDA_DEFINE_SHUFFLE(rucuda_shfl_down, __shfl_down_sync)
RUCUDA_DEFINE_SHUFFLE(rucuda_shfl_up, __shfl_up_sync)
RUCUDA_DEFINE_SHUFFLE(rucuda_shfl_idx, __shfl_sync)
