  (void)n;
  if (step < 0)
  {
    for (i = start + step * tid; i > stop; i += step * total_threads)
    {
      $OPERATION$;
    }
  }
  else
  {
    for (i = start + step * tid; i < stop; i += step * total_threads)
    {
      $OPERATION$;
    }
  }
