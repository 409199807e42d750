/* rucuda's <float.h> for NVRTC, which has no C library headers: the IEEE 754 binary32
 * (float) and binary64 (double) parameters.
 * A macro defined already (by libcu++'s <cuda/std/...> headers) is kept. */
#ifndef RUCUDA_STD_FLOAT_H
#define RUCUDA_STD_FLOAT_H

#ifndef FLT_RADIX
#define FLT_RADIX 2
#endif
#ifndef FLT_ROUNDS
#define FLT_ROUNDS 1
#endif
#ifndef FLT_EVAL_METHOD
#define FLT_EVAL_METHOD 0
#endif
#ifndef DECIMAL_DIG
#define DECIMAL_DIG 17
#endif

#ifndef FLT_MANT_DIG
#define FLT_MANT_DIG 24
#endif
#ifndef FLT_DIG
#define FLT_DIG 6
#endif
#ifndef FLT_DECIMAL_DIG
#define FLT_DECIMAL_DIG 9
#endif
#ifndef FLT_MIN_EXP
#define FLT_MIN_EXP (-125)
#endif
#ifndef FLT_MIN_10_EXP
#define FLT_MIN_10_EXP (-37)
#endif
#ifndef FLT_MAX_EXP
#define FLT_MAX_EXP 128
#endif
#ifndef FLT_MAX_10_EXP
#define FLT_MAX_10_EXP 38
#endif
#ifndef FLT_MAX
#define FLT_MAX 3.40282346638528859812e+38F
#endif
#ifndef FLT_MIN
#define FLT_MIN 1.17549435082228750797e-38F
#endif
#ifndef FLT_EPSILON
#define FLT_EPSILON 1.1920928955078125e-07F
#endif
/* The smallest subnormal, 2^-149 (NVRTC rejects a subnormal literal as out of range). */
#ifndef FLT_TRUE_MIN
#define FLT_TRUE_MIN (FLT_MIN * FLT_EPSILON)
#endif
#ifndef FLT_HAS_SUBNORM
#define FLT_HAS_SUBNORM 1
#endif

#ifndef DBL_MANT_DIG
#define DBL_MANT_DIG 53
#endif
#ifndef DBL_DIG
#define DBL_DIG 15
#endif
#ifndef DBL_DECIMAL_DIG
#define DBL_DECIMAL_DIG 17
#endif
#ifndef DBL_MIN_EXP
#define DBL_MIN_EXP (-1021)
#endif
#ifndef DBL_MIN_10_EXP
#define DBL_MIN_10_EXP (-307)
#endif
#ifndef DBL_MAX_EXP
#define DBL_MAX_EXP 1024
#endif
#ifndef DBL_MAX_10_EXP
#define DBL_MAX_10_EXP 308
#endif
#ifndef DBL_MAX
#define DBL_MAX 1.79769313486231570815e+308
#endif
#ifndef DBL_MIN
#define DBL_MIN 2.22507385850720138309e-308
#endif
#ifndef DBL_EPSILON
#define DBL_EPSILON 2.22044604925031308085e-16
#endif
/* 2^-1074, computed as FLT_TRUE_MIN is. */
#ifndef DBL_TRUE_MIN
#define DBL_TRUE_MIN (DBL_MIN * DBL_EPSILON)
#endif
#ifndef DBL_HAS_SUBNORM
#define DBL_HAS_SUBNORM 1
#endif

#endif /* RUCUDA_STD_FLOAT_H */
