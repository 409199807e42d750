const long long rucuda_q = (long long)($INDEX$); const long long rucuda_j = rucuda_q < 0 ? 0 : (rucuda_q >= src_len ? src_len - 1 : rucuda_q);
