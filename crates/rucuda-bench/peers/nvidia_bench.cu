// NVIDIA peer of rucuda-bench: NVIDIA's own best for each case, through the CUDA runtime and
// NVIDIA's libraries. `run.sh bench` builds it with the GPU machine's nvcc into /tmp and runs
// it before rucuda-bench, which merges its JSON lines ({"case", "lib": "nvidia", "n",
// "value", "unit", "device"}, one a line on stdout) into the table and bench.jsonl.
//
// Settings come from the environment, as for rucuda-bench: RUCUDA_BENCH_QUICK,
// RUCUDA_BENCH_COPY_MIB, RUCUDA_BENCH_CASES, RUCUDA_BENCH_DEVICE.
//
// Cases today: d2d_copy_GBps (cudaMemcpyAsync device to device, read + write bytes); CUB's
// cub::DeviceReduce::Sum (sum_f32_GBps, sum_f64_GBps) and ::Max (max_f32_GBps), 4 or 8 B read
// per element; cub::DeviceScan::InclusiveSum (scan_incl_i32_GBps, scan_incl_f32_GBps,
// scan_incl_i64_GBps), one read and one write per element. Arrays of 2^28 elements (2^24
// with RUCUDA_BENCH_QUICK), filled with ones; CUB's temporary storage is sized and
// allocated once, outside the timing. The rand_*_GSps cases: cuRAND's host API,
// curandGenerateUniform / curandGenerateNormal of 2^28 floats (2^24 when quick) with each
// generator's default settings, and curandGeneratePoisson of 2^26 counts (2^22 when quick)
// with lambda = 1000.25 (the rand_poisson_u32_* cases; the host API's own Poisson method,
// not the device API's rejection method rucuda follows: a throughput reference); libcurand
// is opened at run time with dlopen, so the nvcc line needs no -lcurand.
// Sorting (issue 20; rucuda-bench's cases/sort.rs measures the same work on the same keys,
// a SplitMix64 stream with the same seeds): cub::DeviceRadixSort::SortKeys of 2^28 u32 and
// f32 keys (sort_keys_u32_GKps, sort_keys_f32_GKps) and SortPairs of u32/u32
// (sort_pairs_u32_GKps), sweeps of SortKeys u32 and SortPairs u32/u32 from 2^24 to 2^29
// keys (sort_keys_u32_sweep_GKps, sort_pairs_u32_sweep_GKps); cub::DeviceSegmentedSort::SortKeys of 4096 x 4096 and
// 64 x 128256 f32 (segsort_f32_*_GKps) and SortPairsDescending with positions of the latter
// (sortrows_f32_64x128256_us, what topk is compared with); cub::DeviceHistogram::
// HistogramEven of 2^28 u8 and f32 into 256 bins (histogram_*_256_GBps, bytes read);
// cub::DeviceSelect::If x > 0.5 on 2^28 uniform floats (select_if_f32_GBps, 4 B read per
// element and 4 written per selected one).
// To add one: write a function returning a Result like bench_d2d_copy, list it in CASES
// below, and keep the case name of shared/TARGETS.md.

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>
#include <curand.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace {

struct Result {
    unsigned long long n;
    double value;
    const char* unit;
    // The other sizes of a case that sweeps sizes (one JSON line each).
    std::vector<Result> more;
};

struct Settings {
    bool quick = false;
    size_t copy_bytes = size_t(1024) << 20;
    std::vector<std::string> patterns;
    int device = 0;
};

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t status_ = (call);                                                    \
        if (status_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "nvidia_bench: %s failed: %s\n", #call,                \
                         cudaGetErrorString(status_));                                   \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

