  for (i = tid; i < n; i += total_threads)
  {
    $OPERATION$;
  }
