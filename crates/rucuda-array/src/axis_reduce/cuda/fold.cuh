// One axis reduction's fold: the accumulator, its identity, the map of one input element
// (with its index `j` along the reduced axes), the combine of two accumulators (any order
// and grouping gives the same value, up to float rounding) and the finish into the output.
typedef $IN$ rucuda_in_t;
typedef $OUT$ rucuda_out_t;
typedef $ACC$ rucuda_acc_t;
__device__ __forceinline__ rucuda_acc_t rucuda_identity() { return $IDENTITY$; }
__device__ __forceinline__ rucuda_acc_t rucuda_map(const rucuda_in_t &x, long long j) { return $MAP$; }
__device__ __forceinline__ rucuda_acc_t rucuda_combine(const rucuda_acc_t &a, const rucuda_acc_t &b) { return $COMBINE$; }
__device__ __forceinline__ rucuda_out_t rucuda_finish(const rucuda_acc_t &a, long long count, double ddof) { return $FINISH$; }