Settings read_settings() {
    Settings s;
    const char* quick = std::getenv("RUCUDA_BENCH_QUICK");
    s.quick = quick && *quick && std::strcmp(quick, "0") != 0;
    const char* mib = std::getenv("RUCUDA_BENCH_COPY_MIB");
    unsigned long long copy_mib = (mib && *mib) ? std::strtoull(mib, nullptr, 10) : (s.quick ? 64 : 1024);
    s.copy_bytes = size_t(copy_mib ? copy_mib : 1) << 20;
    if (const char* cases = std::getenv("RUCUDA_BENCH_CASES")) {
        std::string all(cases), item;
        for (size_t start = 0; start <= all.size();) {
            size_t comma = all.find(',', start);
            if (comma == std::string::npos) comma = all.size();
            item = all.substr(start, comma - start);
            item.erase(0, item.find_first_not_of(' '));
            item.erase(item.find_last_not_of(' ') + 1);
            if (!item.empty()) s.patterns.push_back(item);
            start = comma + 1;
        }
    }
    if (const char* device = std::getenv("RUCUDA_BENCH_DEVICE")) s.device = std::atoi(device);
    return s;
}

double median(std::vector<double> samples) {
    std::sort(samples.begin(), samples.end());
    size_t n = samples.size();
    if (n == 0) return 0.0;
    return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2.0;
}

// Seconds between two events around each call of `enqueue` on `stream`, after warm-up.
template <typename F>
std::vector<double> device_seconds(cudaStream_t stream, int warmup, int reps, F enqueue) {
    cudaEvent_t start, end;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&end));
    for (int i = 0; i < warmup; ++i) enqueue();
    CHECK(cudaStreamSynchronize(stream));
    std::vector<double> samples;
    for (int i = 0; i < reps; ++i) {
        CHECK(cudaEventRecord(start, stream));
        enqueue();
        CHECK(cudaEventRecord(end, stream));
        CHECK(cudaEventSynchronize(end));
        float ms = 0.0f;
        CHECK(cudaEventElapsedTime(&ms, start, end));
        samples.push_back(ms / 1e3);
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(end));
    return samples;
}

Result bench_d2d_copy(const Settings& s) {
    size_t bytes = s.copy_bytes;
    void *src = nullptr, *dst = nullptr;
    CHECK(cudaMalloc(&src, bytes));
    CHECK(cudaMalloc(&dst, bytes));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    auto samples = device_seconds(stream, s.quick ? 1 : 3, s.quick ? 5 : 40, [&] {
        CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
    });
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
    return {bytes, 2.0 * double(bytes) / median(samples) / 1e9, "GB/s"};
}

// ---- cuRAND's host API, through dlopen -------------------------------------------------

struct Curand {
    curandStatus_t (*create)(curandGenerator_t*, curandRngType_t) = nullptr;
    curandStatus_t (*seed)(curandGenerator_t, unsigned long long) = nullptr;
    curandStatus_t (*set_stream)(curandGenerator_t, cudaStream_t) = nullptr;
    curandStatus_t (*uniform)(curandGenerator_t, float*, size_t) = nullptr;
    curandStatus_t (*normal)(curandGenerator_t, float*, size_t, float, float) = nullptr;
    curandStatus_t (*poisson)(curandGenerator_t, unsigned int*, size_t, double) = nullptr;
    curandStatus_t (*destroy)(curandGenerator_t) = nullptr;
};

const Curand& curand()
{
    static Curand c;
    static bool loaded = false;
    if (loaded) return c;
    loaded = true;
    const char* names[] = {"libcurand.so", "libcurand.so.10", "/usr/local/cuda/lib64/libcurand.so"};
    void* lib = nullptr;
    for (const char* n : names)
        if ((lib = dlopen(n, RTLD_NOW | RTLD_GLOBAL))) break;
    if (!lib) {
        std::fprintf(stderr, "nvidia_bench: cannot open libcurand: %s\n", dlerror());
        std::exit(1);
    }
    auto sym = [&](const char* name) {
        void* p = dlsym(lib, name);
        if (!p) {
            std::fprintf(stderr, "nvidia_bench: libcurand lacks %s\n", name);
            std::exit(1);
        }
        return p;
    };
    c.create = (decltype(c.create))sym("curandCreateGenerator");
    c.seed = (decltype(c.seed))sym("curandSetPseudoRandomGeneratorSeed");
    c.set_stream = (decltype(c.set_stream))sym("curandSetStream");
    c.uniform = (decltype(c.uniform))sym("curandGenerateUniform");
    c.normal = (decltype(c.normal))sym("curandGenerateNormal");
    c.poisson = (decltype(c.poisson))sym("curandGeneratePoisson");
    c.destroy = (decltype(c.destroy))sym("curandDestroyGenerator");
    return c;
}

