// Kernels for the driver crate's extras GPU tests: occupancy, graphs, cooperative
// launches, host-array arguments.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

extern "C" {

// 32 KiB of static shared memory per block, so fewer blocks fit on a multiprocessor.
__global__ void shared_hog(float *out) {
    __shared__ float tile[8192];
    for (int i = threadIdx.x; i < 8192; i += blockDim.x) tile[i] = (float)i;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[(threadIdx.x * 7u) % 8192u];
}

// dst[i] = s * src[i]
__global__ void scale_into(float s, const float *src, float *dst, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        dst[i] = s * src[i];
}

// Two phases separated by a grid-wide barrier (needs a cooperative launch):
// tmp[i] = 2 x[i]; then out[i] = tmp[i] + tmp[n - 1 - i], which another block wrote.
__global__ void two_phase(const float *x, float *tmp, float *out, unsigned long long n) {
    cg::grid_group grid = cg::this_grid();
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long first = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (unsigned long long i = first; i < n; i += stride) tmp[i] = 2.0f * x[i];
    grid.sync();
    for (unsigned long long i = first; i < n; i += stride) out[i] = tmp[i] + tmp[n - 1 - i];
}

// out[i] = a * in[i]; inout[i] += in[i]  (In / Out / InOut round trip)
__global__ void in_out_mix(const float *in, float *out, float *inout, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = a * in[i];
        inout[i] += in[i];
    }
}
}
