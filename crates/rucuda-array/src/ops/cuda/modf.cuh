$T$ rucuda_w; frac[i] = $FRACTION$; whole[i] = $WHOLE$
