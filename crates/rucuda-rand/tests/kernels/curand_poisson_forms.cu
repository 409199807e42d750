// cuRAND's curand_poisson in three compiled forms, for tests/poisson_exactness_gpu.rs.
// cuRAND's rejection method (64 <= lambda <= 4000) leaves some multiply-adds to ptxas,
// which fuses them or not depending on the kernel around the call, so each form can give
// other bits (the crate's README has the details). Thread t handles state t and writes m
// counts to out[t*m ...]. Compiled at test time by rucuda-jit with the toolkit's
// <curand_kernel.h>; nothing of it is committed in compiled form.
//
//   plain_G     curand_init, then curand_poisson in a loop: the form rucuda matches.
//   noinline_G  the same, through a __noinline__ device function.
//   init_G + stored_G  curand_init into an array of states, then a kernel that loads a
//               state, calls curand_poisson in a loop and stores the state back.
//   init_G + pycuda_G  PyCUDA's curandom kernel (fill_poisson), word for word: one
//               thread per state, drawing in place in the states array, element idx from
//               state idx % threads (the launch must have exactly one thread per state).
//
// Keep each kernel's shape as it is: its SASS is what the test compares with.
#include <curand_kernel.h>

typedef unsigned long long u64;

template <class S> __device__ __noinline__ unsigned rr_poisson_noinline(S* s, double lambda)
{
    return curand_poisson(s, lambda);
}

#define FORMS(G, STATE)                                                                     \
    extern "C" __global__ void plain_##G(const u64* seeds, const u64* subs, const u64* offs, \
                                         unsigned n, unsigned m, unsigned* out,             \
                                         double lambda)                                     \
    {                                                                                       \
        unsigned t = blockIdx.x * blockDim.x + threadIdx.x;                                 \
        if (t >= n) return;                                                                 \
        STATE st;                                                                           \
        curand_init(seeds[t], subs[t], offs[t], &st);                                       \
        for (unsigned j = 0; j < m; j++) out[(u64)t * m + j] = curand_poisson(&st, lambda); \
    }                                                                                       \
    extern "C" __global__ void noinline_##G(const u64* seeds, const u64* subs,              \
                                            const u64* offs, unsigned n, unsigned m,        \
                                            unsigned* out, double lambda)                   \
    {                                                                                       \
        unsigned t = blockIdx.x * blockDim.x + threadIdx.x;                                 \
        if (t >= n) return;                                                                 \
        STATE st;                                                                           \
        curand_init(seeds[t], subs[t], offs[t], &st);                                       \
        for (unsigned j = 0; j < m; j++)                                                    \
            out[(u64)t * m + j] = rr_poisson_noinline(&st, lambda);                         \
    }                                                                                       \
    extern "C" __global__ void init_##G(const u64* seeds, const u64* subs, const u64* offs, \
                                        unsigned n, STATE* states)                          \
    {                                                                                       \
        unsigned t = blockIdx.x * blockDim.x + threadIdx.x;                                 \
        if (t >= n) return;                                                                 \
        curand_init(seeds[t], subs[t], offs[t], &states[t]);                                \
    }                                                                                       \
    extern "C" __global__ void stored_##G(STATE* states, unsigned n, unsigned m,            \
                                          unsigned* out, double lambda)                     \
    {                                                                                       \
        unsigned t = blockIdx.x * blockDim.x + threadIdx.x;                                 \
        if (t >= n) return;                                                                 \
        STATE st = states[t];                                                               \
        for (unsigned j = 0; j < m; j++) out[(u64)t * m + j] = curand_poisson(&st, lambda); \
        states[t] = st;                                                                     \
    }                                                                                       \
    extern "C" __global__ void pycuda_##G(STATE* s, unsigned int* d, double lambda,         \
                                          const int n)                                      \
    {                                                                                       \
        const int tidx = blockIdx.x * blockDim.x + threadIdx.x;                             \
        const int delta = blockDim.x * gridDim.x;                                           \
        for (int idx = tidx; idx < n; idx += delta) d[idx] = curand_poisson(&s[tidx], lambda); \
    }                                                                                       \
    extern "C" __global__ void state_bytes_##G(unsigned* out) { *out = sizeof(STATE); }

FORMS(xorwow, curandStateXORWOW_t)
FORMS(mrg32k3a, curandStateMRG32k3a_t)
FORMS(philox, curandStatePhilox4_32_10_t)
