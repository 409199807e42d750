// Kernels for the driver crate's memory GPU tests (mapped, registered, managed and
// external memory written by kernels). Each is exact (fused multiply-add or integer
// arithmetic), so the host computes the same bits.
extern "C" {

// x[i] = fma(x[i], a, b) for i < n.
__global__ void fma_f32(float *x, float a, float b, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = __fmaf_rn(x[i], a, b);
}

// x[i] = x[i] * a + b (mod 2^32) for i < n.
__global__ void affine_u32(unsigned int *x, unsigned int a, unsigned int b, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a + b;
}

// out[i] = in[i] * a + b (mod 2^32) for i < n: reads one buffer, writes another.
__global__ void affine_copy_u32(const unsigned int *in, unsigned int *out, unsigned int a,
                                unsigned int b, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * a + b;
}
}