#define CURAND_CHECK(call)                                                               \
    do {                                                                                 \
        curandStatus_t status_ = (call);                                                 \
        if (status_ != CURAND_STATUS_SUCCESS) {                                          \
            std::fprintf(stderr, "nvidia_bench: %s failed: cuRAND status %d\n", #call,    \
                         (int)status_);                                                  \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

// Samples per second of curandGenerateUniform (normal = false) or curandGenerateNormal.
Result bench_curand(const Settings& s, curandRngType_t type, bool normal)
{
    const Curand& c = curand();
    size_t n = s.quick ? (size_t(1) << 24) : (size_t(1) << 28);
    float* out = nullptr;
    CHECK(cudaMalloc(&out, n * sizeof(float)));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    curandGenerator_t gen;
    CURAND_CHECK(c.create(&gen, type));
    if (type != CURAND_RNG_QUASI_SOBOL32) CURAND_CHECK(c.seed(gen, 1234));
    CURAND_CHECK(c.set_stream(gen, stream));
    auto samples = device_seconds(stream, s.quick ? 1 : 3, s.quick ? 5 : 20, [&] {
        if (normal)
            CURAND_CHECK(c.normal(gen, out, n, 0.0f, 1.0f));
        else
            CURAND_CHECK(c.uniform(gen, out, n));
    });
    CURAND_CHECK(c.destroy(gen));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(out));
    return {n, double(n) / median(samples) / 1e9, "GS/s"};
}

// Counts per second of curandGeneratePoisson with lambda = 1000.25.
Result bench_curand_poisson(const Settings& s, curandRngType_t type)
{
    const Curand& c = curand();
    size_t n = s.quick ? (size_t(1) << 22) : (size_t(1) << 26);
    unsigned int* out = nullptr;
    CHECK(cudaMalloc(&out, n * sizeof(unsigned int)));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    curandGenerator_t gen;
    CURAND_CHECK(c.create(&gen, type));
    CURAND_CHECK(c.seed(gen, 1234));
    CURAND_CHECK(c.set_stream(gen, stream));
    auto samples = device_seconds(stream, s.quick ? 1 : 3, s.quick ? 5 : 20, [&] {
        CURAND_CHECK(c.poisson(gen, out, n, 1000.25));
    });
    CURAND_CHECK(c.destroy(gen));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(out));
    return {n, double(n) / median(samples) / 1e9, "GS/s"};
}


// ---- Sorting and its family: CUB -----------------------------------------------------
std::vector<uint64_t> splitmix(size_t n, uint64_t seed)
{
    std::vector<uint64_t> out(n);
    uint64_t st = seed;
    for (size_t i = 0; i < n; ++i) {
        st += 0x9e3779b97f4a7c15ull;
        uint64_t z = st;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        out[i] = z ^ (z >> 31);
    }
    return out;
}

template <typename T>
T* upload_random(size_t n, uint64_t seed)
{
    std::vector<uint64_t> w = splitmix(n, seed);
    std::vector<T> host(n);
    for (size_t i = 0; i < n; ++i) {
        if constexpr (std::is_same<T, float>::value)
            host[i] = float(w[i] >> 40) / float(1u << 24);
        else
            host[i] = T(w[i]);
    }
    T* d = nullptr;
    CHECK(cudaMalloc(&d, n * sizeof(T)));
    CHECK(cudaMemcpy(d, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

size_t sort_elements(const Settings& s) { return s.quick ? (size_t(1) << 24) : (size_t(1) << 28); }

template <typename K>
double sort_keys_gkps(const Settings& s, size_t n, uint64_t seed, int reps)
{
    K* in = upload_random<K>(n, seed);
    K* out = nullptr;
    CHECK(cudaMalloc(&out, n * sizeof(K)));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    size_t bytes = 0;
    CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, in, out, (int)n, 0, int(sizeof(K) * 8), stream));
    void* temp = nullptr;
    CHECK(cudaMalloc(&temp, bytes));
    auto samples = device_seconds(stream, s.quick ? 1 : 3, reps, [&] {
        CHECK(cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, (int)n, 0, int(sizeof(K) * 8), stream));
    });
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    CHECK(cudaFree(temp));
    return double(n) / median(samples) / 1e9;
}

