// A PyCUDA-style source that includes C and C++ standard headers, as written for nvcc:
// under NVRTC rucuda serves them. Every header's names are used.
#include <stdio.h>
#include <cstdio>
#include <stdint.h>
#include <cstdint>
#include <limits.h>
#include <climits>
#include <float.h>
#include <cfloat>
#include <math.h>
#include <cmath>
#include <stddef.h>
#include <cstddef>
#include <assert.h>
#include <cassert>

struct pair_of { char tag; double value; };

__global__ void use_every_header(float *out, uint32_t *bits, size_t n)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    assert(n > 0);
    if (i >= n) return;
    if (i == 0) {
        printf("INT_MAX=%d UINT32_MAX=%u FLT_MAX=%g\n", INT_MAX, UINT32_MAX, FLT_MAX);
        std::printf("offsetof=%d\n", (int) offsetof(struct pair_of, value));
    }
    std::uint64_t big = UINT64_C(1) << 40;
    int64_t neg = INT64_MIN;
    std::int8_t small = INT8_MAX;
    std::size_t count = n;
    std::ptrdiff_t diff = PTRDIFF_MAX;
    bits[i] = (uint32_t) (big >> 40) + (uint32_t) (neg < 0) + (uint32_t) small
              + (uint32_t) (count > 0) + (uint32_t) (diff > 0) + (uint32_t) (CHAR_BIT == 8)
              + (uint32_t) (LONG_MAX >= INT_MAX) + (uint32_t) (SIZE_MAX > 0);
    float x = (float) i;
    float y = std::sqrt(x) + sqrtf(x) + (float) std::pow(2.0, 3.0) + std::fabs(-x)
              + (float) M_PI + FLT_EPSILON + (float) DBL_EPSILON;
    if (std::isnan(y) || std::isinf(y) || y == INFINITY || y == HUGE_VALF) y = NAN;
    out[i] = y;
}
