// A scan over n elements in three passes: per-block scans (one element a thread, in
// shared memory), a scan of the block totals (recursively, by the caller), and adding
// each block's carry. Slots (each between dollar signs in the code below): PREAMBLE, NAME, TYPE, SCAN_EXPR, NEUTRAL, BLOCK,
// EXCLUSIVE (1 or 0).
$PREAMBLE$

#define SCAN(a, b) ($SCAN_EXPR$)

extern "C" __global__ void $NAME$_blocks(const $TYPE$ *in, $TYPE$ *out, $TYPE$ *totals, long long n)
{
    __shared__ $TYPE$ s[$BLOCK$];
    const unsigned tid = threadIdx.x;
    const long long i = (long long)blockIdx.x * $BLOCK$ + tid;
    $TYPE$ x = (i < n) ? in[i] : ($TYPE$)($NEUTRAL$);
    s[tid] = x;
    __syncthreads();
    // Hillis-Steele inclusive scan in shared memory.
    for (unsigned off = 1; off < $BLOCK$; off <<= 1) {
        $TYPE$ t = s[tid];
        if (tid >= off) {
            t = SCAN(s[tid - off], t);
        }
        __syncthreads();
        s[tid] = t;
        __syncthreads();
    }
    if (i < n) {
        if ($EXCLUSIVE$) {
            out[i] = (tid == 0) ? ($TYPE$)($NEUTRAL$) : s[tid - 1];
        } else {
            out[i] = s[tid];
        }
    }
    if (tid == $BLOCK$ - 1) {
        totals[blockIdx.x] = s[tid];
    }
}

// Adds the exclusive scan of the block totals (carries[b]) to block b's elements.
extern "C" __global__ void $NAME$_carry($TYPE$ *out, const $TYPE$ *carries, long long n)
{
    const long long i = (long long)blockIdx.x * $BLOCK$ + threadIdx.x;
    if (blockIdx.x > 0 && i < n) {
        out[i] = SCAN(carries[blockIdx.x], out[i]);
    }
}
