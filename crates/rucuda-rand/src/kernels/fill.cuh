// rucuda-rand: the fill loops of the pseudo-random generators (one state per thread).
//
// Layout: element i of the output lies in 16-byte chunk i / C (C = 4 for 32-bit
// elements, 2 for 64-bit ones); chunk c belongs to state c % nstates. Thread t loads
// state t once, writes its chunks t, t + nstates, ... with one 16-byte store each (when
// the array is 16-byte aligned), the short last chunk element by element, and stores the
// state back once. A thread with no chunk does not touch its state.
//
// A distribution D provides, for generator G:
//   word     the element type (rr_u32 bits of a float or integer, or rr_u64 bits)
//   chunk(G&, const RRParams&)  one full chunk, as uint4 (C = 4) or ulonglong2 (C = 2)
//   one(G&, const RRParams&)    one element, as the chunk would have made it

struct RRParams {
    double mean;
    double stddev;
    double lambda;
};

// A 16-byte chunk of elements of word W: C of them, one V store when aligned, else
// store_words.
template <class W> struct RRChunk;
template <> struct RRChunk<rr_u32> {
    typedef uint4 V;
    enum { C = 4 };
    RR_METHOD static void store_words(rr_u32* out, const uint4& v)
    {
        out[0] = v.x;
        out[1] = v.y;
        out[2] = v.z;
        out[3] = v.w;
    }
};
template <> struct RRChunk<rr_u64> {
    typedef ulonglong2 V;
    enum { C = 2 };
    RR_METHOD static void store_words(rr_u64* out, const ulonglong2& v)
    {
        out[0] = v.x;
        out[1] = v.y;
    }
};

template <class G, class D, class W>
RR_DEV void rr_fill(typename G::State* __restrict__ states, rr_u32 nstates, W* __restrict__ out,
                    rr_u64 n, const RRParams& p)
{
    typedef RRChunk<W> K;
    const rr_u64 t = (rr_u64)blockIdx.x * blockDim.x + threadIdx.x;
    const rr_u64 full = n / K::C;
    const rr_u32 rem = (rr_u32)(n % K::C);
    if (t >= nstates || t >= full + (rem ? 1 : 0))
        return;
    G g;
    g.load(states[t]);
    rr_u64 c = t;
    if ((((unsigned long long)out) & 15) == 0) {
        typename K::V* __restrict__ outv = (typename K::V*)out;
        for (; c < full; c += nstates)
            outv[c] = D::chunk(g, p);
    } else {
        for (; c < full; c += nstates) {
            typename K::V v = D::chunk(g, p);
            K::store_words(out + K::C * c, v);
        }
    }
    if (rem && c == full) {
        for (rr_u32 j = 0; j < rem; j++)
            out[K::C * c + j] = D::one(g, p);
    }
    g.store(states[t]);
}

RR_DEV rr_u32 rr_f2u(float x) { return __float_as_uint(x); }
RR_DEV rr_u64 rr_d2u(double x) { return (rr_u64)__double_as_longlong(x); }

// What the pseudo-random generators G share (as the base RRPseudo<G>): the loads and
// stores of the Box-Muller cache (G's fields flag, extra, flag_d, extra_d: cuRAND's
// boxmuller_flag, boxmuller_extra and their double twins, under the same names in every
// state in memory), and the four-output steps of the fill loops built on G's next(),
// uniform() and bm_pair() (Philox has faster ones of its own, which hide these).
template <class G> struct RRPseudo {
    template <class S> RR_METHOD void load_cache(const S& s)
    {
        G& g = static_cast<G&>(*this);
        g.flag = s.flag;
        g.extra = s.extra;
        g.flag_d = s.flag_d;
        g.extra_d = s.extra_d;
    }
    template <class S> RR_METHOD void store_cache(S& s) const
    {
        const G& g = static_cast<const G&>(*this);
        s.flag = g.flag;
        s.extra = g.extra;
        s.flag_d = g.flag_d;
        s.extra_d = g.extra_d;
    }
    // Nothing cached (curand_init).
    RR_METHOD void clear_cache()
    {
        G& g = static_cast<G&>(*this);
        g.flag = 0;
        g.extra = 0.0f;
        g.flag_d = 0;
        g.extra_d = 0.0;
    }

    // curand four times.
    RR_METHOD uint4 next4()
    {
        G& g = static_cast<G&>(*this);
        uint4 r;
        r.x = g.next();
        r.y = g.next();
        r.z = g.next();
        r.w = g.next();
        return r;
    }
    // curand_uniform four times.
    RR_METHOD uint4 uniform4()
    {
        G& g = static_cast<G&>(*this);
        uint4 r;
        r.x = rr_f2u(g.uniform());
        r.y = rr_f2u(g.uniform());
        r.z = rr_f2u(g.uniform());
        r.w = rr_f2u(g.uniform());
        return r;
    }
    // Two pairs, one bm_pair after the other.
    RR_METHOD void bm_pairs(float2& a, float2& b)
    {
        G& g = static_cast<G&>(*this);
        a = g.bm_pair();
        b = g.bm_pair();
    }
    RR_METHOD double normal_double() { return rr_normal_double(static_cast<G&>(*this)); }
};

