"""``pycuda.compiler``: ``SourceModule`` and ``compile``. NVRTC compiles by default (no
toolkit needed; the ``rucuda[nvrtc]`` extra brings it), with rucuda-jit's disk cache;
``nvcc=`` given explicitly, or an option only nvcc knows, selects nvcc."""
from __future__ import annotations

import os

from rucuda import _native
from pycuda.driver import CompileError  # noqa: F401

DEFAULT_NVCC_FLAGS = [
    _flag.strip()
    for _flag in os.environ.get("PYCUDA_DEFAULT_NVCC_FLAGS", "").split()
    if _flag.strip()
]

# Options that NVRTC does not take: a source compiled with them goes to nvcc.
_NVCC_ONLY = ("-Xcompiler", "-Xlinker", "-ccbin", "--compiler-bindir", "-lcudadevrt",
              "-Xptxas", "--ptxas-options")


def _wants_nvcc(options):
    return any(o.startswith(_NVCC_ONLY) for o in options)


def _arch_code(arch, code):
    if arch is not None and arch.startswith("compute_") and code is None:
        return arch, None
    return arch, code


def _find_nvcc(nvcc):
    """The nvcc to fall back on: ``nvcc`` if it is a path or on PATH, else the CUDA
    toolkit's (CUDA_PATH, CUDA_HOME, /usr/local/cuda); None when there is none."""
    import shutil
    found = shutil.which(nvcc or "nvcc")
    if found:
        return found
    for root in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and os.path.isfile(os.path.join(root, "bin", "nvcc")):
            return os.path.join(root, "bin", "nvcc")
    return None


def _missing_header(error):
    text = str(error)
    return "cannot open source file" in text or "could not open source file" in text


def compile(source, nvcc="nvcc", options=None, keep=False, no_extern_c=False,
            arch=None, code=None, cache_dir=None, include_dirs=(), target="cubin"):
    """CUDA C++ to a cubin (``target="ptx"``: PTX); returns bytes. NVRTC compiles unless
    an option needs nvcc, or the source includes a host header NVRTC lacks (``<stdio.h>``)
    and nvcc is found: then nvcc does."""
    options = list(options or []) + list(DEFAULT_NVCC_FLAGS)
    # PyCUDA's own headers (pycuda-complex.hpp) are always on the include path.
    from rucuda.kernels import INCLUDE_DIR, with_headers
    include_dirs = list(include_dirs) + [INCLUDE_DIR]
    source = with_headers(source)
    use_nvcc = _wants_nvcc(options) or (nvcc not in (None, "nvcc"))
    arch, code = _arch_code(arch, code)
    def run(nvcc_path):
        return _native.compile(
            source,
            options=options,
            arch=arch,
            code=code,
            target=target,
            include_dirs=[str(d) for d in include_dirs],
            no_extern_c=bool(no_extern_c),
            keep=bool(keep),
            cache_dir=None if cache_dir in (None, True, False) else str(cache_dir),
            use_cache=cache_dir is not False,
            nvcc=nvcc_path,
        )

    if use_nvcc:
        return run(_find_nvcc(nvcc) or nvcc)
    try:
        return run(None)
    except CompileError as e:
        fallback = _find_nvcc(nvcc) if _missing_header(e) else None
        if fallback is None:
            raise
        return run(fallback)


class SourceModule:
    """Compiles ``source`` for the current context's device and loads it."""

    def __init__(self, source, nvcc="nvcc", options=None, keep=False,
                 no_extern_c=False, arch=None, code=None, cache_dir=None,
                 include_dirs=()):
        self._check_arch(arch)
        image = compile(source, nvcc, options, keep, no_extern_c, arch, code,
                        cache_dir, include_dirs)
        self.cubin = image
        self.module = _native.module_from_buffer(image)
        self.get_global = self.module.get_global

    @staticmethod
    def _check_arch(arch):
        if arch is None:
            return
        import pycuda.driver as cuda
        dev = cuda.Context.get_device()
        cap = dev.compute_capability()
        if arch.startswith("sm_"):
            digits = arch[3:].rstrip("afAF")
            if digits.isdigit():
                major, minor = int(digits[:-1]), int(digits[-1])
                if (major, minor) > cap:
                    from warnings import warn
                    warn(f"trying to compile for a compute capability higher than "
                         f"the current device's ({arch} > sm_{cap[0]}{cap[1]})",
                         stacklevel=3)

    def get_function(self, name):
        return self.module.get_function(name)

    def get_texref(self, name):
        from pycuda.driver import LogicError
        raise LogicError("texture references do not exist in CUDA 12 and later: use "
                         "texture objects")

    def get_surfref(self, name):
        from pycuda.driver import LogicError
        raise LogicError("surface references do not exist in CUDA 12 and later: use "
                         "surface objects")


class DynamicSourceModule(SourceModule):
    """A module whose kernels may launch kernels (dynamic parallelism): compiled as
    relocatable device code and linked with ``libcudadevrt`` (from a CUDA toolkit)."""

    def __init__(self, source, nvcc="nvcc", options=None, keep=False,
                 no_extern_c=False, arch=None, code=None, cache_dir=None,
                 include_dirs=(), cuda_libdir=None):
        self._check_arch(arch)
        options = [o for o in (options or []) + list(DEFAULT_NVCC_FLAGS)
                   if o not in ("-rdc=true", "--relocatable-device-code=true",
                                "-lcudadevrt")]
        self.cubin = None
        self.module = _native.link_sources(
            [source], options=options, no_extern_c=bool(no_extern_c), cudadevrt=True,
            include_dirs=[str(d) for d in include_dirs])
        self.get_global = self.module.get_global


class DynamicModule:
    """PyCUDA's linker front-end; not available yet from Python."""

    def __init__(self, *args, **kwargs):
        from pycuda.driver import LogicError
        raise LogicError("DynamicModule is not available in rucuda's Python face yet "
                         "(rucuda_jit::Linker does it from Rust)")
