    rucuda_off_$NAME$ += rucuda_rest * rucuda_stride_$NAME$_0;
