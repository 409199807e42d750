/* rucuda's <math.h> for NVRTC. The math functions (sqrtf, sin, pow, isnan, ...) are
 * built into NVRTC, so this header declares none of them (a second declaration could
 * clash with NVRTC's); it adds the C and POSIX macros.
 * A macro defined already (by libcu++'s <cuda/std/...> headers) is kept. */
#ifndef RUCUDA_STD_MATH_H
#define RUCUDA_STD_MATH_H

#ifndef HUGE_VALF
#define HUGE_VALF (1.0f / 0.0f)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL (1.0 / 0.0)
#endif
#ifndef INFINITY
#define INFINITY HUGE_VALF
#endif
#ifndef NAN
#define NAN (0.0f / 0.0f)
#endif

#ifndef M_E
#define M_E 2.71828182845904523536
#endif
#ifndef M_LOG2E
#define M_LOG2E 1.44269504088896340736
#endif
#ifndef M_LOG10E
#define M_LOG10E 0.434294481903251827651
#endif
#ifndef M_LN2
#define M_LN2 0.693147180559945309417
#endif
#ifndef M_LN10
#define M_LN10 2.30258509299404568402
#endif
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_PI_2
#define M_PI_2 1.57079632679489661923
#endif
#ifndef M_PI_4
#define M_PI_4 0.785398163397448309616
#endif
#ifndef M_1_PI
#define M_1_PI 0.318309886183790671538
#endif
#ifndef M_2_PI
#define M_2_PI 0.636619772367581343076
#endif
#ifndef M_2_SQRTPI
#define M_2_SQRTPI 1.12837916709551257390
#endif
#ifndef M_SQRT2
#define M_SQRT2 1.41421356237309504880
#endif
#ifndef M_SQRT1_2
#define M_SQRT1_2 0.707106781186547524401
#endif

#endif /* RUCUDA_STD_MATH_H */
