rucuda_scatter_store(&dst$K$[rucuda_d], src$K$[$NORMALIZE$]); 
