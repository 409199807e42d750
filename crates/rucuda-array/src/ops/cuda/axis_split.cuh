const long long rucuda_post = i % inner; const long long rucuda_q = (i / inner) % ni; const long long rucuda_pre = i / inner / ni; const long long rucuda_j = $NORMALIZE$; $MOVE$
