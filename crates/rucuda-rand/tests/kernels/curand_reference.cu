// cuRAND's own device API, for the GPU tests: thread t runs
// curand_init(seeds[t], subsequences[t], offsets[t]) (or, for Sobol, curand_init with
// dimension t's direction vectors, scramble constant and the offset) and writes m values of
// one function into out[t*m ...]. Compiled at test time by rucuda-jit against
// /usr/local/cuda/include; nothing of it is committed in compiled form.
#include <curand_kernel.h>

typedef unsigned long long u64;

template <class S> __device__ u64 rr_two(S* s)
{
    unsigned lo = curand(s);
    unsigned hi = curand(s);
    return (u64)lo | ((u64)hi << 32);
}

#define PSEUDO(NAME, STATE, T, EXPR)                                                        \
    extern "C" __global__ void NAME(const u64* seeds, const u64* subs, const u64* offs,     \
                                    unsigned n, unsigned m, T* out, double mean,            \
                                    double stddev, double lambda)                           \
    {                                                                                       \
        unsigned t = blockIdx.x * blockDim.x + threadIdx.x;                                 \
        if (t >= n) return;                                                                 \
        STATE st;                                                                           \
        curand_init(seeds[t], subs[t], offs[t], &st);                                       \
        STATE* s = &st;                                                                     \
        for (unsigned j = 0; j < m; j++) out[(u64)t * m + j] = EXPR;                        \
    }

// Poisson counts are not here: the tests draw them from stored states with
// curand_poisson_forms.cu's init_G and stored_G (the form rucuda matches; see
// common::curand_pseudo).
#define PSEUDO_ALL(G, STATE)                                                                 \
    PSEUDO(ref_##G##_raw_u32, STATE, unsigned, curand(s))                                   \
    PSEUDO(ref_##G##_raw_u64, STATE, u64, rr_two(s))                                        \
    PSEUDO(ref_##G##_uniform_f32, STATE, float, curand_uniform(s))                          \
    PSEUDO(ref_##G##_uniform_f64, STATE, double, curand_uniform_double(s))                  \
    PSEUDO(ref_##G##_normal_f32, STATE, float, fmaf((float)stddev, curand_normal(s), (float)mean)) \
    PSEUDO(ref_##G##_normal_f64, STATE, double, fma(stddev, curand_normal_double(s), mean)) \
    PSEUDO(ref_##G##_log_normal_f32, STATE, float, curand_log_normal(s, (float)mean, (float)stddev)) \
    PSEUDO(ref_##G##_log_normal_f64, STATE, double, curand_log_normal_double(s, mean, stddev))

PSEUDO_ALL(philox, curandStatePhilox4_32_10_t)
PSEUDO_ALL(xorwow, curandStateXORWOW_t)
PSEUDO_ALL(mrg32k3a, curandStateMRG32k3a_t)

// Sobol: dimension t, vectors[t*B ...], scramble[t] when scrambled.
#define QUASI(NAME, STATE, VT, W, B, SCR, T, EXPR)                                          \
    extern "C" __global__ void NAME(const W* vectors, const W* scramble, W offset,          \
                                    unsigned n, unsigned m, T* out, double mean,            \
                                    double stddev, double lambda)                           \
    {                                                                                       \
        unsigned t = blockIdx.x * blockDim.x + threadIdx.x;                                 \
        if (t >= n) return;                                                                 \
        STATE st;                                                                           \
        W* v = const_cast<W*>(vectors + (u64)t * B);                                        \
        if (SCR)                                                                            \
            rr_init_scrambled(v, scramble[t], offset, &st);                                 \
        else                                                                                \
            rr_init_plain(v, offset, &st);                                                  \
        STATE* s = &st;                                                                     \
        for (unsigned j = 0; j < m; j++) out[(u64)t * m + j] = EXPR;                        \
    }

template <class S, class W> __device__ void rr_init_plain(W* v, W offset, S* s)
{
    curand_init(v, offset, s);
}
template <class S, class W> __device__ void rr_init_scrambled(W* v, W c, W offset, S* s)
{
    curand_init(v, c, offset, s);
}
// The plain states have no scrambled curand_init, and the other way round: these never run.
template <> __device__ void rr_init_plain(unsigned* v, unsigned offset, curandStateScrambledSobol32_t* s) {}
template <> __device__ void rr_init_plain(u64* v, u64 offset, curandStateScrambledSobol64_t* s) {}
template <> __device__ void rr_init_scrambled(unsigned* v, unsigned c, unsigned offset, curandStateSobol32_t* s) {}
template <> __device__ void rr_init_scrambled(u64* v, u64 c, u64 offset, curandStateSobol64_t* s) {}

#define QUASI_ALL(G, STATE, W, B, SCR, RAW, RAWT)                                           \
    QUASI(ref_##G##_##RAW, STATE, W, W, B, SCR, RAWT, curand(s))                            \
    QUASI(ref_##G##_uniform_f32, STATE, W, W, B, SCR, float, curand_uniform(s))             \
    QUASI(ref_##G##_uniform_f64, STATE, W, W, B, SCR, double, curand_uniform_double(s))     \
    QUASI(ref_##G##_normal_f32, STATE, W, W, B, SCR, float, fmaf((float)stddev, curand_normal(s), (float)mean)) \
    QUASI(ref_##G##_normal_f64, STATE, W, W, B, SCR, double, fma(stddev, curand_normal_double(s), mean)) \
    QUASI(ref_##G##_log_normal_f32, STATE, W, W, B, SCR, float, curand_log_normal(s, (float)mean, (float)stddev)) \
    QUASI(ref_##G##_log_normal_f64, STATE, W, W, B, SCR, double, curand_log_normal_double(s, mean, stddev)) \
    QUASI(ref_##G##_poisson_u32, STATE, W, W, B, SCR, unsigned, curand_poisson(s, lambda))

QUASI_ALL(sobol32, curandStateSobol32_t, unsigned, 32, false, raw_u32, unsigned)
QUASI_ALL(scrambled_sobol32, curandStateScrambledSobol32_t, unsigned, 32, true, raw_u32, unsigned)
QUASI_ALL(sobol64, curandStateSobol64_t, u64, 64, false, raw_u64, u64)
QUASI_ALL(scrambled_sobol64, curandStateScrambledSobol64_t, u64, 64, true, raw_u64, u64)
