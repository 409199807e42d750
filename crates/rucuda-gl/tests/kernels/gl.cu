// Kernels of rucuda-gl's interop tests. Compile to the committed gl.ptx with
//   python3 crates/rucuda-driver/tests/kernels/build_ptx.py crates/rucuda-gl/tests/kernels/gl.cu

// y[i] = a * x[i] + b: writes a mapped GL buffer (x a device buffer) or reads one
// (x the mapped buffer, y a device buffer).
extern "C" __global__ void affine_f32(const float* x, float* y, float a, float b, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}

// Writes an RGBA8 image through a surface object bound to a mapped GL texture:
// pixel (x, y) = transform(src[y * w + x]) with
// r' = 255 - r, g' = g ^ 0x5a, b' = (b + x + y) mod 256, a' = a.
extern "C" __global__ void write_rgba8_surface(unsigned long long surf, const uchar4* src,
                                               unsigned w, unsigned h)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    uchar4 p = src[y * w + x];
    uchar4 q = make_uchar4((unsigned char)(255 - p.x), (unsigned char)(p.y ^ 0x5a),
                           (unsigned char)(p.z + x + y), p.w);
    surf2Dwrite(q, (cudaSurfaceObject_t)surf, (int)(x * sizeof(uchar4)), (int)y);
}

// Reads an RGBA8 image through a surface object into a device buffer (dst[y * w + x]).
extern "C" __global__ void read_rgba8_surface(unsigned long long surf, uchar4* dst,
                                              unsigned w, unsigned h)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    uchar4 p;
    surf2Dread(&p, (cudaSurfaceObject_t)surf, (int)(x * sizeof(uchar4)), (int)y);
    dst[y * w + x] = p;
}
