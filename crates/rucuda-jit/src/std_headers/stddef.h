/* rucuda's <stddef.h> for NVRTC, which has no C library headers. NVRTC already
 * declares size_t, ptrdiff_t and NULL; this adds offsetof and max_align_t. Works inside
 * and outside an extern "C" block. */
#ifndef RUCUDA_STD_STDDEF_H
#define RUCUDA_STD_STDDEF_H

#ifndef offsetof
#define offsetof(type, member) ((size_t) & (((type *)0)->member))
#endif

typedef struct {
    long long rucuda_align_ll;
    double rucuda_align_d;
} max_align_t;

#endif /* RUCUDA_STD_STDDEF_H */
