long long rucuda_j = ((long long)($INDEX$)) % src_len; if (rucuda_j < 0) rucuda_j += src_len;
