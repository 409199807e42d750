// y = (a x + b) x + c over n elements, with a grid-stride loop.
__global__ void polynomial(const float *x, float *y, float a, float b, float c, unsigned n)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = x[i];
        y[i] = (a * v + b) * v + c;
    }
}
