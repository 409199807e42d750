// PyCUDA's ReductionKernel, one stage: each block folds a grid-stride range of
// MAP_EXPR(i) with REDUCE_EXPR(a, b) in shared memory and writes one partial to out[blockIdx.x].
// Run twice: over the input (many blocks), then over the partials (one block, the
// "stage 2" form, whose map is in[i]).
// Slots (each between dollar signs in the code below): PREAMBLE, NAME, OUT_TYPE, ARGUMENTS, NEUTRAL, REDUCE_EXPR, MAP_EXPR, BLOCK.
$PREAMBLE$

#define REDUCE(a, b) ($REDUCE_EXPR$)

extern "C" __global__ void $NAME$($OUT_TYPE$ *out, $ARGUMENTS$, long long start, long long stop)
{
    __shared__ $OUT_TYPE$ sdata[$BLOCK$];
    const unsigned tid = threadIdx.x;
    long long i = start + (long long)blockIdx.x * $BLOCK$ + tid;
    const long long stride = (long long)$BLOCK$ * gridDim.x;
    $OUT_TYPE$ acc = $NEUTRAL$;
    for (; i < stop; i += stride) {
        acc = REDUCE(acc, ($MAP_EXPR$));
    }
    sdata[tid] = acc;
    __syncthreads();
    for (unsigned s = $BLOCK$ / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] = REDUCE(sdata[tid], sdata[tid + s]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
