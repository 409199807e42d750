"""Rendering, compiling (NVRTC through rucuda-jit, disk-cached) and memoizing the
generated kernels of ``pycuda.elementwise``, ``reduction``, ``scan`` and ``gpuarray``."""
from __future__ import annotations

import os
import re
import weakref

_TEMPLATES = {}
_MODULES = {}
# Objects keeping per-context kernels in their `_by_context` dict (ElementwiseKernel):
# cleared with the modules, so that no popped context is kept alive by a cache.
_HOLDERS = weakref.WeakSet()


# Other per-context dicts (keyed by context handle first), cleared with the modules.
_CACHES = []


def remember_holder(obj):
    """Registers ``obj``'s ``_by_context`` cache for :func:`clear`."""
    _HOLDERS.add(obj)


def remember_cache(cache):
    """Registers a per-context cache (anything with a ``clear()``) for :func:`clear`."""
    _CACHES.append(cache)
_SLOT = re.compile(r"\$([A-Z_]+)\$")


def template(name):
    """The text of ``rucuda/cuda/<name>``."""
    text = _TEMPLATES.get(name)
    if text is None:
        path = os.path.join(os.path.dirname(__file__), "cuda", name)
        with open(path) as f:
            text = _TEMPLATES[name] = f.read()
    return text


def render(name, **slots):  # noqa: D417
    """``template(name)`` with every ``$SLOT$`` replaced; a slot left unfilled is an
    error (a bug in the caller)."""
    def sub(m):
        key = m.group(1)
        if key not in slots:
            raise KeyError(f"{name}: no value for ${key}$")
        return str(slots[key])
    return _SLOT.sub(sub, template(name))


INCLUDE_DIR = os.path.join(os.path.dirname(__file__), "include")


def with_headers(source):
    """``source`` with ``#include <pycuda-complex.hpp>`` first when it uses
    ``pycuda::complex``."""
    if "pycuda::complex" in source and "pycuda-complex.hpp" not in source:
        return "#include <pycuda-complex.hpp>\n" + source
    return source


def context_key():
    """The current context's handle (None without one): the key of per-context caches."""
    from rucuda import _native
    return _native.current_context_handle() or None


def module_for(source, options=(), include_dirs=()):
    """The module compiled from ``source`` for the current context, memoized per
    (context, source, options)."""
    from pycuda.compiler import SourceModule
    key = (context_key(), source, tuple(options), tuple(include_dirs))
    mod = _MODULES.get(key)
    if mod is None:
        mod = _MODULES[key] = SourceModule(source, options=list(options), no_extern_c=True,
                                           include_dirs=list(include_dirs))
    return mod


def clear():
    """Forgets the memoized modules (and what was learnt of each context): PyCUDA's
    ``clear_context_caches``."""
    _MODULES.clear()
    _SM_COUNT.clear()
    for cache in _CACHES:
        cache.clear()
    for holder in list(_HOLDERS):
        holder.__dict__.pop("_by_context", None)


_SM_COUNT = {}

# CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
_MULTIPROCESSOR_COUNT = 16


def sm_count(key):
    """The multiprocessor count of the current context's device (``key``: its
    :func:`context_key`), asked once per context."""
    sms = _SM_COUNT.get(key)
    if sms is None:
        from rucuda import _native
        sms = _SM_COUNT[key] = _native.Context.get_device().get_attribute(
            _MULTIPROCESSOR_COUNT)
    return sms


def grid_for(n, sms, block=256):
    """``(grid, block)`` for a grid-stride loop over n items: at most 16 blocks per
    multiprocessor."""
    blocks = max(1, min((int(n) + block - 1) // block, sms * 16))
    return (blocks, 1, 1), (block, 1, 1)


def launch_shape(n, block=256):
    """``(grid, block)`` for a grid-stride loop over n items in the current context."""
    return grid_for(n, sm_count(context_key()), block)


def release_after(array, stream):
    """Frees the temporary ``array`` once the work queued so far on ``stream`` has run
    (now when ``stream`` is None: its work is on the legacy stream, where the free goes).
    A temporary of another allocator than rucuda's is left to the garbage collector."""
    data = array.gpudata
    if stream is not None and hasattr(data, "free_after"):
        data.free_after(int(stream.handle))
