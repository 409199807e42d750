// rucuda-rand: Sobol32, scrambled Sobol32, Sobol64, scrambled Sobol64, with cuRAND's
// device-API state semantics (one dimension per state).
//
// A state is the index of its next point; the point with index i of dimension d is
// c[d] ^ (xor of V[b][d] over the set bits b of gray(i) = i ^ (i >> 1)), and stepping
// from index i to i + 1 flips V[lowest zero bit of i][d]. Direction vectors are stored
// bit-major (V[b][d] at vectors[b * dims + d]) so that a warp's loads coalesce.
//
// Layout: as for the pseudo-random generators (chunk c of C elements belongs to state
// c % dims), but several threads share a dimension: thread t serves dimension t % dims and
// writes `per_thread` consecutive chunks of it, from chunk (t / dims) * per_thread on, so a
// warp writes the same chunk number of 32 neighbouring dimensions: adjacent 16-byte
// chunks. (With per_thread = 1, thread t writes chunk t: adjacent too, for any dims; the
// host picks that below 32 dimensions.) Indices are read from idx_in and the advanced ones written to idx_out (the host
// swaps the two buffers after each call), since all the threads of a dimension read its
// starting index.

// The direction vector that steps index i to i + 1: the lowest zero bit of i (the last
// one when i is all ones).
RR_DEV int rr_sobol_flip(rr_u32 i)
{
    int y = __ffs((int)~i);
    return y ? y - 1 : 31;
}
RR_DEV int rr_sobol_flip(rr_u64 i)
{
    int y = __ffsll((long long)~i);
    return y ? y - 1 : 63;
}
// The lowest set bit of a nonzero word.
RR_DEV int rr_lowest_bit(rr_u32 g) { return __ffs((int)g) - 1; }
RR_DEV int rr_lowest_bit(rr_u64 g) { return __ffsll((long long)g) - 1; }

// Writes one chunk (C elements from v) at element `base`: one 16-byte store when the
// chunk is whole and the array aligned; the short last chunk element by element.
template <class T, int C>
RR_DEV void rr_sobol_store(T* __restrict__ out, rr_u64 base, rr_u64 n, const T (&v)[C], bool aligned)
{
    if (base + C <= n) {
        if (aligned) {
            if (C == 4) {
                uint4 q;
                q.x = (rr_u32)v[0];
                q.y = (rr_u32)v[1 % C];
                q.z = (rr_u32)v[2 % C];
                q.w = (rr_u32)v[3 % C];
                *(uint4*)(out + base) = q;
            } else {
                ulonglong2 q;
                q.x = (rr_u64)v[0];
                q.y = (rr_u64)v[1 % C];
                *(ulonglong2*)(out + base) = q;
            }
        } else {
#pragma unroll
            for (int j = 0; j < C; j++)
                out[base + j] = v[j];
        }
    } else {
        for (int j = 0; j < C && base + j < n; j++)
            out[base + j] = v[j];
    }
}

// x XOR the direction vectors of dimension d over the set bits of g.
template <class W>
RR_DEV W rr_sobol_combine(W x, W g, const W* __restrict__ vectors, rr_u32 dims, rr_u32 d)
{
    while (g != 0) {
        int b = rr_lowest_bit(g);
        g &= g - 1;
        x ^= __ldg(vectors + (rr_u64)b * dims + d);
    }
    return x;
}

// Direction vector b of dimension d; vectors 0 and 1, the most used, come from registers.
template <class W>
RR_DEV W rr_sobol_vector(int b, W v0, W v1, const W* __restrict__ vectors, rr_u32 dims, rr_u32 d)
{
    return b == 0 ? v0 : b == 1 ? v1 : __ldg(vectors + (rr_u64)b * dims + d);
}

// The elements of C consecutive points from index i (point x), stepping i and x past
// them one flip at a time.
template <class W, class D, class T, int C>
RR_DEV void rr_sobol_points(T (&v)[C], W& x, W& i, W v0, W v1, const W* __restrict__ vectors,
                            rr_u32 dims, rr_u32 d, const RRParams& p)
{
#pragma unroll
    for (int j = 0; j < C; j++) {
        v[j] = D::apply(x, p);
        int b = rr_sobol_flip(i);
        x ^= rr_sobol_vector<W>(b, v0, v1, vectors, dims, d);
        i++;
    }
}

// The strided fill's step from high part H to H + 2^s: P(gray(H)) flips V[s - 1] and
// V[s + lowest zero bit of H >> s] (when below the word size).
template <class W>
RR_DEV void rr_sobol_next_high(W& x_high, W& H, int s, W vs1, const W* __restrict__ vectors,
                               rr_u32 dims, rr_u32 d)
{
    const int bits = (int)(sizeof(W) * 8);
    int hb = s + rr_sobol_flip((W)(H >> s));
    x_high ^= vs1;
    if (hb < bits)
        x_high ^= __ldg(vectors + (rr_u64)hb * dims + d);
    H += (W)1 << s;
}

