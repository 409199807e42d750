// Kernels for the driver crate's array, texture and surface GPU tests (tests/arrays_gpu.rs).
// Texture and surface objects arrive as 64-bit handles passed by value.
extern "C" {

// out[i] = tex1D(tex, xs[i]).
__global__ void tex1d_sample(cudaTextureObject_t tex, const float *xs, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(tex, xs[i]);
}

// out[i] = tex2D(tex, xs[i], ys[i]).
__global__ void tex2d_sample(cudaTextureObject_t tex, const float *xs, const float *ys, float *out,
                             unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(tex, xs[i], ys[i]);
}

// out[i] = tex2D<float4>(tex, xs[i], ys[i]) for four-channel float textures.
__global__ void tex2d_sample4(cudaTextureObject_t tex, const float *xs, const float *ys,
                              float4 *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float4>(tex, xs[i], ys[i]);
}

// out[i] = tex3D(tex, xs[i], ys[i], zs[i]).
__global__ void tex3d_sample(cudaTextureObject_t tex, const float *xs, const float *ys,
                             const float *zs, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(tex, xs[i], ys[i], zs[i]);
}

// out[i] = tex2DLayered(tex, xs[i], ys[i], layers[i]).
__global__ void tex2d_layered_sample(cudaTextureObject_t tex, const float *xs, const float *ys,
                                     const int *layers, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLayered<float>(tex, xs[i], ys[i], layers[i]);
}

// out[i] = texCubemap(tex, xs[i], ys[i], zs[i]) (a direction, not a position).
__global__ void tex_cubemap_sample(cudaTextureObject_t tex, const float *xs, const float *ys,
                                   const float *zs, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemap<float>(tex, xs[i], ys[i], zs[i]);
}

// Element-type read of an 8-bit texture: the stored integer itself.
__global__ void tex2d_u8_element(cudaTextureObject_t tex, const float *xs, const float *ys,
                                 unsigned *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (unsigned)tex2D<unsigned char>(tex, xs[i], ys[i]);
}

// out[i] = tex1Dfetch(tex, i) over linear memory.
__global__ void tex1d_fetch(cudaTextureObject_t tex, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(tex, (int)i);
}

// Writes 2 * in[y * w + x] + 1 to surface element (x, y). x is in bytes for surf2Dwrite.
__global__ void surf2d_write(cudaSurfaceObject_t surf, const float *in, unsigned w, unsigned h) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) surf2Dwrite(2.0f * in[y * w + x] + 1.0f, surf, (int)(x * sizeof(float)), (int)y);
}

// out[y * w + x] = surface element (x, y).
__global__ void surf2d_read(cudaSurfaceObject_t surf, float *out, unsigned w, unsigned h) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = surf2Dread<float>(surf, (int)(x * sizeof(float)), (int)y);
}
}
