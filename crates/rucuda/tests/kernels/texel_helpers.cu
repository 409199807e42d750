// Kernels of the facade's texel-helper tests (texel_helpers_gpu.rs): doubles and complex
// numbers read from textures and surfaces through rucuda-helpers.cuh. Compiled with NVRTC
// inside SourceModule's extern "C" block, so the kernels keep their plain names.
#include <rucuda-helpers.cuh>

// out[i] = element i of a texture over linear memory of doubles.
__global__ void fetch_f64(cudaTextureObject_t tex, double *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fp_tex1Dfetch<double>(tex, (int)i);
}

// out[i] = element i of a texture over linear memory of complex doubles.
__global__ void fetch_c128(cudaTextureObject_t tex, double2 *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fp_tex1Dfetch<double2>(tex, (int)i);
}

// out[i] = element i of a texture over linear memory of complex floats.
__global__ void fetch_c64(cudaTextureObject_t tex, float2 *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fp_tex1Dfetch<float2>(tex, (int)i);
}

// out[y * w + x] = texel (x, y) of a 2D array of doubles (point sampling at the centre).
__global__ void tex2d_f64(cudaTextureObject_t tex, double *out, unsigned w, unsigned h) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = fp_tex2D<double>(tex, x + 0.5f, y + 0.5f);
}

// out[y * w + x] = texel (x, y) of a 2D array of complex doubles.
__global__ void tex2d_c128(cudaTextureObject_t tex, double2 *out, unsigned w, unsigned h) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = fp_tex2D<double2>(tex, x + 0.5f, y + 0.5f);
}

// out[y * w + x] = texel (x, y) of a 2D array of complex floats.
__global__ void tex2d_c64(cudaTextureObject_t tex, float2 *out, unsigned w, unsigned h) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = fp_tex2D<float2>(tex, x + 0.5f, y + 0.5f);
}

// out[y * w + x] = texel (x, y) of layer `layer` of a layered 2D array of complex doubles.
__global__ void tex2d_layered_c128(cudaTextureObject_t tex, double2 *out, unsigned w, unsigned h,
                                   int layer) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = fp_tex2DLayered<double2>(tex, x + 0.5f, y + 0.5f, layer);
}

// out[(z * h + y) * w + x] = texel (x, y, z) of a 3D array of doubles.
__global__ void tex3d_f64(cudaTextureObject_t tex, double *out, unsigned w, unsigned h,
                          unsigned d) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned z = blockIdx.z;
    if (x < w && y < h && z < d)
        out[(z * h + y) * w + x] = fp_tex3D<double>(tex, x + 0.5f, y + 0.5f, z + 0.5f);
}

// Surface element (x, y) of doubles becomes 2 v + 1; complex doubles (re, im) become
// (re + 1, 2 im), through the surface read and write helpers.
__global__ void surf2d_f64_affine(cudaSurfaceObject_t surf, unsigned w, unsigned h) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        double v = fp_surf2Dread<double>(surf, (int)x, (int)y);
        fp_surf2Dwrite(2.0 * v + 1.0, surf, (int)x, (int)y);
    }
}

__global__ void surf2d_c128_affine(cudaSurfaceObject_t surf, unsigned w, unsigned h) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        double2 v = fp_surf2Dread<double2>(surf, (int)x, (int)y);
        fp_surf2Dwrite(make_double2(v.x + 1.0, 2.0 * v.y), surf, (int)x, (int)y);
    }
}
