// x = (1/terms) * sum_{k=1..terms} sin(k x), in place: work per element that grows with
// `terms`.
__global__ void sine_sum(float *x, unsigned n, unsigned terms)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = x[i], sum = 0.0f;
        for (unsigned k = 1; k <= terms; ++k) sum += sinf(v * (float)k);
        x[i] = sum / (float)terms;
    }
}
