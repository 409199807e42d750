    long long rucuda_off_$NAME$ = 0;
