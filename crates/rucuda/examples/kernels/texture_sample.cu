// out[i] = the texture read at (xs[i], ys[i]): a texture object arrives as a 64-bit
// handle passed by value.
__global__ void texture_sample(cudaTextureObject_t image, const float *xs, const float *ys,
                               float *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(image, xs[i], ys[i]);
}
