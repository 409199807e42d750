  (void)rucuda_shape_0;
  for (i = tid; i < n; i += total_threads)
  {
$OFFSETS$
    $OPERATION$;
  }
