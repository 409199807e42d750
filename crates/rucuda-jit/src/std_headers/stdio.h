/* rucuda's <stdio.h> for NVRTC, which has no C library headers. On the device only
 * printf exists (its output reaches the host's stdout when the context synchronizes);
 * NVRTC declares it already, and this declaration repeats NVRTC's own. */
#ifndef RUCUDA_STD_STDIO_H
#define RUCUDA_STD_STDIO_H

#include <stddef.h>

extern "C" __host__ __device__ int printf(const char *, ...);

#ifndef EOF
#define EOF (-1)
#endif

#endif /* RUCUDA_STD_STDIO_H */
