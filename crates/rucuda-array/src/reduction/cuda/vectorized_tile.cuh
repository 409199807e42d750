    union { $CHUNK$ v[$COUNT$]; $T$ e[$K$]; } rucuda_tile_$NAME$[$SLOTS$];
