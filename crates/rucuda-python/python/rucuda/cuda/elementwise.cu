// PyCUDA's elementwise kernel: OPERATION for every i of [0, n) (grid-stride loop).
// Slots: $PREAMBLE$, $NAME$, $ARGUMENTS$, $LOOP_PREP$, $OPERATION$, $AFTER_LOOP$.
$PREAMBLE$

extern "C" __global__ void $NAME$($ARGUMENTS$, long long n)
{
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

// The ranged form: i = start, start + step, ... while i < stop (i > stop for step < 0).
extern "C" __global__ void $NAME$_range($ARGUMENTS$, long long start, long long stop, long long step)
{
    const long long tid = threadIdx.x;
    const long long total_threads = (long long)gridDim.x * blockDim.x;
    const long long cta_start = (long long)blockDim.x * blockIdx.x;
    long long i;
    $LOOP_PREP$;
    for (i = start + (cta_start + tid) * step;
         (step < 0) ? (i > stop) : (i < stop);
         i += total_threads * step) {
        $OPERATION$;
    }
    $AFTER_LOOP$;
}
