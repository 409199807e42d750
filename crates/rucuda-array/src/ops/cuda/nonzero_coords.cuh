if ($TEST$) { const long long rucuda_p = pos[i] - 1; long long rucuda_r = i; $PER_AXIS$out[rucuda_p] = rucuda_r; }