// Few dimensions: W = 2^wlog2 threads per dimension, thread (d, w) writes chunks
// t, t + T, t + 2T, ... (T = dims * W threads; adjacent threads, adjacent chunks). Its points
// are i_j = start + C w + j 2^s with 2^s = C W: below bit s the index stays L, above it
// counts H_j = h_j 2^s. Since gray(H + L) = gray(H) ^ gray(L) for L < 2^s and H a multiple
// of 2^s, the point is c ^ P(gray(L)) ^ P(gray(H_j)) (P: the XOR of the direction vectors
// at the set bits). And gray(h 2^s) = gray(h) 2^s + (h & 1) 2^(s-1), so from h to h + 1
// P(gray(H)) flips V[s + lowest zero bit of h] and V[s - 1]: two XORs per chunk.
template <class W, class D, class T, int C>
RR_DEV void rr_sobol_fill_strided(W start, rr_u32 d, rr_u64 w, rr_u32 dims,
                                  const W* __restrict__ vectors, const W* __restrict__ scramble,
                                  T* __restrict__ out, rr_u64 n, rr_u64 nchunks, rr_u32 wlog2,
                                  const RRParams& p)
{
    const int s = (int)wlog2 + (C == 4 ? 2 : 1);
    const rr_u64 stride = (rr_u64)dims << wlog2;
    rr_u64 c = d + (rr_u64)dims * w;
    if (c >= nchunks)
        return;
    const W i0 = start + (W)(w * C);
    const W low_mask = (W)(((W)1 << s) - 1);
    const W L = i0 & low_mask;
    W H = i0 & ~low_mask;
    const W x_low = (scramble ? scramble[d] : (W)0) ^ rr_sobol_combine<W>(0, L ^ (L >> 1), vectors, dims, d);
    W x_high = rr_sobol_combine<W>(0, H ^ (H >> 1), vectors, dims, d);
    const W v0 = __ldg(vectors + d);
    const W v1 = __ldg(vectors + dims + d);
    const W vs1 = __ldg(vectors + (rr_u64)(s - 1) * dims + d);
    const bool aligned = (((unsigned long long)out) & 15) == 0;
    if (L <= (W)(low_mask - (C - 1))) {
        // No carry out of the low bits inside a chunk (always so when the dimension's index
        // is a multiple of C): the chunk's points are P(gray(H)) ^ xl[j], with xl[j] the
        // low part of point L + j, fixed for the thread. No flips in the loop.
        W xl[C];
        xl[0] = x_low;
        W l = L;
#pragma unroll
        for (int j = 1; j < C; j++) {
            int b = rr_sobol_flip(l);
            xl[j] = xl[j - 1] ^ rr_sobol_vector<W>(b, v0, v1, vectors, dims, d);
            l++;
        }
        for (; c < nchunks; c += stride) {
            T v[C];
#pragma unroll
            for (int j = 0; j < C; j++)
                v[j] = D::apply(xl[j] ^ x_high, p);
            rr_sobol_store<T, C>(out, c * C, n, v, aligned);
            rr_sobol_next_high<W>(x_high, H, s, vs1, vectors, dims, d);
        }
        return;
    }
    for (; c < nchunks; c += stride) {
        W i = H | L;
        W x = x_low ^ x_high;
        T v[C];
        rr_sobol_points<W, D, T, C>(v, x, i, v0, v1, vectors, dims, d, p);
        rr_sobol_store<T, C>(out, c * C, n, v, aligned);
        rr_sobol_next_high<W>(x_high, H, s, vs1, vectors, dims, d);
    }
}

