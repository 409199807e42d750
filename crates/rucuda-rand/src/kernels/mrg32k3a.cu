// rucuda-rand: MRG32k3a, with cuRAND's device-API state semantics.

#define RR_MRG_M1 4294967087u
#define RR_MRG_M2 4294944443u
#define RR_MRG_M1C 209u
#define RR_MRG_M2C 22853u
#define RR_MRG_A12 1403580u
#define RR_MRG_A13N 810728u
#define RR_MRG_A21 527612u
#define RR_MRG_A23N 1370589u
// Scale of the combined output into (0, 1] and into 32 bits.
#define RR_MRG_NORM 2.3283065498378288e-10
#define RR_MRG_BITS_NORM 1.000000048662
#define RR_MRG_SUBSEQUENCE_LOG2 76
#define RR_MRG_SEQUENCE_LOG2 127
// Words per entry of the jump table: A1^(2^k) then A2^(2^k), 3x3 row-major each.
#define RR_MRG_TABLE_WORDS 18

// The state in memory (48 bytes).
struct RRMrgState {
    rr_u32 s1[3];
    rr_u32 s2[3];
    rr_u32 flag;
    float extra;
    rr_u32 flag_d;
    rr_u32 pad;
    double extra_d;
};

// a * b + c with a 32x32 -> 64-bit multiply (one IMAD.WIDE.U32).
RR_DEV rr_u64 rr_umad(rr_u32 a, rr_u32 b, rr_u64 c)
{
#ifndef RR_HOST_EMULATION
    rr_u64 r;
    asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r) : "r"(a), "r"(b), "l"(c));
    return r;
#else
    return (rr_u64)a * b + c;
#endif
}

// p mod m1 for p < 2^53: fold the high word in (2^32 = 209 mod m1), giving r < 2^32 + 2^29,
// then subtract m1 once if r >= m1, i.e. if r has bit 32 set or its low word + 209
// overflows (r - m1 = low word + 209, mod 2^32). All in 32-bit halves.
RR_DEV rr_u32 rr_mrg_reduce1(rr_u64 p)
{
    rr_u64 r = rr_umad((rr_u32)(p >> 32), RR_MRG_M1C, (rr_u32)p);
    rr_u32 lo = (rr_u32)r, hi = (rr_u32)(r >> 32);
    rr_u32 s = lo + RR_MRG_M1C;
    return (hi | (rr_u32)(s < lo)) ? s : lo;
}

// p mod m2 for p < 2^53: two folds (2^32 = 22853 mod m2) give r < 2^32 + 2^19, then one
// conditional subtraction as above.
RR_DEV rr_u32 rr_mrg_reduce2(rr_u64 p)
{
    rr_u64 r = rr_umad((rr_u32)(p >> 32), RR_MRG_M2C, (rr_u32)p);
    r = rr_umad((rr_u32)(r >> 32), RR_MRG_M2C, (rr_u32)r);
    rr_u32 lo = (rr_u32)r, hi = (rr_u32)(r >> 32);
    rr_u32 s = lo + RR_MRG_M2C;
    return (hi | (rr_u32)(s < lo)) ? s : lo;
}

// (a v) mod m for a 3x3 matrix of residues.
RR_DEV void rr_mrg_apply(const rr_u32* __restrict__ a, rr_u32& x0, rr_u32& x1, rr_u32& x2,
                         rr_u64 m)
{
    rr_u64 r[3];
#pragma unroll
    for (int i = 0; i < 3; i++) {
        rr_u64 acc = ((rr_u64)__ldg(a + 3 * i) * x0) % m;
        acc = (acc + ((rr_u64)__ldg(a + 3 * i + 1) * x1) % m) % m;
        acc = (acc + ((rr_u64)__ldg(a + 3 * i + 2) * x2) % m) % m;
        r[i] = acc;
    }
    x0 = (rr_u32)r[0];
    x1 = (rr_u32)r[1];
    x2 = (rr_u32)r[2];
}

struct RRMrg : RRPseudo<RRMrg> {
    typedef RRMrgState State;
    rr_u32 a0, a1, a2, b0, b1, b2;
    rr_u32 flag, flag_d;
    float extra;
    double extra_d;

    RR_METHOD void load(const State& s)
    {
        a0 = s.s1[0];
        a1 = s.s1[1];
        a2 = s.s1[2];
        b0 = s.s2[0];
        b1 = s.s2[1];
        b2 = s.s2[2];
        load_cache(s);
    }
    RR_METHOD void store(State& s) const
    {
        State r;
        r.s1[0] = a0;
        r.s1[1] = a1;
        r.s1[2] = a2;
        r.s2[0] = b0;
        r.s2[1] = b1;
        r.s2[2] = b2;
        store_cache(r);
        r.pad = 0;
        s = r;
    }

