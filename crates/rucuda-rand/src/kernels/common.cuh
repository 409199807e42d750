// rucuda-rand: device code shared by every generator.
//
// Transforms from raw outputs to distributions, written to give exactly what cuRAND's
// device API gives: the same operations in the same order. Where cuRAND writes a*b + c in
// one expression, which the compiler (with its default -fmad=true) contracts into one
// fused multiply-add, we write the fma explicitly, so our results do not depend on the
// flags. Compiled by NVRTC with no headers: only built-in types and CUDA math functions
// are used.

#pragma nv_diag_suppress 177 // functions a module does not use

typedef unsigned int rr_u32;
typedef unsigned long long rr_u64;

#define RR_DEV static __device__ __forceinline__
#define RR_METHOD __device__ __forceinline__

// 2^-32, 2^-53, 2*pi in float, 2^-32 * 2*pi (a float product), -sqrt(2).
#define RR_INV32F (0x1p-32f)
#define RR_INV32 (0x1p-32)
#define RR_INV53 (0x1p-53)
#define RR_TWO_PI_F (0x1.921fb6p+2f)
#define RR_INV32_2PI_F (0x1.921fb6p-30f)
#define RR_NEG_SQRT2_F (-0x1.6a09e6p+0f)
#define RR_NEG_SQRT2 (-0x1.6a09e667f3bcdp+0)

#define RR_FLAG_NORMAL 1u
#define RR_FLAG_LOG_NORMAL 2u

// ---- uniforms --------------------------------------------------------------------------

// (0, 1] from 32 bits.
RR_DEV float rr_uniform(rr_u32 x) { return x * RR_INV32F + (RR_INV32F / 2.0f); }
// (0, 1] from the high 32 bits of 64.
RR_DEV float rr_uniform64(rr_u64 x) { return rr_uniform((rr_u32)(x >> 32)); }
// (0, 1] in double from 32 bits.
RR_DEV double rr_uniform_double(rr_u32 x) { return x * RR_INV32 + RR_INV32; }
// (0, 1) in double from 53 of 64 bits.
RR_DEV double rr_uniform_double64(rr_u64 x) { return (x >> 11) * RR_INV53 + (RR_INV53 / 2.0); }
// 53 bits from two outputs.
RR_DEV double rr_uniform_double_hq(rr_u32 x, rr_u32 y)
{
    rr_u64 z = (rr_u64)x ^ ((rr_u64)y << (53 - 32));
    return z * RR_INV53 + (RR_INV53 / 2.0);
}

// ---- Box-Muller ------------------------------------------------------------------------

// From a uniform float x in (0, 1] and an angle y in radians (MRG32k3a's form, and the
// last step of the others').
RR_DEV float2 rr_box_muller_uniforms(float x, float y)
{
    float2 r;
    float s = sqrtf(-2.0f * logf(x));
    __sincosf(y, &r.x, &r.y);
    r.x *= s;
    r.y *= s;
    return r;
}

RR_DEV float2 rr_box_muller(rr_u32 x, rr_u32 y)
{
    float u = rr_uniform(x);
    float v = fmaf((float)y, RR_INV32_2PI_F, RR_INV32_2PI_F / 2);
    return rr_box_muller_uniforms(u, v);
}

// From a uniform double x and an angle y in half-turns (MRG32k3a's form, and the last
// step of the others').
RR_DEV double2 rr_box_muller_double_uniforms(double x, double y)
{
    double2 r;
    double s = sqrt(-2.0 * log(x));
    sincospi(y, &r.x, &r.y);
    r.x *= s;
    r.y *= s;
    return r;
}

RR_DEV double2 rr_box_muller_double(rr_u32 x0, rr_u32 x1, rr_u32 y0, rr_u32 y1)
{
    double u = rr_uniform_double_hq(x0, x1);
    rr_u64 zy = (rr_u64)y0 ^ ((rr_u64)y1 << (53 - 32));
    double v = zy * (RR_INV53 * 2.0) + RR_INV53;
    return rr_box_muller_double_uniforms(u, v);
}

// ---- inverse normal CDF (quasi-random generators) ---------------------------------------

