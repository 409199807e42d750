#pragma unroll
      for (int rucuda_c = 0; rucuda_c < $COUNT$; ++rucuda_c) rucuda_tile_$NAME$[rucuda_s].v[rucuda_c] = __ldg(reinterpret_cast<const $CHUNK$ *>($NAME$) + ($GROUP$) * $COUNT$ + rucuda_c);
