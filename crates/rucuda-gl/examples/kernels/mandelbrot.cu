// The gl_interop example's kernel. Compile to the committed mandelbrot.ptx with
//   python3 crates/rucuda-driver/tests/kernels/build_ptx.py crates/rucuda-gl/examples/kernels/mandelbrot.cu

// Smooth-coloured Mandelbrot set, 2x2 supersampled, written as RGBA8 through a surface
// object bound to a mapped GL texture. Row 0 is the top of the picture (largest
// imaginary part). `scale` is the width of one pixel in the complex plane.
extern "C" __global__ void mandelbrot(unsigned long long surf, unsigned w, unsigned h,
                                      double cx, double cy, double scale, int max_iter)
{
    unsigned px = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= w || py >= h) return;

    float r = 0.f, g = 0.f, b = 0.f;
    for (int s = 0; s < 4; ++s) {
        double ox = (s & 1) ? 0.75 : 0.25, oy = (s & 2) ? 0.75 : 0.25;
        double x0 = cx + ((double)px + ox - 0.5 * w) * scale;
        double y0 = cy - ((double)py + oy - 0.5 * h) * scale;
        double x = 0.0, y = 0.0, x2 = 0.0, y2 = 0.0;
        int i = 0;
        while (x2 + y2 <= 256.0 && i < max_iter) {
            y = 2.0 * x * y + y0;
            x = x2 - y2 + x0;
            x2 = x * x;
            y2 = y * y;
            ++i;
        }
        if (i < max_iter) {
            // Continuous escape count, then a cosine palette over its logarithm.
            float nu = (float)i + 1.f - log2f(log2f((float)(x2 + y2)) * 0.5f);
            float t = 0.35f * logf(nu + 1.f);
            const float two_pi = 6.2831853f;
            r += 0.5f + 0.5f * cosf(two_pi * (t + 0.00f));
            g += 0.5f + 0.5f * cosf(two_pi * (t + 0.15f));
            b += 0.5f + 0.5f * cosf(two_pi * (t + 0.30f));
        }
    }
    uchar4 out = make_uchar4((unsigned char)(255.f * r * 0.25f + 0.5f),
                             (unsigned char)(255.f * g * 0.25f + 0.5f),
                             (unsigned char)(255.f * b * 0.25f + 0.5f), 255);
    surf2Dwrite(out, (cudaSurfaceObject_t)surf, (int)(px * sizeof(uchar4)), (int)py);
}