// ---- distributions of the pseudo-random generators -------------------------------------

// curand: raw 32-bit outputs.
struct RRRaw {
    template <class G> RR_DEV uint4 chunk(G& g, const RRParams&) { return g.next4(); }
    template <class G> RR_DEV rr_u32 one(G& g, const RRParams&) { return g.next(); }
};

// curand_uniform.
struct RRUniform {
    template <class G> RR_DEV uint4 chunk(G& g, const RRParams& p)
    {
        return g.uniform4();
    }
    template <class G> RR_DEV rr_u32 one(G& g, const RRParams&) { return rr_f2u(g.uniform()); }
};

// curand_uniform_double.
struct RRUniformDouble {
    template <class G> RR_DEV ulonglong2 chunk(G& g, const RRParams&)
    {
        ulonglong2 r;
        r.x = rr_d2u(g.uniform_double());
        r.y = rr_d2u(g.uniform_double());
        return r;
    }
    template <class G> RR_DEV rr_u64 one(G& g, const RRParams&) { return rr_d2u(g.uniform_double()); }
};

// mean + stddev * curand_normal.
struct RRNormal {
    template <class G> RR_DEV uint4 chunk(G& g, const RRParams& p)
    {
        const float mean = (float)p.mean, stddev = (float)p.stddev;
        // Four curand_normal calls make two fresh pairs a, b. Without a cached value they
        // return a.x, a.y, b.x, b.y and leave nothing cached; with one, they return it,
        // a.x, a.y, b.x and cache b.y. Either way the last pair leaves b.y in extra. One
        // straight path (one bm_pairs, no per-output branches) whatever the flag.
        const bool cached = g.flag == RR_FLAG_NORMAL;
        const float first = g.extra;
        float2 a, b;
        g.bm_pairs(a, b);
        g.extra = b.y;
        g.flag = cached ? RR_FLAG_NORMAL : 0;
        uint4 r;
        r.x = rr_f2u(fmaf(stddev, cached ? first : a.x, mean));
        r.y = rr_f2u(fmaf(stddev, cached ? a.x : a.y, mean));
        r.z = rr_f2u(fmaf(stddev, cached ? a.y : b.x, mean));
        r.w = rr_f2u(fmaf(stddev, cached ? b.x : b.y, mean));
        return r;
    }
    template <class G> RR_DEV rr_u32 one(G& g, const RRParams& p)
    {
        return rr_f2u(fmaf((float)p.stddev, rr_normal(g), (float)p.mean));
    }
};

// mean + stddev * curand_normal_double.
struct RRNormalDouble {
    template <class G> RR_DEV ulonglong2 chunk(G& g, const RRParams& p)
    {
        ulonglong2 r;
        if (g.flag_d != RR_FLAG_NORMAL) {
            double2 a = g.bm_pair_double();
            g.flag_d = 0;
            r.x = rr_d2u(fma(p.stddev, a.x, p.mean));
            r.y = rr_d2u(fma(p.stddev, a.y, p.mean));
        } else {
            r.x = rr_d2u(fma(p.stddev, rr_normal_double(g), p.mean));
            r.y = rr_d2u(fma(p.stddev, rr_normal_double(g), p.mean));
        }
        return r;
    }
    template <class G> RR_DEV rr_u64 one(G& g, const RRParams& p)
    {
        return rr_d2u(fma(p.stddev, rr_normal_double(g), p.mean));
    }
};

