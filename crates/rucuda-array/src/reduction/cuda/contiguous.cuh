  for (long long i = tid; i < n; i += total_threads)
    rucuda_acc = rucuda_reduce_op(rucuda_acc, (rucuda_acc_t)($MAP$));
