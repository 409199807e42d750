// Runs our kernels on the CPU (see shim.h), one emulated thread at a time, under commands
// read from stdin; prints what they write. Compiled with one family's generated source as
// kernels.cu and FAMILY_PHILOX, FAMILY_XORWOW, FAMILY_MRG32K3A or FAMILY_SOBOL defined.
// Test code only.
#include "shim.h"
#include "kernels.cu"
#include <iostream>
#include <sstream>

typedef unsigned long long u64;

template <class F> static void launch(u64 threads, F f)
{
    blockDim.x = 256;
    u64 blocks = (threads + 255) / 256;
    for (u64 b = 0; b < blocks; b++) {
        blockIdx.x = (unsigned)b;
        for (unsigned t = 0; t < 256; t++) {
            threadIdx.x = t;
            f();
        }
    }
}

template <class T> static void print(const char* tag, const T* p, u64 n)
{
    std::printf("%s", tag);
    for (u64 i = 0; i < n; i++) std::printf(" %llx", (u64)p[i]);
    std::printf("\n");
    std::fflush(stdout);
}

template <class T> static std::vector<T> read_vec(std::istream& in, u64 n)
{
    std::vector<T> v(n);
    for (u64 i = 0; i < n; i++) {
        u64 x;
        in >> x;
        v[i] = (T)x;
    }
    return v;
}

#if defined(FAMILY_PHILOX) || defined(FAMILY_XORWOW) || defined(FAMILY_MRG32K3A)
#if defined(FAMILY_PHILOX)
typedef RRPhiloxState State;
#define K(x) rr_philox_##x
#elif defined(FAMILY_XORWOW)
typedef RRXorwowState State;
#define K(x) rr_xorwow_##x
#define WORDS_PER_POWER RR_XORWOW_MATRIX_WORDS
#else
typedef RRMrgState State;
#define K(x) rr_mrg32k3a_##x
#define WORDS_PER_POWER RR_MRG_TABLE_WORDS
#endif

static std::vector<State> states;
static std::vector<unsigned> table;

template <class T>
static void fill(void (*k)(State*, unsigned, T*, u64, double, double, double), u64 n, double mean,
                 double stddev, double lambda, int misalign)
{
    std::vector<T> out(n + 2, (T)0xdeadbeef);
    T* p = out.data() + (misalign ? 1 : 0);
    unsigned ns = (unsigned)states.size();
    launch(ns, [&] { k(states.data(), ns, p, n, mean, stddev, lambda); });
    print("out", p, n);
}

int main()
{
    std::string cmd;
    while (std::cin >> cmd) {
        if (cmd == "table") {
            u64 n;
            std::cin >> n;
            table = read_vec<unsigned>(std::cin, n);
            std::printf("ok\n");
            std::fflush(stdout);
        } else if (cmd == "init" || cmd == "init_arrays") {
            u64 n, seed = 0, sub = 0, off = 0;
            std::cin >> n;
            std::vector<u64> seeds, subs, offs;
            if (cmd == "init") {
                std::cin >> seed >> sub >> off;
            } else {
                seeds = read_vec<u64>(std::cin, n);
                subs = read_vec<u64>(std::cin, n);
                offs = read_vec<u64>(std::cin, n);
            }
            states.assign(n, State());
            const u64* ps = seeds.empty() ? nullptr : seeds.data();
            const u64* pu = subs.empty() ? nullptr : subs.data();
            const u64* po = offs.empty() ? nullptr : offs.data();
#if defined(FAMILY_PHILOX)
            launch(n, [&] { K(init)(states.data(), (unsigned)n, ps, seed, pu, sub, po, off); });
#else
            int powers = (int)(table.size() / WORDS_PER_POWER);
            launch(n, [&] { K(init)(states.data(), (unsigned)n, ps, seed, pu, sub, po, off, table.data(), powers); });
#endif
            std::printf("ok\n");
            std::fflush(stdout);
        } else if (cmd == "skip") {
            unsigned kind;
            u64 count;
            std::cin >> kind >> count;
            unsigned n = (unsigned)states.size();
#if defined(FAMILY_PHILOX)
            launch(n, [&] { K(skipahead)(states.data(), n, nullptr, count, kind); });
#else
            int powers = (int)(table.size() / WORDS_PER_POWER);
            launch(n, [&] { K(skipahead)(states.data(), n, nullptr, count, kind, table.data(), powers); });
#endif
            std::printf("ok\n");
            std::fflush(stdout);
        } else if (cmd == "fill") {
            std::string name;
            u64 n;
            double mean, stddev, lambda;
            int misalign;
            std::cin >> name >> n >> mean >> stddev >> lambda >> misalign;
            if (name == "raw_u32") fill(K(raw_u32), n, mean, stddev, lambda, misalign);
            else if (name == "uniform_f32") fill(K(uniform_f32), n, mean, stddev, lambda, misalign);
            else if (name == "uniform_f64") fill(K(uniform_f64), n, mean, stddev, lambda, misalign);
            else if (name == "normal_f32") fill(K(normal_f32), n, mean, stddev, lambda, misalign);
            else if (name == "normal_f64") fill(K(normal_f64), n, mean, stddev, lambda, misalign);
            else if (name == "log_normal_f32") fill(K(log_normal_f32), n, mean, stddev, lambda, misalign);
            else if (name == "log_normal_f64") fill(K(log_normal_f64), n, mean, stddev, lambda, misalign);
            else if (name == "poisson_u32") fill(K(poisson_u32), n, mean, stddev, lambda, misalign);
            else { std::printf("error unknown kernel %s\n", name.c_str()); return 1; }
        } else {
            std::printf("error unknown command %s\n", cmd.c_str());
            return 1;
        }
    }
    return 0;
}
#endif