    // One step: the combined output, an integer in [1, m1].
    RR_METHOD rr_u32 step()
    {
        // Both products fit 53 bits; the reductions use 2^32 = m1c (mod m1), m2c (mod m2).
        rr_u32 p1 = rr_mrg_reduce1(rr_umad(RR_MRG_A12, a1, (rr_u64)RR_MRG_A13N * (RR_MRG_M1 - a0)));
        a0 = a1;
        a1 = a2;
        a2 = p1;
        rr_u32 p2 = rr_mrg_reduce2(rr_umad(RR_MRG_A21, b2, (rr_u64)RR_MRG_A23N * (RR_MRG_M2 - b0)));
        b0 = b1;
        b1 = b2;
        b2 = p2;
        rr_u32 d = p1 - p2;
        return p1 <= p2 ? d + RR_MRG_M1 : d;
    }
    // curand
    RR_METHOD rr_u32 next() { return (rr_u32)((double)step() * RR_MRG_BITS_NORM); }
    RR_METHOD float uniform() { return (float)(step() * RR_MRG_NORM); }
    RR_METHOD double uniform_double() { return step() * RR_MRG_NORM; }
    RR_METHOD float2 bm_pair()
    {
        float x = uniform();
        float y = uniform() * RR_TWO_PI_F;
        return rr_box_muller_uniforms(x, y);
    }
    RR_METHOD double2 bm_pair_double()
    {
        double x = uniform_double();
        double y = uniform_double() * 2.0;
        return rr_box_muller_double_uniforms(x, y);
    }

    // Both components <- A^(n 2^shift) (table entry k: A1^(2^k), A2^(2^k)).
    RR_METHOD void jump(rr_u64 n, int shift, const rr_u32* __restrict__ table, int powers)
    {
        for (int b = 0; n != 0 && b < 64; b++, n >>= 1) {
            if (!(n & 1) || b + shift >= powers) continue;
            const rr_u32* e = table + (rr_u64)(b + shift) * RR_MRG_TABLE_WORDS;
            rr_mrg_apply(e, a0, a1, a2, RR_MRG_M1);
            rr_mrg_apply(e + 9, b0, b1, b2, RR_MRG_M2);
        }
    }
};

RR_PSEUDO_KERNELS(rr_mrg32k3a, RRMrg)

// curand_init(seed, subsequence, offset) for states [0, n); `table` holds the powers
// (see mrg32k3a::jump::device_table).
extern "C" __global__ void __launch_bounds__(256)
    rr_mrg32k3a_init(RRMrgState* states, rr_u32 n, const rr_u64* seeds, rr_u64 seed,
                     const rr_u64* subsequences, rr_u64 subsequence, const rr_u64* offsets,
                     rr_u64 offset, const rr_u32* table, int powers)
{
    const rr_u64 t = (rr_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    rr_u64 sd = rr_arg(seeds, seed, t, false);
    RRMrg g;
    g.a0 = g.a1 = g.a2 = g.b0 = g.b1 = g.b2 = 12345u;
    if (sd != 0ull) {
        rr_u64 x1 = ((rr_u32)sd) ^ 0x55555555u;
        rr_u64 x2 = ((rr_u32)(sd >> 32)) ^ 0xAAAAAAAAu;
        g.a0 = (rr_u32)((x1 * 12345u) % RR_MRG_M1);
        g.a1 = (rr_u32)((x2 * 12345u) % RR_MRG_M1);
        g.a2 = (rr_u32)((x1 * 12345u) % RR_MRG_M1);
        g.b0 = (rr_u32)((x2 * 12345u) % RR_MRG_M2);
        g.b1 = (rr_u32)((x1 * 12345u) % RR_MRG_M2);
        g.b2 = (rr_u32)((x2 * 12345u) % RR_MRG_M2);
    }
    g.clear_cache();
    g.jump(rr_arg(subsequences, subsequence, t, true), RR_MRG_SUBSEQUENCE_LOG2, table, powers);
    g.jump(rr_arg(offsets, offset, t, false), 0, table, powers);
    g.store(states[t]);
}

// skipahead (kind 0), skipahead_subsequence (1) or skipahead_sequence (2) on states
// [0, n).
extern "C" __global__ void __launch_bounds__(256)
    rr_mrg32k3a_skipahead(RRMrgState* states, rr_u32 n, const rr_u64* counts, rr_u64 count,
                          rr_u32 kind, const rr_u32* table, int powers)
{
    const rr_u64 t = (rr_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    RRMrg g;
    g.load(states[t]);
    int shift = kind == 0 ? 0 : kind == 1 ? RR_MRG_SUBSEQUENCE_LOG2 : RR_MRG_SEQUENCE_LOG2;
    g.jump(rr_arg(counts, count, t, false), shift, table, powers);
    g.store(states[t]);
}
