#pragma unroll
    for (int j = RUCUDA_K - 1; j > 0; --j) x[c].e[j] = rucuda_scan_op(p, x[c].e[j - 1]);
    x[c].e[0] = p;
