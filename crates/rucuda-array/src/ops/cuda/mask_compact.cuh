if ($TEST$) out[pos[i] - 1] = a[i]