Result sort_keys_u32(const Settings& s)
{
    size_t n = sort_elements(s);
    return {n, sort_keys_gkps<unsigned int>(s, n, 1, s.quick ? 5 : 20), "GK/s"};
}

Result sort_keys_f32(const Settings& s)
{
    size_t n = sort_elements(s);
    return {n, sort_keys_gkps<float>(s, n, 2, s.quick ? 5 : 20), "GK/s"};
}

double sort_pairs_gkps(const Settings& s, size_t n, uint64_t seed, int reps)
{
    unsigned int* k = upload_random<unsigned int>(n, seed);
    unsigned int* v = upload_random<unsigned int>(n, seed + 1);
    unsigned int *ko = nullptr, *vo = nullptr;
    CHECK(cudaMalloc(&ko, n * 4));
    CHECK(cudaMalloc(&vo, n * 4));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    size_t bytes = 0;
    CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, ko, v, vo, (int)n, 0, 32, stream));
    void* temp = nullptr;
    CHECK(cudaMalloc(&temp, bytes));
    auto samples = device_seconds(stream, s.quick ? 1 : 3, reps, [&] {
        CHECK(cub::DeviceRadixSort::SortPairs(temp, bytes, k, ko, v, vo, (int)n, 0, 32, stream));
    });
    CHECK(cudaStreamDestroy(stream));
    for (void* p : {(void*)k, (void*)v, (void*)ko, (void*)vo, temp}) CHECK(cudaFree(p));
    return double(n) / median(samples) / 1e9;
}

Result sort_pairs_u32(const Settings& s)
{
    size_t n = sort_elements(s);
    return {n, sort_pairs_gkps(s, n, 3, s.quick ? 5 : 20), "GK/s"};
}

// A sweep of sizes (2^24 to 2^29, 2^20 to 2^24 quick) of one sort: `gkps(s, n, seed, reps)`.
template <typename F>
Result sort_sweep(const Settings& s, F gkps)
{
    Result first{0, 0.0, "GK/s"};
    for (int p = s.quick ? 20 : 24; p <= (s.quick ? 24 : 29); ++p) {
        size_t n = size_t(1) << p;
        Result r{n, gkps(s, n, 10 + p, p >= 28 ? 7 : 15), "GK/s"};
        if (first.n == 0) first = r; else first.more.push_back(r);
    }
    return first;
}

Result sort_pairs_u32_sweep(const Settings& s) { return sort_sweep(s, sort_pairs_gkps); }
Result sort_keys_u32_sweep(const Settings& s) { return sort_sweep(s, sort_keys_gkps<unsigned int>); }

