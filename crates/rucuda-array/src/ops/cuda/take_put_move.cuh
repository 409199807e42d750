dst$K$[rucuda_d] = src$K$[$NORMALIZE$]; 
