#pragma unroll
    for (int j = 0; j < RUCUDA_K; ++j) x[c].e[j] = rucuda_join(p, p_has, x[c].e[j]);
