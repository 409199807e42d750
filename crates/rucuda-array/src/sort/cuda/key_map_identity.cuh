// No user key transform: the bits sort as they are.
__device__ __forceinline__ rucuda_key_t rucuda_key_map(rucuda_key_t b) { return b; }
__device__ __forceinline__ rucuda_key_t rucuda_key_unmap(rucuda_key_t b) { return b; }
