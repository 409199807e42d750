"""The Python face's bench cases, one JSON line each:

- ``py_small_add_us``: ``c = a + b`` on 1000 float32 elements (result allocated), per op;
- ``py_launch_us``: an empty kernel launched with ``Function.__call__``, per launch;
- ``py_prepared_launch_us``: the same through ``prepare``/``prepared_call``;
- ``py_compile_first_ms``: the first ``SourceModule`` of a new source (no cache hit), the
  median over five new sources.

The per-op cases are medians of 7 batches after two seconds of warm-up.

``--impl pycuda`` (the default) measures whatever ``import pycuda`` finds: the rucuda wheel
in its virtual environment, or PyCUDA itself (``PYTHONPATH=<PyCUDA's build folder>``) for
the control. ``--impl cupy`` measures CuPy's equivalents, and ``--impl raw`` NVIDIA's
cuda-bindings (``cuLaunchKernel`` and NVRTC called directly): the references.
Needs a GPU. Usage: ``python3 py_bench.py [--impl pycuda|cupy|raw] [--label NAME]``;
``--median-of ROUNDS.jsonl`` folds several runs' lines into their medians (``run.sh
pycuda-bench`` runs each implementation in three processes, taking turns).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

EMPTY = 'extern "C" __global__ void empty_kernel() { }\n'
SAXPY = """
extern "C" __global__ void saxpy_{tag}(float a, const float *x, float *y, int n)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}}
"""


def per_op(f, n, sync):
    f()
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        f()
    sync()
    return (time.perf_counter() - t0) / n


def median_of(k, f, n, sync, warm_up_s=2.0):
    """The median of ``k`` batches of ``n`` calls, after ``warm_up_s`` seconds of calls
    (without any, the first case of a process once read 8.4 µs on an H200 for a loop
    that took 5.4 µs later in the same process)."""
    end = time.perf_counter() + warm_up_s
    while time.perf_counter() < end:
        per_op(f, 100, sync)
    return statistics.median(per_op(f, n, sync) for _ in range(k))


def first_compile_ms(compile_source, k=5):
    """The median over ``k`` new sources (each a cache miss) of one compile, in ms."""
    times = []
    for _ in range(k):
        src = SAXPY.format(tag=unique_tag())
        t0 = time.perf_counter()
        compile_source(src)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def unique_tag():
    return f"{os.getpid()}_{time.perf_counter_ns()}"


def bench_pycuda():
    import pycuda.autoinit  # noqa: F401
    import pycuda.driver as drv
    import pycuda.gpuarray as gpuarray
    from pycuda.compiler import SourceModule

    sync = drv.Context.synchronize
    a = gpuarray.to_gpu(np.random.rand(1000).astype(np.float32))
    b = gpuarray.to_gpu(np.random.rand(1000).astype(np.float32))
    yield "py_small_add_us", median_of(7, lambda: a + b, 2000, sync) * 1e6, "us"

    func = SourceModule(EMPTY, no_extern_c=True).get_function("empty_kernel")
    yield "py_launch_us", median_of(7, lambda: func(block=(1, 1, 1), grid=(1, 1)), 5000,
                                  sync) * 1e6, "us"
    func.prepare("")
    yield "py_prepared_launch_us", median_of(
        5, lambda: func.prepared_call((1, 1), (1, 1, 1)), 5000, sync) * 1e6, "us"

    yield "py_compile_first_ms", first_compile_ms(
        lambda src: SourceModule(src, no_extern_c=True)), "ms"


def bench_cupy():
    import cupy as cp

    sync = cp.cuda.runtime.deviceSynchronize
    a = cp.asarray(np.random.rand(1000).astype(np.float32))
    b = cp.asarray(np.random.rand(1000).astype(np.float32))
    yield "py_small_add_us", median_of(7, lambda: a + b, 2000, sync) * 1e6, "us"
    k = cp.RawKernel(EMPTY, "empty_kernel")
    yield "py_launch_us", median_of(7, lambda: k((1,), (1,), ()), 5000, sync) * 1e6, "us"
    yield "py_compile_first_ms", first_compile_ms(
        lambda src: cp.RawModule(code=src).get_function(
            "saxpy_" + src.split("saxpy_")[1].split("(")[0])), "ms"


def bench_raw():
    from cuda.bindings import driver as cu
    from cuda.bindings import nvrtc

    def check(r):
        err = r[0]
        if int(err) != 0:
            raise RuntimeError(str(err))
        return r[1:] if len(r) > 2 else (r[1] if len(r) == 2 else None)

    check(cu.cuInit(0))
    dev = check(cu.cuDeviceGet(0))
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(ctx))
    major = check(cu.cuDeviceGetAttribute(
        cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    minor = check(cu.cuDeviceGetAttribute(
        cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
    arch = f"--gpu-architecture=sm_{major}{minor}".encode()

    def nvrtc_cubin(src):
        prog = check(nvrtc.nvrtcCreateProgram(src.encode(), b"k.cu", 0, [], []))
        check(nvrtc.nvrtcCompileProgram(prog, 1, [arch]))
        size = check(nvrtc.nvrtcGetCUBINSize(prog))
        buf = b" " * size
        check(nvrtc.nvrtcGetCUBIN(prog, buf))
        check(nvrtc.nvrtcDestroyProgram(prog))
        return buf

    mod = check(cu.cuModuleLoadData(nvrtc_cubin(EMPTY)))
    fn = check(cu.cuModuleGetFunction(mod, b"empty_kernel"))

    def sync():
        check(cu.cuCtxSynchronize())

    yield "py_launch_us", median_of(
        5, lambda: cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0), 5000, sync) * 1e6, "us"
    yield "py_compile_first_ms", first_compile_ms(
        lambda src: check(cu.cuModuleLoadData(nvrtc_cubin(src)))), "ms"


def median_of_rounds(path):
    """One line per (case, implementation) of the rounds in ``path``: the median value
    and the values of every round, in the order the rounds ran."""
    rounds = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                rounds.setdefault((r["case"], r["lib"], r["unit"]), []).append(r["value"])
    return [{"case": case, "lib": lib, "value": statistics.median(values), "unit": unit,
             "rounds": values}
            for (case, lib, unit), values in rounds.items()]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--impl", choices=["pycuda", "cupy", "raw"], default="pycuda")
    p.add_argument("--label", default=None,
                   help="the implementation's name in the output (default: --impl, or "
                        "'rucuda' when pycuda is rucuda's)")
    p.add_argument("--median-of", metavar="JSONL", default=None,
                   help="print, per case and implementation, the median of the values "
                        "in JSONL (one line per round), with every round's value, and "
                        "exit: no GPU needed")
    args = p.parse_args()
    if args.median_of:
        for line in median_of_rounds(args.median_of):
            print(json.dumps(line))
        return
    label = args.label
    if args.impl == "pycuda":
        gen = bench_pycuda()
        if label is None:
            try:
                import rucuda  # noqa: F401
                label = "rucuda"
            except ImportError:
                label = "pycuda"
    elif args.impl == "cupy":
        gen = bench_cupy()
    else:
        gen = bench_raw()
    for case, value, unit in gen:
        print(json.dumps({"case": case, "lib": label or args.impl,
                          "value": round(value, 3), "unit": unit}), flush=True)


if __name__ == "__main__":
    main()
