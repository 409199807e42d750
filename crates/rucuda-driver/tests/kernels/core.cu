// Kernels for the driver crate's core GPU tests (launches, arguments, streams).
extern "C" {

__global__ void noop() {}

__global__ void saxpy(float a, const float *x, const float *y, float *out, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = a * x[i] + y[i];
}

// Every scalar type, summed as double into out[0], so argument packing is checked.
__global__ void scalars(signed char a, unsigned char b, short c, unsigned short d, int e,
                        unsigned int f, long long g, unsigned long long h, float i, double j,
                        double *out) {
    out[0] = (double)a + b + c + d + e + f + (double)g + (double)h + i + j;
}

struct Params { int n; float scale; double offset; };

__global__ void with_struct(Params p, float4 v, const float *x, double *out) {
    for (int k = threadIdx.x; k < p.n; k += blockDim.x)
        out[k] = (double)x[k] * p.scale + p.offset + v.x + v.y + v.z + v.w;
}

__global__ void add_one(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

__global__ void uses_shared(float *out) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}

__device__ int device_counter;
__constant__ float coefficients[4];

__global__ void use_constants(float *out) {
    int i = threadIdx.x;
    if (i < 4) out[i] = coefficients[i] * 2.0f;
    if (i == 0) atomicAdd(&device_counter, 1);
}

__global__ void trap_kernel() { __trap(); }

__global__ void spin(unsigned long long cycles) {
    unsigned long long start = clock64();
    while (clock64() - start < cycles) {}
}
}

extern "C" __global__ void index3d(int *out, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = x + 1000 * y + 1000000 * z;
}
