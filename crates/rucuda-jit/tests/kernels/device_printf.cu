// A PyCUDA-style kernel, as written for nvcc: it includes <stdio.h> and prints from the
// device. Under NVRTC rucuda serves <stdio.h>.
#include <stdio.h>

__global__ void say_values(const int *values, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        printf("device line %d: value %d, squared %d, quarter %.2f\n",
               i, values[i], values[i] * values[i], i * 0.25f);
    }
}
