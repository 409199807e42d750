"""pycuda's modules imported with the driver check stubbed, for the tests that need no
GPU: `pycuda.driver` refuses to import without a CUDA driver, and these tests never call
it (arrays over fake addresses, recording stand-ins for kernels)."""
from __future__ import annotations

import importlib

import rucuda


def import_without_driver(*names):
    """The modules ``names``, imported with ``rucuda.driver_problem`` answering None."""
    saved = rucuda.driver_problem
    rucuda.driver_problem = lambda: None
    try:
        return [importlib.import_module(n) for n in names]
    finally:
        rucuda.driver_problem = saved