#if defined(FAMILY_SOBOL)
template <class W> struct Sobol {
    std::vector<W> idx, idx2, vectors, scramble;
    unsigned dims = 0;
};
static Sobol<unsigned> s32;
static Sobol<u64> s64;
static int bits = 32;

template <class W, class T>
static void sfill(Sobol<W>& s,
                  void (*k)(const W*, W*, unsigned, const W*, const W*, T*, u64, u64, unsigned, double, double, double),
                  u64 n, u64 per_thread, unsigned wlog2, double mean, double stddev, double lambda, int misalign)
{
    std::vector<T> out(n + 2, (T)0xdeadbeef);
    T* p = out.data() + (misalign ? 1 : 0);
    const u64 C = 16 / sizeof(T);
    u64 nchunks = (n + C - 1) / C;
    u64 kmax = (nchunks + s.dims - 1) / s.dims;
    u64 w = per_thread ? (kmax + per_thread - 1) / per_thread : (1ull << wlog2);
    if (w == 0) w = 1;
    const W* sc = s.scramble.empty() ? nullptr : s.scramble.data();
    launch(s.dims * w, [&] {
        u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
        if (t < s.dims * w)
            k(s.idx.data(), s.idx2.data(), s.dims, s.vectors.data(), sc, p, n, per_thread, wlog2, mean, stddev, lambda);
    });
    std::swap(s.idx, s.idx2);
    print("out", p, n);
}

int main()
{
    std::string cmd;
    while (std::cin >> cmd) {
        if (cmd == "sobol") {
            unsigned d;
            std::string sc;
            std::cin >> bits >> d;
            if (bits == 32) {
                s32.dims = d;
                s32.idx = read_vec<unsigned>(std::cin, d);
                s32.idx2 = s32.idx;
                s32.vectors = read_vec<unsigned>(std::cin, (u64)d * 32);
                std::cin >> sc;
                s32.scramble.clear();
                if (sc == "scramble") s32.scramble = read_vec<unsigned>(std::cin, d);
            } else {
                s64.dims = d;
                s64.idx = read_vec<u64>(std::cin, d);
                s64.idx2 = s64.idx;
                s64.vectors = read_vec<u64>(std::cin, (u64)d * 64);
                std::cin >> sc;
                s64.scramble.clear();
                if (sc == "scramble") s64.scramble = read_vec<u64>(std::cin, d);
            }
            std::printf("ok\n");
            std::fflush(stdout);
        } else if (cmd == "sskip") {
            u64 count;
            std::cin >> count;
            if (bits == 32)
                launch(s32.dims, [&] { rr_sobol32_skipahead(s32.idx.data(), s32.dims, nullptr, (unsigned)count); });
            else
                launch(s64.dims, [&] { rr_sobol64_skipahead(s64.idx.data(), s64.dims, nullptr, count); });
            std::printf("ok\n");
            std::fflush(stdout);
        } else if (cmd == "sfill") {
            std::string name;
            u64 n, per;
            unsigned wlog2;
            double mean, stddev, lambda;
            int misalign;
            std::cin >> name >> n >> per >> wlog2 >> mean >> stddev >> lambda >> misalign;
#define S32(x) if (name == #x) { sfill(s32, rr_sobol32_##x, n, per, wlog2, mean, stddev, lambda, misalign); continue; }
#define S64(x) if (name == #x) { sfill(s64, rr_sobol64_##x, n, per, wlog2, mean, stddev, lambda, misalign); continue; }
            if (bits == 32) {
                S32(raw_u32) S32(uniform_f32) S32(uniform_f64) S32(normal_f32) S32(normal_f64)
                S32(log_normal_f32) S32(log_normal_f64) S32(poisson_u32)
            } else {
                S64(raw_u64) S64(uniform_f32) S64(uniform_f64) S64(normal_f32) S64(normal_f64)
                S64(log_normal_f32) S64(log_normal_f64) S64(poisson_u32)
            }
            std::printf("error unknown kernel %s\n", name.c_str());
            return 1;
        } else {
            std::printf("error unknown command %s\n", cmd.c_str());
            return 1;
        }
    }
    return 0;
}
#endif
