const unsigned long long rucuda_q = (unsigned long long)($INDEX$); const long long rucuda_j = rucuda_q >= (unsigned long long)src_len ? src_len - 1 : (long long)rucuda_q;
