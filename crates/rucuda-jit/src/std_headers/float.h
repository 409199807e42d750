/* rucuda's <float.h> for NVRTC, which has no C library headers: the IEEE 754 binary32
 * (float) and binary64 (double) parameters. */
#ifndef RUCUDA_STD_FLOAT_H
#define RUCUDA_STD_FLOAT_H

#define FLT_RADIX 2
#define FLT_ROUNDS 1
#define FLT_EVAL_METHOD 0
#define DECIMAL_DIG 17

#define FLT_MANT_DIG 24
#define FLT_DIG 6
#define FLT_DECIMAL_DIG 9
#define FLT_MIN_EXP (-125)
#define FLT_MIN_10_EXP (-37)
#define FLT_MAX_EXP 128
#define FLT_MAX_10_EXP 38
#define FLT_MAX 3.40282346638528859812e+38F
#define FLT_MIN 1.17549435082228750797e-38F
#define FLT_EPSILON 1.1920928955078125e-07F
/* The smallest subnormal, 2^-149 (NVRTC rejects a subnormal literal as out of range). */
#define FLT_TRUE_MIN (FLT_MIN * FLT_EPSILON)
#define FLT_HAS_SUBNORM 1

#define DBL_MANT_DIG 53
#define DBL_DIG 15
#define DBL_DECIMAL_DIG 17
#define DBL_MIN_EXP (-1021)
#define DBL_MIN_10_EXP (-307)
#define DBL_MAX_EXP 1024
#define DBL_MAX_10_EXP 308
#define DBL_MAX 1.79769313486231570815e+308
#define DBL_MIN 2.22507385850720138309e-308
#define DBL_EPSILON 2.22044604925031308085e-16
/* 2^-1074, computed as FLT_TRUE_MIN is. */
#define DBL_TRUE_MIN (DBL_MIN * DBL_EPSILON)
#define DBL_HAS_SUBNORM 1

#endif /* RUCUDA_STD_FLOAT_H */