RR_DEV float rr_normal_icdf(rr_u32 x)
{
    float s = RR_NEG_SQRT2_F;
    if (x > 0x80000000u) {
        x = 0xffffffffu - x;
        s = -s;
    }
    float p = x * RR_INV32F + (RR_INV32F / 2.0f);
    return s * erfcinvf(2.0f * p);
}

RR_DEV float rr_normal_icdf64(rr_u64 x)
{
    return rr_normal_icdf((rr_u32)(x >> 32));
}

RR_DEV double rr_normal_icdf_double(rr_u32 x)
{
    double s = RR_NEG_SQRT2;
    if (x > 0x80000000u) {
        x = 0xffffffffu - x;
        s = -s;
    }
    double p = x * RR_INV32 + (RR_INV32 / 2.0);
    return s * erfcinv(2.0 * p);
}

RR_DEV double rr_normal_icdf_double64(rr_u64 x)
{
    double s = RR_NEG_SQRT2;
    x >>= 11;
    if (x > 0x10000000000000ull) {
        x = 0x1fffffffffffffull - x;
        s = -s;
    }
    double p = x * RR_INV53 + (RR_INV53 / 2.0);
    return s * erfcinv(2.0 * p);
}

// ---- Poisson --------------------------------------------------------------------------
//
// cuRAND's rejection method (64 <= lambda <= 4000) leaves several products and sums to
// the compiler: NVVM emits them as plain mul.f32/sub.f32 (and mul.f64/sub.f64) in the
// PTX, and ptxas contracts a product into a multiply-add only where it sees fit (one use,
// same basic block), which depends on the kernel around the call. Here every operation
// is an explicit intrinsic that fixes its rounding (__fmaf_rn, __fmul_rn, __fadd_rn, ...:
// PTX .rn forms, which no compiler contracts), in the form cuRAND's SASS has in a plain
// __global__ kernel that calls curand_init and then curand_poisson in a loop (NVRTC 13.0,
// sm_90). The crate's README says which multiply-adds that is and where other forms
// differ.

// The hardware approximations cuRAND's rejection method is built on.
// (RR_HOST_EMULATION: the CPU build our tests run the kernels' logic in, where each is
// the exact value rounded to float.)
#ifndef RR_HOST_EMULATION
#define RR_APPROX(op, r, a) asm(op " %0, %1;" : "=f"(r) : "f"(a))
#else
#define RR_APPROX(op, r, a) (r) = rr_host_approx(op, a)
#endif
RR_DEV float rr_rsqrt_approx(float a)
{
    float r;
    RR_APPROX("rsqrt.approx.f32.ftz", r, a);
    return r;
}
// __cr_exp: a * log2(e) in double, rounded to float, then ex2.approx.
RR_DEV float rr_exp_approx(float a)
{
    float r;
    a = (float)__dmul_rn((double)a, 1.4426950408889634);
    RR_APPROX("ex2.approx.f32.ftz", r, a);
    return r;
}
// __cr_log: lg2.approx, then * ln(2) in double, rounded to float.
RR_DEV float rr_log_approx(float a)
{
    float r;
    RR_APPROX("lg2.approx.f32.ftz", r, a);
    return (float)__dmul_rn((double)r, 0.6931471805599453);
}
RR_DEV float rr_rcp_approx(float a)
{
    float r;
    RR_APPROX("rcp.approx.f32.ftz", r, a);
    return r;
}

// P(a, x) ~ 1 / (1 + exp(alpha (a - x) - beta))^2 and its inverse in x.
#define RR_GI_MA1 1.4324803f
#define RR_GI_MA2 0.124009795f
#define RR_GI_MA3 0.00025361075f
#define RR_GI_MB1 0.21096735f
#define RR_GI_MB2 1.9738116f
#define RR_GI_MB3 0.9420173f