// Each row sorted: keys only (GK/s), or descending with positions (us per call).
Result segmented(const Settings& s, int rows, int cols, uint64_t seed, bool pairs)
{
    size_t n = size_t(rows) * cols;
    float* in = upload_random<float>(n, seed);
    float* out = nullptr;
    CHECK(cudaMalloc(&out, n * 4));
    std::vector<int> offs(rows + 1), iota(pairs ? n : 0);
    for (int r = 0; r <= rows; ++r) offs[r] = r * cols;
    for (size_t i = 0; i < iota.size(); ++i) iota[i] = int(i % cols);
    int *d_offs = nullptr, *vin = nullptr, *vout = nullptr;
    CHECK(cudaMalloc(&d_offs, (rows + 1) * sizeof(int)));
    CHECK(cudaMemcpy(d_offs, offs.data(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
    if (pairs) {
        CHECK(cudaMalloc(&vin, n * 4));
        CHECK(cudaMalloc(&vout, n * 4));
        CHECK(cudaMemcpy(vin, iota.data(), n * 4, cudaMemcpyHostToDevice));
    }
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    size_t bytes = 0;
    auto call = [&](void* temp) {
        if (pairs)
            CHECK(cub::DeviceSegmentedSort::SortPairsDescending(temp, bytes, in, out, vin, vout, (int)n, rows, d_offs, d_offs + 1, stream));
        else
            CHECK(cub::DeviceSegmentedSort::SortKeys(temp, bytes, in, out, (int)n, rows, d_offs, d_offs + 1, stream));
    };
    call(nullptr);
    void* temp = nullptr;
    CHECK(cudaMalloc(&temp, bytes));
    auto samples = device_seconds(stream, s.quick ? 1 : 3, s.quick ? 5 : 20, [&] { call(temp); });
    CHECK(cudaStreamDestroy(stream));
    for (void* p : {(void*)in, (void*)out, (void*)d_offs, (void*)vin, (void*)vout, temp})
        if (p) CHECK(cudaFree(p));
    if (pairs) return {n, median(samples) * 1e6, "us"};
    return {n, double(n) / median(samples) / 1e9, "GK/s"};
}

Result segsort_4096(const Settings& s) { return segmented(s, s.quick ? 1024 : 4096, 4096, 5, false); }
Result segsort_64(const Settings& s) { return segmented(s, s.quick ? 16 : 64, 128256, 6, false); }
Result sortrows_64(const Settings& s) { return segmented(s, s.quick ? 16 : 64, 128256, 6, true); }

template <typename T, typename Level>
Result histogram_even(const Settings& s, uint64_t seed, Level lower, Level upper)
{
    size_t n = sort_elements(s);
    T* in = upload_random<T>(n, seed);
    int* hist = nullptr;
    CHECK(cudaMalloc(&hist, 256 * sizeof(int)));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    size_t bytes = 0;
    CHECK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, in, hist, 257, Level(lower), Level(upper), (int)n, stream));
    void* temp = nullptr;
    CHECK(cudaMalloc(&temp, bytes));
    auto samples = device_seconds(stream, s.quick ? 1 : 3, s.quick ? 5 : 20, [&] {
        CHECK(cub::DeviceHistogram::HistogramEven(temp, bytes, in, hist, 257, Level(lower), Level(upper), (int)n, stream));
    });
    CHECK(cudaStreamDestroy(stream));
    for (void* p : {(void*)in, (void*)hist, temp}) CHECK(cudaFree(p));
    return {n, double(n * sizeof(T)) / median(samples) / 1e9, "GB/s"};
}

Result histogram_u8(const Settings& s) { return histogram_even<unsigned char, int>(s, 7, 0, 256); }
Result histogram_f32(const Settings& s) { return histogram_even<float, float>(s, 8, 0.0f, 1.0f); }

struct AboveHalf {
    __host__ __device__ bool operator()(const float& x) const { return x > 0.5f; }
};

Result select_if_f32(const Settings& s)
{
    size_t n = sort_elements(s);
    float* in = upload_random<float>(n, 9);
    float* out = nullptr;
    int* count = nullptr;
    CHECK(cudaMalloc(&out, n * 4));
    CHECK(cudaMalloc(&count, sizeof(int)));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    size_t bytes = 0;
    CHECK(cub::DeviceSelect::If(nullptr, bytes, in, out, count, (int)n, AboveHalf(), stream));
    void* temp = nullptr;
    CHECK(cudaMalloc(&temp, bytes));
    auto samples = device_seconds(stream, s.quick ? 1 : 3, s.quick ? 5 : 20, [&] {
        CHECK(cub::DeviceSelect::If(temp, bytes, in, out, count, (int)n, AboveHalf(), stream));
    });
    int selected = 0;
    CHECK(cudaMemcpy(&selected, count, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaStreamDestroy(stream));
    for (void* p : {(void*)in, (void*)out, (void*)count, temp}) CHECK(cudaFree(p));
    return {n, double(4 * n + 4 * size_t(selected)) / median(samples) / 1e9, "GB/s"};
}

Result rand_uniform_philox(const Settings& s) { return bench_curand(s, CURAND_RNG_PSEUDO_PHILOX4_32_10, false); }
Result rand_normal_philox(const Settings& s) { return bench_curand(s, CURAND_RNG_PSEUDO_PHILOX4_32_10, true); }
Result rand_uniform_xorwow(const Settings& s) { return bench_curand(s, CURAND_RNG_PSEUDO_XORWOW, false); }
Result rand_normal_xorwow(const Settings& s) { return bench_curand(s, CURAND_RNG_PSEUDO_XORWOW, true); }
Result rand_uniform_mrg(const Settings& s) { return bench_curand(s, CURAND_RNG_PSEUDO_MRG32K3A, false); }
Result rand_normal_mrg(const Settings& s) { return bench_curand(s, CURAND_RNG_PSEUDO_MRG32K3A, true); }
Result rand_uniform_sobol(const Settings& s) { return bench_curand(s, CURAND_RNG_QUASI_SOBOL32, false); }
Result rand_normal_sobol(const Settings& s) { return bench_curand(s, CURAND_RNG_QUASI_SOBOL32, true); }
Result rand_poisson_philox(const Settings& s) { return bench_curand_poisson(s, CURAND_RNG_PSEUDO_PHILOX4_32_10); }
Result rand_poisson_xorwow(const Settings& s) { return bench_curand_poisson(s, CURAND_RNG_PSEUDO_XORWOW); }
Result rand_poisson_mrg(const Settings& s) { return bench_curand_poisson(s, CURAND_RNG_PSEUDO_MRG32K3A); }

// Elements of the array cases (the same as rucuda-bench and the CuPy peer).
size_t array_elements(const Settings& s) { return size_t(1) << (s.quick ? 24 : 28); }

template <typename T>
__global__ void fill_kernel(T* p, size_t n, T value) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        p[i] = value;
}

// `n` ones in new device memory.
template <typename T>
T* device_ones(size_t n) {
    T* p = nullptr;
    CHECK(cudaMalloc(&p, n * sizeof(T)));
    fill_kernel<T><<<1024, 256>>>(p, n, T(1));
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    return p;
}

enum class Reduction { Sum, Max };

// cub::DeviceReduce::Sum or ::Max of n ones; bandwidth counts the bytes read.
template <typename T, Reduction op>
Result bench_reduce(const Settings& s) {
    size_t n = array_elements(s);
    T* in = device_ones<T>(n);
    T* out = nullptr;
    CHECK(cudaMalloc(&out, sizeof(T)));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    size_t temp_bytes = 0;
    auto reduce = [&](void* temp) {
        if constexpr (op == Reduction::Sum) {
            CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, static_cast<int>(n), stream));
        } else {
            CHECK(cub::DeviceReduce::Max(temp, temp_bytes, in, out, static_cast<int>(n), stream));
        }
    };
    reduce(nullptr);
    void* temp = nullptr;
    CHECK(cudaMalloc(&temp, temp_bytes > 0 ? temp_bytes : 1));
    auto samples = device_seconds(stream, s.quick ? 1 : 3, s.quick ? 5 : 40, [&] { reduce(temp); });
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(temp));
    CHECK(cudaFree(out));
    CHECK(cudaFree(in));
    return {n, double(n * sizeof(T)) / median(samples) / 1e9, "GB/s"};
}

