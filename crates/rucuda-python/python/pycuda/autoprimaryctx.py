"""Importing this makes device 0's (or ``CUDA_DEVICE``'s) primary context current, as
PyCUDA's ``pycuda.autoprimaryctx`` does."""
from __future__ import annotations

import atexit

import pycuda.driver as cuda
from pycuda.tools import make_default_context

cuda.init()
context = make_default_context(lambda dev: dev.retain_primary_context())
device = context.get_device()


def _finish_up():
    global context
    try:
        context.pop()
    except cuda.Error:
        pass
    context = None


atexit.register(_finish_up)
