//! CUDA C++ text of the scan's decoupled look-back: the status-word loads and stores.
//!
//! Warp-level steps use only `*_sync` shuffles and ballots with the full mask: never the
//! pre-Volta `volatile` shared-memory idiom.

/// The scan's tile status: the value's bytes in 32-bit chunks, each chunk stored in its
/// own 64-bit word with the flag in the high half (0 = not yet published, 1 = the
/// tile's aggregate, 2 = its inclusive prefix). Each word is written and read with one
/// aligned 64-bit `volatile` access, which is single-copy atomic, so a reader sees every
/// word either before or after a write; a status is valid when all its words carry the
/// same nonzero flag (a value of more than 4 bytes is thus never read torn: the flag says
/// which write each chunk came from, and each write happens once per flag).
pub(crate) const STATUS_WORDS: &str = r#"#define RUCUDA_STATUS_EMPTY 0u
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
"#;
