  {
$TILES$
#pragma unroll
    for (int rucuda_s = 0; rucuda_s < $SLOTS$; ++rucuda_s) {
$LOADS$
    }
#pragma unroll
    for (int rucuda_s = 0; rucuda_s < $SLOTS$; ++rucuda_s) {
#pragma unroll
      for (int rucuda_k = 0; rucuda_k < $K$; ++rucuda_k) {
        const long long i = ($GROUP$) * $K$ + rucuda_k;
        (void)i;
        rucuda_acc = rucuda_reduce_op(rucuda_acc, (rucuda_acc_t)($TILED_MAP$));
      }
    }
  }
