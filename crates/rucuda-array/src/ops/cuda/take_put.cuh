const long long rucuda_s = $SOURCE_INDEX$; const long long rucuda_d = $DEST_INDEX$; $MOVES$
