// rucuda-rand: Philox4x32-10, with cuRAND's device-API state semantics.

#define RR_PHILOX_M0 0xD2511F53u
#define RR_PHILOX_M1 0xCD9E8D57u
#define RR_PHILOX_W0 0x9E3779B9u
#define RR_PHILOX_W1 0xBB67AE85u

// The state in memory (48 bytes): counter, key, position in the block, Box-Muller cache.
// (Words 6..12 hold the Box-Muller cache at the same places as in the other generators'
// states.)
struct RRPhiloxState {
    uint4 ctr;
    uint2 key;
    rr_u32 flag;
    float extra;
    rr_u32 flag_d;
    rr_u32 position;
    double extra_d;
};

RR_DEV uint4 rr_philox_round(uint4 c, uint2 k)
{
    // One 32x32 -> 64-bit multiply each (mul.wide: a single IMAD.WIDE.U32).
    rr_u64 p0 = (rr_u64)RR_PHILOX_M0 * c.x;
    rr_u64 p1 = (rr_u64)RR_PHILOX_M1 * c.z;
    uint4 r;
    r.x = (rr_u32)(p1 >> 32) ^ c.y ^ k.x;
    r.y = (rr_u32)p1;
    r.z = (rr_u32)(p0 >> 32) ^ c.w ^ k.y;
    r.w = (rr_u32)p0;
    return r;
}

RR_DEV uint4 rr_philox10(uint4 c, uint2 k)
{
#pragma unroll
    for (int i = 0; i < 9; i++) {
        c = rr_philox_round(c, k);
        k.x += RR_PHILOX_W0;
        k.y += RR_PHILOX_W1;
    }
    return rr_philox_round(c, k);
}

// The 128-bit counter plus one.
RR_DEV void rr_philox_incr(uint4& c)
{
    if (++c.x) return;
    if (++c.y) return;
    if (++c.z) return;
    ++c.w;
}

// The counter's low 64 bits plus n, with cuRAND's carry into the high half.
RR_DEV void rr_philox_incr_by(uint4& c, rr_u64 n)
{
    rr_u32 nlo = (rr_u32)n;
    rr_u32 nhi = (rr_u32)(n >> 32);
    c.x += nlo;
    if (c.x < nlo) nhi++;
    c.y += nhi;
    if (nhi <= c.y) return;
    if (++c.z) return;
    ++c.w;
}

// The counter's high 64 bits plus n (no carry out of the top word).
RR_DEV void rr_philox_incr_hi(uint4& c, rr_u64 n)
{
    rr_u32 nlo = (rr_u32)n;
    rr_u32 nhi = (rr_u32)(n >> 32);
    c.z += nlo;
    if (c.z < nlo) nhi++;
    c.w += nhi;
}

struct RRPhilox : RRPseudo<RRPhilox> {
    typedef RRPhiloxState State;
    uint4 ctr;
    uint2 key;
    uint4 out;      // philox(ctr, key): the current block
    rr_u32 pos;     // next output inside it
    rr_u32 flag, flag_d;
    float extra;
    double extra_d;

    RR_METHOD void load(const State& s)
    {
        ctr = s.ctr;
        key = s.key;
        pos = s.position;
        load_cache(s);
        out = rr_philox10(ctr, key);
    }
    RR_METHOD void store(State& s) const
    {
        State r;
        r.ctr = ctr;
        r.key = key;
        r.position = pos;
        store_cache(r);
        s = r;
    }

