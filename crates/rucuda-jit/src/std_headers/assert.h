/* rucuda's <assert.h> for NVRTC: the device assert, which stops the kernel with an
 * error (the launch then fails with a device-side assert) and prints the failed
 * condition. Like the C header it has no include guard: each inclusion defines assert
 * again after NDEBUG as it then stands. __assertfail is NVRTC's own. */
#undef assert
#ifdef NDEBUG
#define assert(condition) (static_cast<void>(0))
#else
#define assert(condition)                                                              \
    ((condition) ? static_cast<void>(0)                                                \
                 : __assertfail(#condition, __FILE__, __LINE__, __PRETTY_FUNCTION__,   \
                                sizeof(char)))
#endif
