/* rucuda's <limits.h> for NVRTC, which has no C library headers: the ranges of the
 * integer types as NVRTC lays them out (long is 64 bits where the host's is, __LP64__).
 * A macro defined already (by libcu++'s <cuda/std/...> headers) is kept. */
#ifndef RUCUDA_STD_LIMITS_H
#define RUCUDA_STD_LIMITS_H

#ifndef CHAR_BIT
#define CHAR_BIT 8
#endif
#ifndef MB_LEN_MAX
#define MB_LEN_MAX 16
#endif

#ifndef SCHAR_MIN
#define SCHAR_MIN (-128)
#endif
#ifndef SCHAR_MAX
#define SCHAR_MAX 127
#endif
#ifndef UCHAR_MAX
#define UCHAR_MAX 255
#endif
#if '\xff' < 0
#ifndef CHAR_MIN
#define CHAR_MIN SCHAR_MIN
#endif
#ifndef CHAR_MAX
#define CHAR_MAX SCHAR_MAX
#endif
#else
#ifndef CHAR_MIN
#define CHAR_MIN 0
#endif
#ifndef CHAR_MAX
#define CHAR_MAX UCHAR_MAX
#endif
#endif

#ifndef SHRT_MIN
#define SHRT_MIN (-32767 - 1)
#endif
#ifndef SHRT_MAX
#define SHRT_MAX 32767
#endif
#ifndef USHRT_MAX
#define USHRT_MAX 65535
#endif

#ifndef INT_MIN
#define INT_MIN (-2147483647 - 1)
#endif
#ifndef INT_MAX
#define INT_MAX 2147483647
#endif
#ifndef UINT_MAX
#define UINT_MAX 4294967295U
#endif

#ifndef LLONG_MIN
#define LLONG_MIN (-9223372036854775807LL - 1)
#endif
#ifndef LLONG_MAX
#define LLONG_MAX 9223372036854775807LL
#endif
#ifndef ULLONG_MAX
#define ULLONG_MAX 18446744073709551615ULL
#endif

#ifdef __LP64__
#ifndef LONG_MIN
#define LONG_MIN (-9223372036854775807L - 1)
#endif
#ifndef LONG_MAX
#define LONG_MAX 9223372036854775807L
#endif
#ifndef ULONG_MAX
#define ULONG_MAX 18446744073709551615UL
#endif
#else
#ifndef LONG_MIN
#define LONG_MIN (-2147483647L - 1)
#endif
#ifndef LONG_MAX
#define LONG_MAX 2147483647L
#endif
#ifndef ULONG_MAX
#define ULONG_MAX 4294967295UL
#endif
#endif

#endif /* RUCUDA_STD_LIMITS_H */
