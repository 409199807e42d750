// RUCUDA_WAIT_FOR_PREDECESSOR(): the first statement of rucuda's generated kernels.
// It waits for the stream's previous kernel to finish and its writes to be visible (a
// no-op unless the kernel was launched as a programmatic dependent launch), then lets
// the next kernel's blocks launch. The Python face launches a kernel that way only when
// its source begins with this wait (`Function._overlaps_predecessor`).
#pragma once
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
#define RUCUDA_WAIT_FOR_PREDECESSOR()                          \
    do {                                                       \
        asm volatile("griddepcontrol.wait;" ::: "memory");     \
        asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); \
    } while (0)
#else
#define RUCUDA_WAIT_FOR_PREDECESSOR() do { } while (0)
#endif
