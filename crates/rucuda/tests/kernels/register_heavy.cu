// Kernels that keep N floats live across a loop, so that they need many registers: about
// 40, 64, 80 and 120 with NVRTC 13 for sm_80 to sm_120. tools_gpu.rs compares
// OccupancyRecord with the driver on them (the register limit is only reached with such
// kernels). Compiled with no_extern_c: the template needs C++ linkage.
template <int N>
__device__ void keep_live(float *x, int n) {
    float v[N];
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = x[threadIdx.x + k * blockDim.x];
    for (int it = 0; it < n; ++it) {
#pragma unroll
        for (int k = 0; k < N; ++k) v[k] = fmaf(v[k], v[(k + 7) % N], 1.0f);
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < N; ++k) s += v[k] * (float)(k + 1);
    x[threadIdx.x] = s;
}
extern "C" __global__ void live_24(float *x, int n) { keep_live<24>(x, n); }
extern "C" __global__ void live_48(float *x, int n) { keep_live<48>(x, n); }
extern "C" __global__ void live_72(float *x, int n) { keep_live<72>(x, n); }
extern "C" __global__ void live_96(float *x, int n) { keep_live<96>(x, n); }
