  (void)rucuda_shape_0;
  for (long long i = tid; i < n; i += total_threads)
  {
$OFFSETS$
    rucuda_acc = rucuda_reduce_op(rucuda_acc, (rucuda_acc_t)($MAP$));
  }