// curand_log_normal(state, mean, stddev).
struct RRLogNormal {
    template <class G> RR_DEV uint4 chunk(G& g, const RRParams& p)
    {
        const float mean = (float)p.mean, stddev = (float)p.stddev;
        uint4 r;
        r.x = rr_f2u(rr_log_normal(g, mean, stddev));
        r.y = rr_f2u(rr_log_normal(g, mean, stddev));
        r.z = rr_f2u(rr_log_normal(g, mean, stddev));
        r.w = rr_f2u(rr_log_normal(g, mean, stddev));
        return r;
    }
    template <class G> RR_DEV rr_u32 one(G& g, const RRParams& p)
    {
        return rr_f2u(rr_log_normal(g, (float)p.mean, (float)p.stddev));
    }
};

// curand_log_normal_double(state, mean, stddev).
struct RRLogNormalDouble {
    template <class G> RR_DEV ulonglong2 chunk(G& g, const RRParams& p)
    {
        ulonglong2 r;
        r.x = rr_d2u(rr_log_normal_double(g, p.mean, p.stddev));
        r.y = rr_d2u(rr_log_normal_double(g, p.mean, p.stddev));
        return r;
    }
    template <class G> RR_DEV rr_u64 one(G& g, const RRParams& p)
    {
        return rr_d2u(rr_log_normal_double(g, p.mean, p.stddev));
    }
};

// curand_poisson(state, lambda).
struct RRPoisson {
    template <class G> RR_DEV uint4 chunk(G& g, const RRParams& p)
    {
        uint4 r;
        r.x = rr_poisson_pseudo(g, p.lambda);
        r.y = rr_poisson_pseudo(g, p.lambda);
        r.z = rr_poisson_pseudo(g, p.lambda);
        r.w = rr_poisson_pseudo(g, p.lambda);
        return r;
    }
    template <class G> RR_DEV rr_u32 one(G& g, const RRParams& p)
    {
        return rr_poisson_pseudo(g, p.lambda);
    }
};

// The extern "C" kernels of one pseudo-random generator G named NAME:
//   NAME_raw_u32, NAME_uniform_f32, NAME_uniform_f64, NAME_normal_f32, NAME_normal_f64,
//   NAME_log_normal_f32, NAME_log_normal_f64, NAME_poisson_u32, each
//   (State* states, unsigned nstates, T* out, unsigned long long n,
//    double mean, double stddev, double lambda).
#define RR_FILL_KERNEL(NAME, G, D, SUFFIX, T)                                               \
    extern "C" __global__ void __launch_bounds__(256)                                      \
        NAME##_##SUFFIX(G::State* states, rr_u32 nstates, T* out, rr_u64 n, double mean,   \
                        double stddev, double lambda)                                      \
    {                                                                                      \
        RRParams p = {mean, stddev, lambda};                                               \
        rr_fill<G, D>(states, nstates, out, n, p);                                         \
    }

#define RR_PSEUDO_KERNELS(NAME, G)                                                         \
    RR_FILL_KERNEL(NAME, G, RRRaw, raw_u32, rr_u32)                                        \
    RR_FILL_KERNEL(NAME, G, RRUniform, uniform_f32, rr_u32)                                \
    RR_FILL_KERNEL(NAME, G, RRUniformDouble, uniform_f64, rr_u64)                          \
    RR_FILL_KERNEL(NAME, G, RRNormal, normal_f32, rr_u32)                                  \
    RR_FILL_KERNEL(NAME, G, RRNormalDouble, normal_f64, rr_u64)                            \
    RR_FILL_KERNEL(NAME, G, RRLogNormal, log_normal_f32, rr_u32)                           \
    RR_FILL_KERNEL(NAME, G, RRLogNormalDouble, log_normal_f64, rr_u64)                     \
    RR_FILL_KERNEL(NAME, G, RRPoisson, poisson_u32, rr_u32)

// Where the per-state init and skip-ahead kernels read their arguments: an array when
// given (non-null), else the scalar (for subsequences, base + state index).
RR_DEV rr_u64 rr_arg(const rr_u64* a, rr_u64 scalar, rr_u64 t, bool add_index)
{
    return a ? a[t] : (add_index ? scalar + t : scalar);
}
