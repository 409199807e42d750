"""Importing this makes device 0's (or ``CUDA_DEVICE``'s) primary context current (pushed)
and pops it at exit, as PyCUDA's ``pycuda.autoprimaryctx`` does."""
from __future__ import annotations

import atexit

import pycuda.driver as cuda
from pycuda.tools import make_default_context

cuda.init()


def _retain_primary_context(dev):
    context = dev.retain_primary_context()
    context.push()
    return context


context = make_default_context(_retain_primary_context)
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