// cub::DeviceScan::InclusiveSum of n ones into another array; bandwidth counts one read and
// one write per element.
template <typename T>
Result bench_scan(const Settings& s) {
    size_t n = array_elements(s);
    T* in = device_ones<T>(n);
    T* out = nullptr;
    CHECK(cudaMalloc(&out, n * sizeof(T)));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    size_t temp_bytes = 0;
    auto scan = [&](void* temp) {
        CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, static_cast<int>(n), stream));
    };
    scan(nullptr);
    void* temp = nullptr;
    CHECK(cudaMalloc(&temp, temp_bytes > 0 ? temp_bytes : 1));
    auto samples = device_seconds(stream, s.quick ? 1 : 3, s.quick ? 5 : 40, [&] { scan(temp); });
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(temp));
    CHECK(cudaFree(out));
    CHECK(cudaFree(in));
    return {n, 2.0 * double(n * sizeof(T)) / median(samples) / 1e9, "GB/s"};
}

struct Case {
    const char* name;
    Result (*run)(const Settings&);
};

const Case CASES[] = {
    {"d2d_copy_GBps", bench_d2d_copy},
    {"rand_uniform_f32_philox_GSps", rand_uniform_philox},
    {"rand_normal_f32_philox_GSps", rand_normal_philox},
    {"rand_uniform_f32_xorwow_GSps", rand_uniform_xorwow},
    {"rand_normal_f32_xorwow_GSps", rand_normal_xorwow},
    {"rand_uniform_f32_mrg32k3a_GSps", rand_uniform_mrg},
    {"rand_normal_f32_mrg32k3a_GSps", rand_normal_mrg},
    {"rand_uniform_f32_sobol32_GSps", rand_uniform_sobol},
    {"rand_normal_f32_sobol32_GSps", rand_normal_sobol},
    {"rand_poisson_u32_philox_GSps", rand_poisson_philox},
    {"rand_poisson_u32_xorwow_GSps", rand_poisson_xorwow},
    {"rand_poisson_u32_mrg32k3a_GSps", rand_poisson_mrg},
    {"sum_f32_GBps", bench_reduce<float, Reduction::Sum>},
    {"max_f32_GBps", bench_reduce<float, Reduction::Max>},
    {"sum_f64_GBps", bench_reduce<double, Reduction::Sum>},
    {"scan_incl_i32_GBps", bench_scan<int>},
    {"scan_incl_f32_GBps", bench_scan<float>},
    {"scan_incl_i64_GBps", bench_scan<long long>},
    {"sort_keys_u32_GKps", sort_keys_u32},
    {"sort_keys_f32_GKps", sort_keys_f32},
    {"sort_pairs_u32_GKps", sort_pairs_u32},
    {"segsort_f32_4096x4096_GKps", segsort_4096},
    {"segsort_f32_64x128256_GKps", segsort_64},
    {"sortrows_f32_64x128256_us", sortrows_64},
    {"histogram_u8_256_GBps", histogram_u8},
    {"histogram_f32_256_GBps", histogram_f32},
    {"select_if_f32_GBps", select_if_f32},
    {"sort_keys_u32_sweep_GKps", sort_keys_u32_sweep},
    {"sort_pairs_u32_sweep_GKps", sort_pairs_u32_sweep},
};

