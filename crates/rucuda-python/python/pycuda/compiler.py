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
    """PyCUDA's linker front-end: sources compiled to relocatable PTX (``add_source``),
    images and files (``add_data``, ``add_file``), device libraries (``add_stdlib``),
    then ``link()`` loads the result, through rucuda-jit's linker (``cuLink*``)."""

    def __init__(self, nvcc="nvcc", link_options=None, keep=False, no_extern_c=False,
                 arch=None, code=None, cache_dir=None, include_dirs=None,
                 message_handler=None, log_verbose=False, cuda_libdir=None):
        import pycuda.driver as cuda
        if cuda.Context.get_device().compute_capability() < (3, 5):
            raise Exception("Minimum compute capability for dynamic parallelism is 3.5")
        SourceModule._check_arch(arch)
        self.linker = _native.Linker()
        self.nvcc = nvcc
        self.keep = keep
        self.no_extern_c = no_extern_c
        self.arch = arch
        self.code = code
        self.cache_dir = cache_dir
        self.include_dirs = list(include_dirs or [])
        self.cuda_libdir = cuda_libdir
        self.module = None

    def add_source(self, source, nvcc_options=None, name="kernel.ptx"):
        # Libraries come through add_stdlib; the code must be relocatable to link.
        options = [o for o in (nvcc_options or []) if not o.startswith("-l")]
        if not any(o.startswith(("-rdc", "--relocatable-device-code")) for o in options):
            options.append("-rdc=true")
        ptx = compile(source, nvcc=self.nvcc, options=options, keep=self.keep,
                      no_extern_c=self.no_extern_c, arch=self.arch, code=self.code,
                      cache_dir=self.cache_dir, include_dirs=self.include_dirs,
                      target="ptx")
        self.linker.add_data(ptx, 1, name)
        return self

    def add_data(self, data, input_type, name="unknown"):
        self.linker.add_data(bytes(data), int(input_type), name)
        return self

    def add_file(self, filename, input_type):
        self.linker.add_file(str(filename), int(input_type))
        return self

    def add_stdlib(self, libname):
        if libname == "cudadevrt" and self.cuda_libdir is None:
            self.linker.add_cudadevrt()
            return self
        libdir = self.cuda_libdir
        if libdir is None:
            nvcc = _find_nvcc(self.nvcc)
            libdir = os.path.join(os.path.dirname(nvcc), "..", "lib64") if nvcc else None
        path = None if libdir is None else os.path.join(libdir, f"lib{libname}.a")
        if path is None or not os.path.isfile(path):
            raise OSError(f'CUDA SDK library file "{path}" not found')
        self.linker.add_file(path, 4)
        return self

    def link(self):
        self.module = self.linker.link()
        self.linker = None
        self.get_global = self.module.get_global
        return self

    def get_function(self, name):
        return self.module.get_function(name)
