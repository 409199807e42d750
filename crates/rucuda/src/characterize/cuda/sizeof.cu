// characterize::sizeof: the device compiler's sizeof of one C type, kept in a module
// global that the host reads after loading (no kernel runs). The preamble declares the
// type when it is not a built-in one.
$PREAMBLE$

extern "C" __device__ unsigned long long rucuda_sizeof_value = sizeof($TYPE_NAME$);

// Never launched: it keeps the global referenced, so no compiler drops it.
extern "C" __global__ void rucuda_sizeof_keep(unsigned long long *out)
{
    *out = rucuda_sizeof_value;
}
