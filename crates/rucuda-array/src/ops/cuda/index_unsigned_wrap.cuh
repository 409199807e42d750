const long long rucuda_j = (long long)(((unsigned long long)($INDEX$)) % (unsigned long long)src_len);
