    union { uint4 v[$CHUNKS$]; $T$ e[$K$]; } rucuda_tile_$NAME$;
