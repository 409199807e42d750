    long long rucuda_rest = i;
$DECLARATIONS$
$AXES$
$OUTERMOST$
