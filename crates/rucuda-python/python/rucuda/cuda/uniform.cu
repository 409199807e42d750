// Uniform random numbers for curandom.rand: a counter-based generator (SplitMix64 of
// seed and index), so every element is independent of the launch shape.
// Slots (each between dollar signs in the code below): NAME, TYPE, CONVERT (an expression of the 64 random bits `r`).

__device__ __forceinline__ unsigned long long rucuda_splitmix64(unsigned long long x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

extern "C" __global__ void $NAME$($TYPE$ *out, unsigned long long seed, long long n)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned long long r = rucuda_splitmix64(seed ^ rucuda_splitmix64((unsigned long long)i));
        out[i] = $CONVERT$;
    }
}
