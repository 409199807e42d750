#!/usr/bin/env python3
"""Compiles every kernels/*.cu here to PTX (sm_90) with NVRTC, through ctypes.

The driver crate's GPU tests load the committed .ptx files, so they need no compiler at
test time. Run after editing a .cu file:  python3 build_ptx.py  (needs NVIDIA's NVRTC:
`pip install nvidia-cuda-nvrtc==13.0.*` or a CUDA toolkit on the loader path).

The CUDA headers beside the NVRTC library (include/ and include/cccl/ of the wheels or
the toolkit) are on the include path. Kernels that include <cooperative_groups.h> also
need `pip install nvidia-cuda-runtime==13.0.* nvidia-cuda-cccl==13.0.*`.
"""
import ctypes, glob, os, site, sys

INCLUDE_DIRS = []

def load_nvrtc():
    dirs = [os.path.join(p, "nvidia", "cu13", "lib") for p in site.getsitepackages()]
    dirs += ["/usr/local/cuda/lib64"]
    for d in dirs:
        lib = os.path.join(d, "libnvrtc.so.13")
        if os.path.exists(lib):
            inc = os.path.join(os.path.dirname(d), "include")
            for i in (inc, os.path.join(inc, "cccl")):
                if os.path.isdir(i):
                    INCLUDE_DIRS.append(i)
            builtins = os.path.join(d, "libnvrtc-builtins.so.13.0")
            if os.path.exists(builtins):
                ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
            return ctypes.CDLL(lib)
    return ctypes.CDLL("libnvrtc.so.13")

def compile_ptx(nv, path):
    src = open(path, "rb").read()
    prog = ctypes.c_void_p()
    name = os.path.basename(path).encode()
    if nv.nvrtcCreateProgram(ctypes.byref(prog), src, name, 0, None, None):
        raise SystemExit(f"{path}: nvrtcCreateProgram failed")
    opts = [b"--gpu-architecture=compute_90", b"-std=c++17"]
    opts += [b"--include-path=" + d.encode() for d in INCLUDE_DIRS]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = nv.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nv.nvrtcGetProgramLog(prog, log)
    if rc:
        raise SystemExit(f"{path}: compile failed:\n{log.value.decode()}")
    nv.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    nv.nvrtcGetPTX(prog, ptx)
    out = path[:-3] + ".ptx"
    with open(out, "wb") as f:
        f.write(b"// Generated from " + name + b" by build_ptx.py (NVRTC, compute_90); do not edit.\n")
        f.write(ptx.value)
    print(f"{path} -> {out}")

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    nv = load_nvrtc()
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(here, "*.cu")))
    for p in files:
        compile_ptx(nv, p)