bool selected(const Settings& s, const char* name) {
    if (s.patterns.empty()) return true;
    for (const auto& p : s.patterns)
        if (std::strstr(name, p.c_str())) return true;
    return false;
}

std::string json_string(const char* text) {
    std::string out = "\"";
    for (const char* c = text; *c; ++c) {
        if (*c == '"' || *c == '\\') out += '\\';
        if (static_cast<unsigned char>(*c) >= 0x20) out += *c;
    }
    return out + "\"";
}

}  // namespace

int main() {
    Settings s = read_settings();
    CHECK(cudaSetDevice(s.device));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, s.device));
    int runtime = 0;
    CHECK(cudaRuntimeGetVersion(&runtime));
    std::fprintf(stderr, "nvidia_bench: CUDA runtime %d on %s\n", runtime, prop.name);
    for (const Case& c : CASES) {
        if (!selected(s, c.name)) continue;
        Result first = c.run(s);
        std::vector<Result> points{first};
        points.insert(points.end(), first.more.begin(), first.more.end());
        for (const Result& r : points) {
            std::fprintf(stderr, "  %-24s nvidia %12.4f %s (n %llu)\n", c.name, r.value, r.unit, r.n);
            std::printf("{\"case\":\"%s\",\"lib\":\"nvidia\",\"n\":%llu,\"value\":%.6f,\"unit\":\"%s\",\"device\":%s}\n",
                        c.name, r.n, r.value, r.unit, json_string(prop.name).c_str());
        }
        std::fflush(stdout);
    }
    return 0;
}
