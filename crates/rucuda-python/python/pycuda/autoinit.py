"""Importing this makes a context on device 0 (or ``CUDA_DEVICE``) current, and pops it
at exit, as PyCUDA's ``pycuda.autoinit`` does."""
from __future__ import annotations

import atexit

import pycuda.driver as cuda
from pycuda.tools import make_default_context

cuda.init()
context = make_default_context()
device = context.get_device()


def _finish_up():
    global context
    try:
        context.pop()
    except cuda.Error:
        pass
    context = None
    from pycuda.tools import clear_context_caches
    clear_context_caches()


atexit.register(_finish_up)