    // curand
    RR_METHOD rr_u32 next()
    {
        rr_u32 r = pos == 0 ? out.x : pos == 1 ? out.y : pos == 2 ? out.z : out.w;
        if (++pos == 4) {
            rr_philox_incr(ctr);
            out = rr_philox10(ctr, key);
            pos = 0;
        }
        return r;
    }
    // curand4: the next four outputs.
    RR_METHOD uint4 next4()
    {
        uint4 t = out;
        rr_philox_incr(ctr);
        out = rr_philox10(ctr, key);
        if (pos == 0) return t;
        uint4 r;
        if (pos == 1) {
            r.x = t.y; r.y = t.z; r.z = t.w; r.w = out.x;
        } else if (pos == 2) {
            r.x = t.z; r.y = t.w; r.z = out.x; r.w = out.y;
        } else {
            r.x = t.w; r.y = out.x; r.z = out.y; r.w = out.z;
        }
        return r;
    }
    RR_METHOD float uniform() { return rr_uniform(next()); }
    RR_METHOD uint4 uniform4()
    {
        uint4 x = next4();
        uint4 r;
        r.x = rr_f2u(rr_uniform(x.x));
        r.y = rr_f2u(rr_uniform(x.y));
        r.z = rr_f2u(rr_uniform(x.z));
        r.w = rr_f2u(rr_uniform(x.w));
        return r;
    }
    // curand_uniform_double of Philox: one 32-bit output.
    RR_METHOD double uniform_double() { return rr_uniform_double(next()); }
    RR_METHOD float2 bm_pair()
    {
        rr_u32 x = next();
        rr_u32 y = next();
        return rr_box_muller(x, y);
    }
    // Two pairs, as two bm_pair calls make them (outputs 0, 1 then 2, 3), from one
    // next4: one Philox block and no per-output position selects in the fill loop.
    RR_METHOD void bm_pairs(float2& a, float2& b)
    {
        uint4 x = next4();
        a = rr_box_muller(x.x, x.y);
        b = rr_box_muller(x.z, x.w);
    }
    RR_METHOD double2 bm_pair_double()
    {
        uint4 x = next4();
        return rr_box_muller_double(x.x, x.y, x.z, x.w);
    }

    // skipahead(n)
    RR_METHOD void skip(rr_u64 n)
    {
        pos += (rr_u32)(n & 3);
        n /= 4;
        if (pos > 3) {
            n += 1;
            pos -= 4;
        }
        rr_philox_incr_by(ctr, n);
        out = rr_philox10(ctr, key);
    }
    // skipahead_sequence(n)
    RR_METHOD void skip_sequence(rr_u64 n)
    {
        rr_philox_incr_hi(ctr, n);
        out = rr_philox10(ctr, key);
    }
};

RR_PSEUDO_KERNELS(rr_philox, RRPhilox)

// curand_init(seed, subsequence, offset) for states [0, n): each argument from its array
// when given, else the scalar (subsequence: subsequence + state index).
extern "C" __global__ void __launch_bounds__(256)
    rr_philox_init(RRPhiloxState* states, rr_u32 n, const rr_u64* seeds, rr_u64 seed,
                   const rr_u64* subsequences, rr_u64 subsequence, const rr_u64* offsets,
                   rr_u64 offset)
{
    const rr_u64 t = (rr_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    rr_u64 sd = rr_arg(seeds, seed, t, false);
    RRPhilox g;
    g.ctr = make_uint4(0, 0, 0, 0);
    g.key = make_uint2((rr_u32)sd, (rr_u32)(sd >> 32));
    g.pos = 0;
    g.clear_cache();
    g.skip_sequence(rr_arg(subsequences, subsequence, t, true));
    g.skip(rr_arg(offsets, offset, t, false));
    g.store(states[t]);
}

// skipahead(count) (sequence == 0) or skipahead_sequence(count) on states [0, n).
extern "C" __global__ void __launch_bounds__(256)
    rr_philox_skipahead(RRPhiloxState* states, rr_u32 n, const rr_u64* counts, rr_u64 count,
                        rr_u32 sequence)
{
    const rr_u64 t = (rr_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    RRPhilox g;
    g.load(states[t]);
    rr_u64 k = rr_arg(counts, count, t, false);
    if (sequence)
        g.skip_sequence(k);
    else
        g.skip(k);
    g.store(states[t]);
}
