    {
      const long long rucuda_c = rucuda_rest % rucuda_shape_$D$;
      rucuda_rest /= rucuda_shape_$D$;
$STEPS$
    }