// alpha = ma1 / sqrt(a - ma2) + ma3 and beta = mb1 / sqrt(a - mb2) + mb3 (one
// multiply-add each: NVVM fuses these itself, in every form).
RR_DEV float rr_gi_alpha(float a)
{
    return __fmaf_rn(RR_GI_MA1, rr_rsqrt_approx(__fsub_rn(a, RR_GI_MA2)), RR_GI_MA3);
}
RR_DEV float rr_gi_beta(float a)
{
    return __fmaf_rn(RR_GI_MB1, rr_rsqrt_approx(__fsub_rn(a, RR_GI_MB2)), RR_GI_MB3);
}

// __cr_pgammainc(a, x): alpha (a - x) - beta is one multiply-add.
RR_DEV float rr_pgammainc(float a, float x)
{
    float alpha = rr_gi_alpha(a);
    float beta = rr_gi_beta(a);
    float t = __fmaf_rn(alpha, __fsub_rn(a, x), -beta);
    t = __fadd_rn(1.0f, rr_exp_approx(t));
    return rr_rcp_approx(__fmul_rn(t, t));
}

// __cr_pgammaincinv(a, y). Its last step, -t * rcp(alpha) + a, is a rounded product then
// a subtraction, as in cuRAND's code when its states live in memory between kernels (an
// init kernel stores them; a drawing kernel loads, draws and stores them back): NVVM then
// recomputes floor(a - t r) after the ln Gamma branch, the product has several uses in
// several blocks, and ptxas leaves it unfused. The crate's README lists the forms.
RR_DEV float rr_pgammaincinv(float a, float y)
{
    float alpha = rr_gi_alpha(a);
    float beta = rr_gi_beta(a);
    float t = __fsub_rn(rr_rsqrt_approx(y), 1.0f);
    t = __fadd_rn(beta, rr_log_approx(t));
    float r = rr_rcp_approx(alpha);
    return __fsub_rn(a, __fmul_rn(t, r));
}

// ln((k)!) for k = 0..8.
__constant__ double rr_ln_factorial[9] = RR_LN_FACTORIAL_TABLE;

// ln Gamma(a) for a positive integer: the table, then a Stirling series (Hart et al.,
// "Computer Approximations", 1968, approximation 5404). cuRAND's last lines,
// s = s * t; t = s - fa; s = s + sum; t = t + s, are two multiply-adds on one product.
RR_DEV double rr_lgamma_integer(int a)
{
    double fa = fabsf((float)a);
    if (a > 8) {
        double s = 1.0 / fa;
        double t = __dmul_rn(s, s);
        double sum = -0.1633436431e-2;
        sum = __fma_rn(sum, t, 0.83645878922e-3);
        sum = __fma_rn(sum, t, -0.5951896861197e-3);
        sum = __fma_rn(sum, t, 0.793650576493454e-3);
        sum = __fma_rn(sum, t, -0.277777777735865004e-2);
        sum = __fma_rn(sum, t, 0.833333333333331018375e-1);
        sum = __fma_rn(sum, s, 0.918938533204672);
        s = __dmul_rn(0.5, log(fa));
        t = __dsub_rn(fa, 0.5);
        return __dadd_rn(__fma_rn(s, t, -fa), __fma_rn(s, t, sum));
    }
    return rr_ln_factorial[(int)fa - 1];
}

// Knuth: multiply uniforms into e^lambda until the product is <= 1.
template <class G> RR_DEV rr_u32 rr_poisson_knuth(G& g, float lambda)
{
    rr_u32 k = 0;
    float p = expf(lambda);
    do {
        k++;
        p = __fmul_rn(p, g.uniform());
    } while (p > 1.0);
    return k - 1;
}

// Rejection with the approximate incomplete gamma function as envelope
// (see rr_pgammaincinv). The acceptance test's
// -lambda + x * logl is one multiply-add.
template <class G> RR_DEV rr_u32 rr_poisson_gammainc(G& g, float lambda)
{
    float y, x, t, z, v;
    float logl = rr_log_approx(lambda);
    while (true) {
        y = g.uniform();
        x = rr_pgammaincinv(lambda, y);
        x = floorf(x);
        z = g.uniform();
        v = __fmul_rn(__fsub_rn(rr_pgammainc(lambda, __fadd_rn(x, 1.0f)), rr_pgammainc(lambda, x)),
                      1.3f);
        z = __fmul_rn(z, v);
        float lg = (float)rr_lgamma_integer((int)__fadd_rn(1.0f, x));
        t = rr_exp_approx(__fsub_rn(__fmaf_rn(x, logl, -lambda), lg));
        if ((z < t) && (v >= 1e-20))
            break;
    }
    return (rr_u32)x;
}

