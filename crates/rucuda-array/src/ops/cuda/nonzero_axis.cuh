out[$K$ * count + rucuda_p] = rucuda_r % d$K$; rucuda_r /= d$K$; 
