    (void)rucuda_rest;