// curand_poisson of XORWOW, Philox and MRG32k3a.
template <class G> RR_DEV rr_u32 rr_poisson_pseudo(G& g, double lambda)
{
    if (lambda < 64)
        return rr_poisson_knuth(g, (float)lambda);
    if (lambda > 4000)
        return (rr_u32)__dadd_rn(__fma_rn(sqrt(lambda), g.normal_double(), lambda), 0.5);
    return rr_poisson_gammainc(g, (float)lambda);
}

// Fishman's ITR inversion, in steps of 500 so that exp(-lambda) stays representable.
RR_DEV rr_u32 rr_poisson_itr(double u, double lambda)
{
    double L, p = 1.0;
    double q = 1.0;
    rr_u32 k = 0;
    int pow = 0;
    do {
        if (lambda > (double)(pow + 500.0)) {
            L = exp(-500.0);
        } else {
            L = exp((double)(pow - lambda));
        }
        p *= L;
        q *= L;
        pow += 500;
        while (u > q) {
            k++;
            p *= ((double)lambda / (double)k);
            q += p;
        }
    } while ((double)pow < lambda);
    return k;
}

// curand_poisson of the quasi-random generators, from one 32- or 64-bit output.
RR_DEV rr_u32 rr_poisson_quasi(rr_u32 x, double lambda)
{
    if (lambda < 1000)
        return rr_poisson_itr(x * RR_INV32 + (RR_INV32 / 2.0), lambda);
    return (rr_u32)(fma(sqrt(lambda), rr_normal_icdf_double(x), lambda) + 0.5);
}
RR_DEV rr_u32 rr_poisson_quasi64(rr_u64 x, double lambda)
{
    if (lambda < 1000)
        return rr_poisson_itr((x >> 11) * RR_INV53 + (RR_INV53 / 4.0), lambda);
    return (rr_u32)(fma(sqrt(lambda), rr_normal_icdf_double64(x), lambda) + 0.5);
}

// ---- Box-Muller caching (curand_normal / curand_log_normal) -----------------------------
//
// A pseudo-random generator G provides: uniform(), bm_pair() (float2), bm_pairs(a, b) (two
// pairs, as two bm_pair calls give them), bm_pair_double()
// (double2) and the fields flag, extra, flag_d, extra_d.

template <class G> RR_DEV float rr_normal(G& g)
{
    if (g.flag != RR_FLAG_NORMAL) {
        float2 v = g.bm_pair();
        g.extra = v.y;
        g.flag = RR_FLAG_NORMAL;
        return v.x;
    }
    g.flag = 0;
    return g.extra;
}

template <class G> RR_DEV double rr_normal_double(G& g)
{
    if (g.flag_d != RR_FLAG_NORMAL) {
        double2 v = g.bm_pair_double();
        g.extra_d = v.y;
        g.flag_d = RR_FLAG_NORMAL;
        return v.x;
    }
    g.flag_d = 0;
    return g.extra_d;
}

template <class G> RR_DEV float rr_log_normal(G& g, float mean, float stddev)
{
    if (g.flag != RR_FLAG_LOG_NORMAL) {
        float2 v = g.bm_pair();
        g.extra = expf(fmaf(stddev, v.y, mean));
        g.flag = RR_FLAG_LOG_NORMAL;
        return expf(fmaf(stddev, v.x, mean));
    }
    g.flag = 0;
    return g.extra;
}

template <class G> RR_DEV double rr_log_normal_double(G& g, double mean, double stddev)
{
    if (g.flag_d != RR_FLAG_LOG_NORMAL) {
        double2 v = g.bm_pair_double();
        g.extra_d = exp(fma(stddev, v.y, mean));
        g.flag_d = RR_FLAG_LOG_NORMAL;
        return exp(fma(stddev, v.x, mean));
    }
    g.flag_d = 0;
    return g.extra_d;
}
