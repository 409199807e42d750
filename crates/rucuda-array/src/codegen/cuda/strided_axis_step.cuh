      rucuda_off_$NAME$ += rucuda_c * rucuda_stride_$NAME$_$D$;
