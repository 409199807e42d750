// Host emulation of the CUDA built-ins our kernels use, so that the kernels' logic
// (layouts, state handling, seeding, skip-ahead, the transforms' arithmetic) can be run
// and checked on a machine without a GPU. Transcendental functions are the exact values
// rounded once, like the crate's CPU reference (crate::math); the hardware approximations
// likewise. Test code only.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define RR_HOST_EMULATION 1
#define __device__
#define __global__
#define __forceinline__ inline
#define __constant__
#define __launch_bounds__(x)
#define __restrict__ __restrict

struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
struct float2 { float x, y; };
struct double2 { double x, y; };
struct ulonglong2 { unsigned long long x, y; };
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return uint4{a, b, c, d}; }
static inline uint2 make_uint2(unsigned a, unsigned b) { return uint2{a, b}; }

struct rr_dim3 { unsigned x = 0, y = 1, z = 1; };
static rr_dim3 blockIdx, blockDim, threadIdx;

// The rounding-fixing intrinsics (built with -ffp-contract=off, so each rounds once).
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmaf_rn(float a, float b, float c) { return std::fmaf(a, b, c); }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline long long __double_as_longlong(double f) { long long u; memcpy(&u, &f, 8); return u; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
template <class T> static inline T __ldg(const T* p) { return *p; }
static inline bool __any_sync(unsigned, bool p) { return p; }

static inline float rr_logf(float x) { return (float)std::log((double)x); }
static inline float rr_expf(float x) { return (float)std::exp((double)x); }
#define logf rr_logf
#define expf rr_expf
#define __sincosf rr_host_sincosf
static inline void rr_host_sincosf(float x, float* s, float* c)
{
    *s = (float)std::sin((double)x);
    *c = (float)std::cos((double)x);
}
static inline void sincospi(double x, double* s, double* c)
{
    double r = x - 2.0 * std::round(x / 2.0);
    double q = std::round(2.0 * r);
    double f = r - q / 2.0;
    double ss = std::sin(M_PI * f), cc = std::cos(M_PI * f);
    long long k = ((long long)q % 4 + 4) % 4;
    if (k == 0) { *s = ss; *c = cc; }
    else if (k == 1) { *s = cc; *c = -ss; }
    else if (k == 2) { *s = -ss; *c = -cc; }
    else { *s = -cc; *c = ss; }
}
// erfc^-1 by Newton-Halley on erfc, bisection-safeguarded (as crate::math::erfcinv).
static inline double erfcinv(double y)
{
    if (!(y >= 0.0 && y <= 2.0)) return NAN;
    if (y == 0.0) return INFINITY;
    if (y == 2.0) return -INFINITY;
    if (y > 1.0) return -erfcinv(2.0 - y);
    if (y == 1.0) return 0.0;
    double lo = 0.0, hi = 27.3, x;
    if (y < 0.5) {
        double l = -std::log(y);
        double t = l - 0.5 * std::log(M_PI * l);
        x = std::sqrt(t > 0.01 ? t : 0.01);
    } else {
        x = (1.0 - y) * 0.886226925452758;
    }
    for (int it = 0; it < 100; it++) {
        double f = std::erfc(x) - y;
        if (f > 0) lo = x; else if (f < 0) hi = x; else return x;
        double dfdx = -M_2_SQRTPI * std::exp(-x * x);
        double dx = -f / dfdx;
        double next = x + dx / (1.0 + x * dx);
        if (!std::isfinite(next) || next <= lo || next >= hi) next = 0.5 * (lo + hi);
        if (std::fabs(next - x) <= 1e-17 * std::fabs(x)) return next;
        x = next;
    }
    return x;
}
static inline float erfcinvf(float y) { return (float)erfcinv((double)y); }

static inline float rr_host_approx(const char* op, float a)
{
    if (!strncmp(op, "rsqrt", 5)) return (float)(1.0 / std::sqrt((double)a));
    if (!strncmp(op, "ex2", 3)) return (float)std::exp2((double)a);
    if (!strncmp(op, "lg2", 3)) return (float)std::log2((double)a);
    return (float)(1.0 / (double)a);
}
