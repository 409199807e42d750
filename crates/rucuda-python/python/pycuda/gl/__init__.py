"""``pycuda.gl``: not in rucuda's Python face yet (the Rust crate rucuda-gl provides
OpenGL interop); importing it raises ImportError, as PyCUDA's does when built without GL."""
from __future__ import annotations

raise ImportError(
    "pycuda.gl is not available in rucuda's Python face yet; "
    "the Rust crate rucuda-gl provides OpenGL interop")
