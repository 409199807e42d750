  const long long rucuda_groups = n / $K$;
  long long rucuda_g = tid;
  for (; rucuda_g + $U_MINUS_1$ * total_threads < rucuda_groups; rucuda_g += $U$ * total_threads)
$STEP_OF_U$
  for (; rucuda_g < rucuda_groups; rucuda_g += total_threads)
$STEP_OF_1$
  for (long long i = rucuda_groups * $K$ + tid; i < n; i += total_threads)
    rucuda_acc = rucuda_reduce_op(rucuda_acc, (rucuda_acc_t)($MAP$));
