    #pragma unroll
    for (int rucuda_c = 0; rucuda_c < $CHUNKS$; ++rucuda_c) rucuda_tile_$NAME$.v[rucuda_c] = reinterpret_cast<const uint4 *>($NAME$ + rucuda_base)[rucuda_c];
