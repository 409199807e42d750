#pragma unroll
    for (int j = 0; j < RUCUDA_K; ++j) x[c].e[j] = rucuda_scan_op(p, x[c].e[j]);