// D::apply(W x, const RRParams&) -> T (the element's bits); C elements of T per chunk.
template <class W, class D, class T, int C>
RR_DEV void rr_sobol_fill(const W* __restrict__ idx_in, W* __restrict__ idx_out, rr_u32 dims,
                          const W* __restrict__ vectors, const W* __restrict__ scramble,
                          T* __restrict__ out, rr_u64 n, rr_u64 per_thread, rr_u32 wlog2,
                          const RRParams& p)
{
    const rr_u64 t = (rr_u64)blockIdx.x * blockDim.x + threadIdx.x;
    const rr_u32 d = (rr_u32)(t % dims);
    const rr_u64 w = t / dims;
    const rr_u64 nchunks = (n + C - 1) / C;
    // Chunks of dimension d: d, d + dims, ...
    const rr_u64 mine = d < nchunks ? (nchunks - 1 - d) / dims + 1 : 0;
    const W start = idx_in[d];
    if (w == 0) {
        rr_u64 count = mine * C;
        const rr_u32 rem = (rr_u32)(n % C);
        if (rem && nchunks > 0 && (nchunks - 1) % dims == d)
            count -= C - rem;
        idx_out[d] = start + (W)count;
    }
    if (per_thread == 0) {
        rr_sobol_fill_strided<W, D, T, C>(start, d, w, dims, vectors, scramble, out, n,
                                         nchunks, wlog2, p);
        return;
    }
    const rr_u64 k0 = w * per_thread;
    if (k0 >= mine)
        return;
    const rr_u64 k1 = k0 + per_thread < mine ? k0 + per_thread : mine;

    // The point at the thread's first index, directly.
    W i = start + (W)(k0 * C);
    W x = rr_sobol_combine<W>(scramble ? scramble[d] : (W)0, i ^ (i >> 1), vectors, dims, d);
    const W v0 = __ldg(vectors + d);
    const W v1 = __ldg(vectors + dims + d);
    const bool aligned = (((unsigned long long)out) & 15) == 0;
    if ((i & (W)(C - 1)) == 0) {
        // Chunks start at multiples of C (always so when the dimension's index is): the
        // chunk's points are x ^ P(gray(j)), j < C, and one flip moves to the next chunk.
        const W low[4] = {0, v0, v0 ^ v1, v1};
        for (rr_u64 k = k0; k < k1; k++) {
            const rr_u64 base = (d + (rr_u64)dims * k) * C;
            T v[C];
#pragma unroll
            for (int j = 0; j < C; j++)
                v[j] = D::apply(x ^ low[j], p);
            rr_sobol_store<T, C>(out, base, n, v, aligned);
            int b = rr_sobol_flip((W)(i + (W)(C - 1)));
            x ^= low[C - 1] ^ rr_sobol_vector<W>(b, v0, v1, vectors, dims, d);
            i += (W)C;
        }
        return;
    }
    for (rr_u64 k = k0; k < k1; k++) {
        const rr_u64 base = (d + (rr_u64)dims * k) * C;
        T v[C];
        rr_sobol_points<W, D, T, C>(v, x, i, v0, v1, vectors, dims, d, p);
        rr_sobol_store<T, C>(out, base, n, v, aligned);
    }
}

// Distributions, from one raw point.
struct RRSobolRaw {
    RR_DEV rr_u32 apply(rr_u32 x, const RRParams&) { return x; }
    RR_DEV rr_u64 apply(rr_u64 x, const RRParams&) { return x; }
};
struct RRSobolUniform {
    RR_DEV rr_u32 apply(rr_u32 x, const RRParams&) { return rr_f2u(rr_uniform(x)); }
    RR_DEV rr_u32 apply(rr_u64 x, const RRParams&) { return rr_f2u(rr_uniform64(x)); }
};
struct RRSobolUniformDouble {
    RR_DEV rr_u64 apply(rr_u32 x, const RRParams&) { return rr_d2u(rr_uniform_double(x)); }
    RR_DEV rr_u64 apply(rr_u64 x, const RRParams&) { return rr_d2u(rr_uniform_double64(x)); }
};
struct RRSobolNormal {
    RR_DEV rr_u32 apply(rr_u32 x, const RRParams& p)
    {
        return rr_f2u(fmaf((float)p.stddev, rr_normal_icdf(x), (float)p.mean));
    }
    RR_DEV rr_u32 apply(rr_u64 x, const RRParams& p)
    {
        return rr_f2u(fmaf((float)p.stddev, rr_normal_icdf64(x), (float)p.mean));
    }
};
struct RRSobolNormalDouble {
    RR_DEV rr_u64 apply(rr_u32 x, const RRParams& p)
    {
        return rr_d2u(fma(p.stddev, rr_normal_icdf_double(x), p.mean));
    }
    RR_DEV rr_u64 apply(rr_u64 x, const RRParams& p)
    {
        return rr_d2u(fma(p.stddev, rr_normal_icdf_double64(x), p.mean));
    }
};
struct RRSobolLogNormal {
    RR_DEV rr_u32 apply(rr_u32 x, const RRParams& p)
    {
        return rr_f2u(expf(fmaf((float)p.stddev, rr_normal_icdf(x), (float)p.mean)));
    }
    RR_DEV rr_u32 apply(rr_u64 x, const RRParams& p)
    {
        return rr_f2u(expf(fmaf((float)p.stddev, rr_normal_icdf64(x), (float)p.mean)));
    }
};
struct RRSobolLogNormalDouble {
    RR_DEV rr_u64 apply(rr_u32 x, const RRParams& p)
    {
        return rr_d2u(exp(fma(p.stddev, rr_normal_icdf_double(x), p.mean)));
    }
    RR_DEV rr_u64 apply(rr_u64 x, const RRParams& p)
    {
        return rr_d2u(exp(fma(p.stddev, rr_normal_icdf_double64(x), p.mean)));
    }
};
struct RRSobolPoisson {
    RR_DEV rr_u32 apply(rr_u32 x, const RRParams& p) { return rr_poisson_quasi(x, p.lambda); }
    RR_DEV rr_u32 apply(rr_u64 x, const RRParams& p) { return rr_poisson_quasi64(x, p.lambda); }
};

