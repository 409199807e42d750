  // First, before any memory access: wait for the stream's previous kernel (a no-op
  // unless launched as a programmatic dependent launch), then let the next kernel's
  // blocks launch. rucuda's launches rely on the wait being first.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
