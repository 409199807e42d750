int rucuda_e = 0; mantissa[i] = $MANTISSA$; exponent[i] = rucuda_e
