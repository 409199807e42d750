// rucuda-rand: XORWOW, with cuRAND's device-API state semantics.

#define RR_XORWOW_WEYL 362437u
// Words per GF(2) matrix of the jump table: 160 rows of 5 words.
#define RR_XORWOW_MATRIX_WORDS 800
// cuRAND spaces subsequences 2^67 steps apart.
#define RR_XORWOW_SUBSEQUENCE_LOG2 67

// The state in memory (48 bytes).
struct RRXorwowState {
    rr_u32 d;
    rr_u32 v[5];
    rr_u32 flag;
    float extra;
    rr_u32 flag_d;
    rr_u32 pad;
    double extra_d;
};

struct RRXorwow : RRPseudo<RRXorwow> {
    typedef RRXorwowState State;
    rr_u32 d, v0, v1, v2, v3, v4;
    rr_u32 flag, flag_d;
    float extra;
    double extra_d;

    RR_METHOD void load(const State& s)
    {
        d = s.d;
        v0 = s.v[0];
        v1 = s.v[1];
        v2 = s.v[2];
        v3 = s.v[3];
        v4 = s.v[4];
        load_cache(s);
    }
    RR_METHOD void store(State& s) const
    {
        State r;
        r.d = d;
        r.v[0] = v0;
        r.v[1] = v1;
        r.v[2] = v2;
        r.v[3] = v3;
        r.v[4] = v4;
        store_cache(r);
        r.pad = 0;
        s = r;
    }

    // curand
    RR_METHOD rr_u32 next()
    {
        rr_u32 t = v0 ^ (v0 >> 2);
        v0 = v1;
        v1 = v2;
        v2 = v3;
        v3 = v4;
        v4 = (v4 ^ (v4 << 4)) ^ (t ^ (t << 1));
        d += RR_XORWOW_WEYL;
        return v4 + d;
    }
    RR_METHOD float uniform() { return rr_uniform(next()); }
    // curand_uniform_double of XORWOW: 53 bits from two outputs.
    RR_METHOD double uniform_double()
    {
        rr_u32 x = next();
        rr_u32 y = next();
        return rr_uniform_double_hq(x, y);
    }
    RR_METHOD float2 bm_pair()
    {
        rr_u32 x = next();
        rr_u32 y = next();
        return rr_box_muller(x, y);
    }
    RR_METHOD double2 bm_pair_double()
    {
        rr_u32 x0 = next();
        rr_u32 x1 = next();
        rr_u32 y0 = next();
        rr_u32 y1 = next();
        return rr_box_muller_double(x0, x1, y0, y1);
    }

    // v <- M v for the matrix at m (row i, the image of state bit i, at m[5 i .. 5 i + 5]).
    RR_METHOD void apply(const rr_u32* __restrict__ m)
    {
        rr_u32 r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0;
        const rr_u32 w[5] = {v0, v1, v2, v3, v4};
#pragma unroll
        for (int k = 0; k < 5; k++) {
            rr_u32 bits = w[k];
            const rr_u32* __restrict__ row = m + 5 * 32 * k;
#pragma unroll 4
            for (int b = 0; b < 32; b++) {
                rr_u32 mask = 0u - ((bits >> b) & 1u);
                r0 ^= __ldg(row + 5 * b) & mask;
                r1 ^= __ldg(row + 5 * b + 1) & mask;
                r2 ^= __ldg(row + 5 * b + 2) & mask;
                r3 ^= __ldg(row + 5 * b + 3) & mask;
                r4 ^= __ldg(row + 5 * b + 4) & mask;
            }
        }
        v0 = r0;
        v1 = r1;
        v2 = r2;
        v3 = r3;
        v4 = r4;
    }
    // v <- M^(n 2^shift) v with table[k] = M^(2^k) for k < powers. Every thread of a warp
    // walks the same matrices (predicating its own bits), so the loads are broadcasts.
    RR_METHOD void jump(rr_u64 n, int shift, const rr_u32* __restrict__ table, int powers)
    {
        for (int b = 0; b < 64 && b + shift < powers; b++) {
            bool mine = (n >> b) & 1;
            if (__any_sync(0xffffffffu, mine)) {
                rr_u32 s0 = v0, s1 = v1, s2 = v2, s3 = v3, s4 = v4;
                apply(table + (rr_u64)(b + shift) * RR_XORWOW_MATRIX_WORDS);
                if (!mine) {
                    v0 = s0;
                    v1 = s1;
                    v2 = s2;
                    v3 = s3;
                    v4 = s4;
                }
            }
        }
    }
    // skipahead(n)
    RR_METHOD void skip(rr_u64 n, const rr_u32* table, int powers)
    {
        jump(n, 0, table, powers);
        d += RR_XORWOW_WEYL * (rr_u32)n;
    }
    // skipahead_sequence(n)
    RR_METHOD void skip_sequence(rr_u64 n, const rr_u32* table, int powers)
    {
        jump(n, RR_XORWOW_SUBSEQUENCE_LOG2, table, powers);
    }
};

RR_PSEUDO_KERNELS(rr_xorwow, RRXorwow)

// curand_init(seed, subsequence, offset) for states [0, n); `table` holds M^(2^k),
// k < powers (see xorwow::jump::device_table).
extern "C" __global__ void __launch_bounds__(256)
    rr_xorwow_init(RRXorwowState* states, rr_u32 n, const rr_u64* seeds, rr_u64 seed,
                   const rr_u64* subsequences, rr_u64 subsequence, const rr_u64* offsets,
                   rr_u64 offset, const rr_u32* table, int powers)
{
    const rr_u64 t = (rr_u64)blockIdx.x * blockDim.x + threadIdx.x;
    // Threads past the end still walk the matrices with their warp (no state of theirs
    // is touched).
    const bool live = t < n;
    rr_u64 sd = live ? rr_arg(seeds, seed, t, false) : 0;
    rr_u32 s0 = ((rr_u32)sd) ^ 0xaad26b49u;
    rr_u32 s1 = (rr_u32)(sd >> 32) ^ 0xf7dcefddu;
    rr_u32 t0 = 1099087573u * s0;
    rr_u32 t1 = 2591861531u * s1;
    RRXorwow g;
    g.d = 6615241u + t1 + t0;
    g.v0 = 123456789u + t0;
    g.v1 = 362436069u ^ t0;
    g.v2 = 521288629u + t1;
    g.v3 = 88675123u ^ t1;
    g.v4 = 5783321u + t0;
    g.clear_cache();
    g.skip_sequence(live ? rr_arg(subsequences, subsequence, t, true) : 0, table, powers);
    g.skip(live ? rr_arg(offsets, offset, t, false) : 0, table, powers);
    if (live) g.store(states[t]);
}

// skipahead(count) (sequence == 0) or skipahead_sequence(count) on states [0, n).
extern "C" __global__ void __launch_bounds__(256)
    rr_xorwow_skipahead(RRXorwowState* states, rr_u32 n, const rr_u64* counts, rr_u64 count,
                        rr_u32 sequence, const rr_u32* table, int powers)
{
    const rr_u64 t = (rr_u64)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = t < n;
    RRXorwow g;
    if (live) g.load(states[t]);
    else { g.d = 0; g.v0 = g.v1 = g.v2 = g.v3 = g.v4 = 0; }
    rr_u64 k = live ? rr_arg(counts, count, t, false) : 0;
    if (sequence)
        g.skip_sequence(k, table, powers);
    else
        g.skip(k, table, powers);
    if (live) g.store(states[t]);
}
