"""rucuda's Python face: PyCUDA's API (import ``pycuda``) over rucuda's Rust crates.

The work is done by the native module ``rucuda._native``; the ``pycuda`` package gives
PyCUDA 2026.1's module layout, names and signatures on top of it.
"""
from __future__ import annotations

import os
import sys


def _point_at_nvrtc_wheel():
    """Sets RUCUDA_NVRTC to NVIDIA's NVRTC wheel (``rucuda[nvrtc]``) when one is
    installed in this environment and nothing else was chosen."""
    if os.environ.get("RUCUDA_NVRTC"):
        return
    for base in sys.path:
        for rel in ("nvidia/cu13/lib/libnvrtc.so.13",
                    "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"):
            path = os.path.join(base or ".", rel)
            if os.path.isfile(path):
                os.environ["RUCUDA_NVRTC"] = path
                return


_point_at_nvrtc_wheel()

try:
    from rucuda import _native  # noqa: E402
except ImportError as e:  # pragma: no cover - a broken install
    raise ImportError(
        "rucuda: the native module rucuda._native could not be loaded "
        f"({e}); reinstall the rucuda wheel for this platform") from e

__version__ = _native.__version__


def driver_problem():
    """None when the CUDA driver (libcuda.so.1) can be loaded, else the message saying
    what is missing."""
    try:
        _native.get_driver_version()
    except Exception as e:  # noqa: BLE001
        return str(e)
    return None
