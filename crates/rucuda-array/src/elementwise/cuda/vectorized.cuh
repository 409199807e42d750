  const long long rucuda_tiles = n / $K$;
  for (long long rucuda_t = tid; rucuda_t < rucuda_tiles; rucuda_t += total_threads)
  {
    const long long rucuda_base = rucuda_t * $K$;
$TILES$
    #pragma unroll
    for (int rucuda_k = 0; rucuda_k < $K$; ++rucuda_k)
    {
      i = rucuda_base + rucuda_k;
      $TILED_OPERATION$;
    }
$STORES$
  }
  for (i = rucuda_tiles * $K$ + tid; i < n; i += total_threads)
  {
    $OPERATION$;
  }
