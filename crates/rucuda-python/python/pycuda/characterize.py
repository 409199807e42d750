"""``pycuda.characterize``: facts about the current device and the host."""
from __future__ import annotations

import numpy as np


def platform_bits():
    return np.dtype(np.intp).itemsize * 8


def has_stack():
    return True


def has_double_support():
    import pycuda.driver as drv
    return drv.Context.get_device().compute_capability() >= (1, 3)


def sizeof(type_name, preamble=""):
    """The size of a C type, as the device compiler sees it (compiles a tiny kernel)."""
    import numpy as np

    import pycuda.driver as drv
    from pycuda.compiler import SourceModule
    mod = SourceModule(f"""
    {preamble}
    extern "C" __global__ void write_size(size_t *output)
    {{ *output = sizeof({type_name}); }}
    """, no_extern_c=True)
    out = np.empty(1, np.uintp)
    mod.get_function("write_size")(drv.Out(out), block=(1, 1, 1))
    return int(out[0])