// NAME(idx_in, idx_out, dims, vectors, scramble, out, n, per_thread, wlog2, mean, stddev,
//      lambda): per_thread > 0, runs of per_thread chunks per thread; per_thread == 0,
//      2^wlog2 threads per dimension, strided (see rr_sobol_fill_strided).
#define RR_SOBOL_KERNEL(NAME, W, D, T, C)                                                  \
    extern "C" __global__ void __launch_bounds__(256)                                      \
        NAME(const W* idx_in, W* idx_out, rr_u32 dims, const W* vectors, const W* scramble, \
             T* out, rr_u64 n, rr_u64 per_thread, rr_u32 wlog2, double mean, double stddev, \
             double lambda)                                                                \
    {                                                                                      \
        RRParams p = {mean, stddev, lambda};                                               \
        rr_sobol_fill<W, D, T, C>(idx_in, idx_out, dims, vectors, scramble, out, n,         \
                                  per_thread, wlog2, p);                                   \
    }

RR_SOBOL_KERNEL(rr_sobol32_raw_u32, rr_u32, RRSobolRaw, rr_u32, 4)
RR_SOBOL_KERNEL(rr_sobol32_uniform_f32, rr_u32, RRSobolUniform, rr_u32, 4)
RR_SOBOL_KERNEL(rr_sobol32_uniform_f64, rr_u32, RRSobolUniformDouble, rr_u64, 2)
RR_SOBOL_KERNEL(rr_sobol32_normal_f32, rr_u32, RRSobolNormal, rr_u32, 4)
RR_SOBOL_KERNEL(rr_sobol32_normal_f64, rr_u32, RRSobolNormalDouble, rr_u64, 2)
RR_SOBOL_KERNEL(rr_sobol32_log_normal_f32, rr_u32, RRSobolLogNormal, rr_u32, 4)
RR_SOBOL_KERNEL(rr_sobol32_log_normal_f64, rr_u32, RRSobolLogNormalDouble, rr_u64, 2)
RR_SOBOL_KERNEL(rr_sobol32_poisson_u32, rr_u32, RRSobolPoisson, rr_u32, 4)
RR_SOBOL_KERNEL(rr_sobol64_raw_u64, rr_u64, RRSobolRaw, rr_u64, 2)
RR_SOBOL_KERNEL(rr_sobol64_uniform_f32, rr_u64, RRSobolUniform, rr_u32, 4)
RR_SOBOL_KERNEL(rr_sobol64_uniform_f64, rr_u64, RRSobolUniformDouble, rr_u64, 2)
RR_SOBOL_KERNEL(rr_sobol64_normal_f32, rr_u64, RRSobolNormal, rr_u32, 4)
RR_SOBOL_KERNEL(rr_sobol64_normal_f64, rr_u64, RRSobolNormalDouble, rr_u64, 2)
RR_SOBOL_KERNEL(rr_sobol64_log_normal_f32, rr_u64, RRSobolLogNormal, rr_u32, 4)
RR_SOBOL_KERNEL(rr_sobol64_log_normal_f64, rr_u64, RRSobolLogNormalDouble, rr_u64, 2)
RR_SOBOL_KERNEL(rr_sobol64_poisson_u32, rr_u64, RRSobolPoisson, rr_u32, 4)

// skipahead(count) on dimensions [0, dims) (counts[d] when counts is given).
extern "C" __global__ void __launch_bounds__(256)
    rr_sobol32_skipahead(rr_u32* idx, rr_u32 dims, const rr_u32* counts, rr_u32 count)
{
    const rr_u64 t = (rr_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < dims) idx[t] += counts ? counts[t] : count;
}
extern "C" __global__ void __launch_bounds__(256)
    rr_sobol64_skipahead(rr_u64* idx, rr_u32 dims, const rr_u64* counts, rr_u64 count)
{
    const rr_u64 t = (rr_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < dims) idx[t] += counts ? counts[t] : count;
}
