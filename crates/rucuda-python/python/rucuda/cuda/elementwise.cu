// PyCUDA's elementwise kernel: OPERATION for every i of [0, n) (grid-stride loop).
// Slots (each between dollar signs in the code below): PREAMBLE, NAME, ARGUMENTS, LOOP_PREP, OPERATION, AFTER_LOOP.
// Both kernels wait for their predecessor first (pycuda/elementwise.py launches them
// overlapping it).
#include <rucuda-grid-dependency.cuh>
$PREAMBLE$

extern "C" __global__ void $NAME$($ARGUMENTS$, long long n)
{
    RUCUDA_WAIT_FOR_PREDECESSOR();
    const long long tid = threadIdx.x;
    const long long total_threads = (long long)gridDim.x * blockDim.x;
    const long long cta_start = (long long)blockDim.x * blockIdx.x;
    long long i;
    $LOOP_PREP$;
    for (i = cta_start + tid; i < n; i += total_threads) {
        $OPERATION$;
    }
    $AFTER_LOOP$;
}

// The ranged form: i = start, start + step, ... while i < stop (i > stop for step < 0);
// n is the size of the first array argument, as in the plain form.
extern "C" __global__ void $NAME$_range($ARGUMENTS$, long long n, long long rucuda_start, long long rucuda_stop, long long rucuda_step)
{
    RUCUDA_WAIT_FOR_PREDECESSOR();
    const long long tid = threadIdx.x;
    const long long total_threads = (long long)gridDim.x * blockDim.x;
    const long long cta_start = (long long)blockDim.x * blockIdx.x;
    long long i;
    $LOOP_PREP$;
    for (i = rucuda_start + (cta_start + tid) * rucuda_step;
         (rucuda_step < 0) ? (i > rucuda_stop) : (i < rucuda_stop);
         i += total_threads * rucuda_step) {
        $OPERATION$;
    }
    $AFTER_LOOP$;
}
