#!/usr/bin/env python3
"""CuPy peer of rucuda-bench: the raw cases measured the same way through CuPy, and the array
cases (saxpy with a cupy.ElementwiseKernel, cupy.sum, a cupy.ReductionKernel sum, cupy.dot,
cupy.max, cupy.cumsum) on 2^28 elements (2^24 with RUCUDA_BENCH_QUICK=1), filled with ones;
bandwidth counts the fewest bytes each must move (saxpy 12 B per float32, sum/max 4, dot 8,
an inclusive scan one read and one write). The graph cases (graph_chain50_us_per_op,
graph_rk4_step_us, graph_adam_us) report "cupy" (eager) and "cupy-graph" (cupy.cuda.Graph
from stream capture) records. The random-number cases time CuPy's
cupy.random.Generator over its Philox4x3210, XORWOW and MRG32k3a bit generators filling 2^28
float32 (uniform and normal), in samples per second.

Prints one JSON object a line on stdout ({"case", "lib": "cupy", "n", "value", "unit",
"device"}); `run.sh bench` hands the lines to rucuda-bench, which merges them into its table
and bench.jsonl. Progress and errors go to stderr. Without CuPy it says so and prints nothing.

Settings come from the environment, as for rucuda-bench (keep the repetition counts in step
with crates/rucuda-bench/src/config.rs):
  RUCUDA_BENCH_QUICK=1     fewer repetitions, 64 MiB copies
  RUCUDA_BENCH_COPY_MIB=N  size of the copy cases (1024)
  RUCUDA_BENCH_CASES=a,b   only cases whose name contains one of the substrings
  RUCUDA_BENCH_DEVICE=N    device ordinal (0)
"""

import json
import os
import statistics
import sys
import time

try:
    import cupy as cp
    import cupyx
    import numpy as np
except ImportError as error:  # the peer is optional
    print(f"cupy_bench: CuPy is not available ({error}); skipping the cupy peer", file=sys.stderr)
    sys.exit(0)

QUICK = os.environ.get("RUCUDA_BENCH_QUICK", "") not in ("", "0")
COPY_BYTES = int(os.environ.get("RUCUDA_BENCH_COPY_MIB") or (64 if QUICK else 1024)) << 20
PATTERNS = [p.strip() for p in os.environ.get("RUCUDA_BENCH_CASES", "").split(",") if p.strip()]
DEVICE = int(os.environ.get("RUCUDA_BENCH_DEVICE") or 0)

LAUNCHES_PER_BATCH = 1_000 if QUICK else 10_000
ALLOCS_PER_BATCH = 200 if QUICK else 1_000
OVERHEAD = (1, 5) if QUICK else (3, 25)  # (warm-up, timed repetitions)
TRANSFER = (1, 3) if QUICK else (3, 31)  # as the bench binary: a PCIe dip must not move the median
DEVICE_COPY = (1, 5) if QUICK else (3, 40)
RAND = (1, 5) if QUICK else (3, 20)  # as rucuda-bench's rng cases
MIB = 1 << 20
ARRAY_ELEMENTS = 1 << (24 if QUICK else 28)
SMALL_ADD_ELEMENTS = 1000

KERNELS = r"""
extern "C" __global__ void rucuda_bench_empty() {}
extern "C" __global__ void rucuda_bench_args4(const float* x, float* y, float a, unsigned int n) {}
"""


def host_seconds(sampling, run):
    """Seconds of host time per timed call of run() (which finishes its own work)."""
    warmup, reps = sampling
    for _ in range(warmup):
        run()
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return samples


def device_seconds(stream, sampling, enqueue):
    """Seconds between two events recorded around enqueue() on stream."""
    warmup, reps = sampling
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(warmup):
        enqueue()
    stream.synchronize()
    samples = []
    for _ in range(reps):
        start.record(stream)
        enqueue()
        end.record(stream)
        end.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return samples


def micros_per(samples, ops):
    return statistics.median(samples) * 1e6 / ops, "us"


def gbps(samples, bytes_moved):
    return bytes_moved / statistics.median(samples) / 1e9, "GB/s"


def launch_batches(kernel, args):
    def batch():
        for _ in range(LAUNCHES_PER_BATCH):
            kernel((1,), (1,), args)
        cp.cuda.Device().synchronize()

    return micros_per(host_seconds(OVERHEAD, batch), LAUNCHES_PER_BATCH), LAUNCHES_PER_BATCH


def launch_empty_us():
    kernel = cp.RawModule(code=KERNELS).get_function("rucuda_bench_empty")
    return launch_batches(kernel, ())


def launch_args4_us():
    kernel = cp.RawModule(code=KERNELS).get_function("rucuda_bench_args4")
    x = cp.zeros(512, dtype=cp.float32)
    y = cp.zeros(512, dtype=cp.float32)
    return launch_batches(kernel, (x, y, np.float32(2.0), np.uint32(512)))


def alloc_pairs(allocator, stream):
    """Allocate and free 1 MiB through CuPy with `allocator` installed."""
    get_allocator = getattr(cp.cuda, "get_allocator", None)
    previous = get_allocator() if get_allocator else cp.get_default_memory_pool().malloc
    cp.cuda.set_allocator(allocator)
    try:
        def batch():
            with stream:
                for _ in range(ALLOCS_PER_BATCH):
                    memory = cp.cuda.alloc(MIB)
                    del memory
            stream.synchronize()

        return micros_per(host_seconds(OVERHEAD, batch), ALLOCS_PER_BATCH), MIB
    finally:
        cp.cuda.set_allocator(previous)


def alloc_free_us():
    # No memory pool: cudaMalloc and cudaFree for every pair.
    return alloc_pairs(None, cp.cuda.Stream.null)


def alloc_free_async_us():
    # Stream-ordered: cudaMallocAsync / cudaFreeAsync on a non-blocking stream.
    allocator = getattr(cp.cuda, "malloc_async", None) or cp.cuda.MemoryAsyncPool().malloc
    return alloc_pairs(allocator, cp.cuda.Stream(non_blocking=True))


def d2d_copy_GBps():
    src = cp.empty(COPY_BYTES, dtype=cp.uint8)
    dst = cp.empty(COPY_BYTES, dtype=cp.uint8)
    stream = cp.cuda.Stream(non_blocking=True)
    samples = device_seconds(
        stream, DEVICE_COPY, lambda: dst.data.copy_from_device_async(src.data, COPY_BYTES, stream)
    )
    return gbps(samples, 2 * COPY_BYTES), COPY_BYTES


def h2d_pageable_GBps():
    # What a CuPy user writes: cupy.asarray of a NumPy array (device memory from the pool).
    host = np.ones(COPY_BYTES, dtype=np.uint8)

    def run():
        device = cp.asarray(host)
        cp.cuda.Device().synchronize()
        del device

    return gbps(host_seconds(TRANSFER, run), COPY_BYTES), COPY_BYTES


def d2h_pageable_GBps():
    # .get() into a NumPy array allocated once, as rucuda's raw case copies into one buffer.
    device = cp.ones(COPY_BYTES, dtype=cp.uint8)
    host = np.ones(COPY_BYTES, dtype=np.uint8)
    return gbps(host_seconds(TRANSFER, lambda: device.get(out=host)), COPY_BYTES), COPY_BYTES


def pinned_transfer(to_device):
    host = cupyx.empty_pinned(COPY_BYTES, dtype=np.uint8)
    host.fill(1)
    device = cp.empty(COPY_BYTES, dtype=cp.uint8)
    stream = cp.cuda.Stream(non_blocking=True)
    address = host.ctypes.data
    if to_device:
        enqueue = lambda: device.data.copy_from_host_async(address, COPY_BYTES, stream)  # noqa: E731
    else:
        enqueue = lambda: device.data.copy_to_host_async(address, COPY_BYTES, stream)  # noqa: E731
    return gbps(device_seconds(stream, TRANSFER, enqueue), COPY_BYTES), COPY_BYTES


def h2d_pinned_GBps():
    return pinned_transfer(True)


def d2h_pinned_GBps():
    return pinned_transfer(False)


_COMPILE_SALT = [0]


def compile_first_ms():
    """A never-seen small kernel compiled and loaded (RawModule + get_function), its cache
    folder empty: CuPy's first compile, as rucuda's compile_first_ms measures it."""
    import tempfile

    os.environ["CUPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="rucuda-cupy-cache-")
    samples = []
    warmup, reps = (1, 3) if QUICK else (2, 11)
    for i in range(warmup + reps):
        _COMPILE_SALT[0] += 1
        name = f"saxpy_{os.getpid()}_{_COMPILE_SALT[0]}"
        src = (
            f'extern "C" __global__ void {name}(float a, const float *x, float *y, int n) {{\n'
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * x[i] + y[i];\n}\n"
        )
        t = time.perf_counter()
        cp.RawModule(code=src).get_function(name)
        if i >= warmup:
            samples.append(time.perf_counter() - t)
    return (statistics.median(samples) * 1e3, "ms"), 1


def array_case(bytes_per_element, work):
    """GB/s of work() (CuPy calls queued on a non-blocking stream) over the array elements."""
    stream = cp.cuda.Stream(non_blocking=True)

    def enqueue():
        with stream:
            work()

    samples = device_seconds(stream, DEVICE_COPY, enqueue)
    return gbps(samples, bytes_per_element * ARRAY_ELEMENTS), ARRAY_ELEMENTS


def saxpy_GBps():
    x = cp.ones(ARRAY_ELEMENTS, dtype=cp.float32)
    y = cp.ones(ARRAY_ELEMENTS, dtype=cp.float32)
    z = cp.empty_like(x)
    kernel = cp.ElementwiseKernel(
        "float32 a, float32 x, float32 y", "float32 z", "z = a * x + y", "rucuda_bench_saxpy"
    )
    a = np.float32(2.0)
    return array_case(12, lambda: kernel(a, x, y, z))


def sum_f32_GBps():
    x = cp.ones(ARRAY_ELEMENTS, dtype=cp.float32)
    return array_case(4, lambda: cp.sum(x))


def reductionkernel_sum_f32_GBps():
    x = cp.ones(ARRAY_ELEMENTS, dtype=cp.float32)
    kernel = cp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rucuda_bench_sum")
    return array_case(4, lambda: kernel(x))


def dot_f32_GBps():
    x = cp.ones(ARRAY_ELEMENTS, dtype=cp.float32)
    y = cp.ones(ARRAY_ELEMENTS, dtype=cp.float32)
    return array_case(8, lambda: cp.dot(x, y))


def max_f32_GBps():
    x = cp.ones(ARRAY_ELEMENTS, dtype=cp.float32)
    return array_case(4, lambda: cp.max(x))


def sum_f64_GBps():
    x = cp.ones(ARRAY_ELEMENTS, dtype=cp.float64)
    return array_case(8, lambda: cp.sum(x))


def axis_sum(axis):
    """cupy.sum(a, axis=axis) of a square float32 array of ARRAY_ELEMENTS elements; the
    bytes counted are the input's and the output's."""
    side = 1 << (ARRAY_ELEMENTS.bit_length() // 2)
    x = cp.ones((side, side), dtype=cp.float32)
    stream = cp.cuda.Stream(non_blocking=True)

    def enqueue():
        with stream:
            cp.sum(x, axis=axis)

    samples = device_seconds(stream, DEVICE_COPY, enqueue)
    return gbps(samples, 4 * side * side + 4 * side), side * side


def sum_axis0_f32_GBps():
    return axis_sum(0)


def sum_axis1_f32_GBps():
    return axis_sum(1)


def inclusive_scan(dtype):
    # dtype= keeps the type (NumPy widens int32 cumsums to int64 otherwise); out= reuses one
    # output array, as the other libs' cases do.
    x = cp.ones(ARRAY_ELEMENTS, dtype=dtype)
    out = cp.empty_like(x)
    return array_case(2 * x.itemsize, lambda: cp.cumsum(x, dtype=dtype, out=out))


def scan_incl_i32_GBps():
    return inclusive_scan(cp.int32)


def scan_incl_f32_GBps():
    return inclusive_scan(cp.float32)


def scan_incl_i64_GBps():
    return inclusive_scan(cp.int64)


def rand_case(bit_generator, normal):
    """G samples/s of CuPy's random.Generator over `bit_generator` filling one float32 array
    (uniform with random(), normal with standard_normal()), as rucuda-bench's rng cases: 2^28
    elements, 3 warm-up and 20 timed fills. When this CuPy's Generator cannot draw float32
    normals, the legacy cupy.random.RandomState (cuRAND's host API) stands in, and says so."""
    out = cp.empty(ARRAY_ELEMENTS, dtype=cp.float32)
    generator = cp.random.Generator(bit_generator(1234))
    if normal:
        work = lambda: generator.standard_normal(dtype=cp.float32, out=out)  # noqa: E731
    else:
        work = lambda: generator.random(dtype=cp.float32, out=out)  # noqa: E731
    try:
        work()
    except Exception as error:
        if not normal:
            raise
        methods = {
            cp.random.XORWOW: cp.cuda.curand.CURAND_RNG_PSEUDO_XORWOW,
            cp.random.MRG32k3a: cp.cuda.curand.CURAND_RNG_PSEUDO_MRG32K3A,
            cp.random.Philox4x3210: cp.cuda.curand.CURAND_RNG_PSEUDO_PHILOX4_32_10,
        }
        print(f"cupy_bench: Generator.standard_normal failed ({error!r}); "
              "timing the legacy RandomState", file=sys.stderr)
        legacy = cp.random.RandomState(1234, method=methods[bit_generator])
        work = lambda: legacy.standard_normal(size=ARRAY_ELEMENTS, dtype=cp.float32)  # noqa: E731
    stream = cp.cuda.Stream(non_blocking=True)

    def enqueue():
        with stream:
            work()

    samples = device_seconds(stream, RAND, enqueue)
    return (ARRAY_ELEMENTS / statistics.median(samples) / 1e9, "GS/s"), ARRAY_ELEMENTS


def rand_uniform_f32_philox_GSps():
    return rand_case(cp.random.Philox4x3210, False)


def rand_normal_f32_philox_GSps():
    return rand_case(cp.random.Philox4x3210, True)


def rand_uniform_f32_xorwow_GSps():
    return rand_case(cp.random.XORWOW, False)


def rand_normal_f32_xorwow_GSps():
    return rand_case(cp.random.XORWOW, True)


def rand_uniform_f32_mrg32k3a_GSps():
    return rand_case(cp.random.MRG32k3a, False)


def rand_normal_f32_mrg32k3a_GSps():
    return rand_case(cp.random.MRG32k3a, True)


SWEEP_SIZES = [1 << p for p in range(16, (24 if QUICK else 28) + 1, 2)]


def axpy_fused_GBps():
    # 2*x + y written as CuPy array expressions (what a CuPy user writes: a temporary for
    # 2*x, then the sum), the result allocated from CuPy's pool each time; 12 B/element.
    x = cp.full(ARRAY_ELEMENTS, 1.5, dtype=cp.float32)
    y = cp.full(ARRAY_ELEMENTS, -0.25, dtype=cp.float32)
    return array_case(12, lambda: 2 * x + y)


def small_add_us():
    # a + b on 1000 float32, the result allocated (CuPy's pool) and dropped; host time per
    # operation over a batch followed by one stream synchronize.
    a = cp.ones(SMALL_ADD_ELEMENTS, dtype=cp.float32)
    b = cp.ones(SMALL_ADD_ELEMENTS, dtype=cp.float32)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        c = a + b  # compile and cache the kernel first
    stream.synchronize()
    del c

    def batch():
        with stream:
            for _ in range(LAUNCHES_PER_BATCH):
                c = a + b
                del c
        stream.synchronize()

    return micros_per(host_seconds(OVERHEAD, batch), LAUNCHES_PER_BATCH), SMALL_ADD_ELEMENTS


def sweep(bytes_per_element, make_work, per_sample=1.0):
    """One (value, unit), n per size: device time of make_work(n)() on a stream."""
    points = []
    for n in SWEEP_SIZES:
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            work = make_work(n)

        def enqueue():
            with stream:
                work()

        reps = 101 if n <= 1 << 20 else 21
        samples = device_seconds(stream, (3, reps), enqueue)
        if bytes_per_element is None:  # samples per second
            points.append(((n / statistics.median(samples) / 1e9, "GS/s"), n))
        else:
            points.append((gbps(samples, bytes_per_element * n), n))
        cp.get_default_memory_pool().free_all_blocks()
    return points


def saxpy_sweep_GBps():
    kernel = cp.ElementwiseKernel(
        "float32 a, float32 x, float32 y", "float32 z", "z = a * x + y", "rucuda_bench_saxpy"
    )

    def make(n):
        x, y = cp.ones(n, dtype=cp.float32), cp.ones(n, dtype=cp.float32)
        z = cp.empty_like(x)
        a = np.float32(2.0)
        return lambda: kernel(a, x, y, z)

    return sweep(12, make)


def sum_f32_sweep_GBps():
    def make(n):
        x = cp.ones(n, dtype=cp.float32)
        return lambda: cp.sum(x)

    return sweep(4, make)


def scan_incl_i32_sweep_GBps():
    def make(n):
        x = cp.ones(n, dtype=cp.int32)
        out = cp.empty_like(x)
        return lambda: cp.cumsum(x, dtype=cp.int32, out=out)

    return sweep(8, make)


def rand_uniform_f32_philox_sweep_GSps():
    generator = cp.random.Generator(cp.random.Philox4x3210(1234))

    def make(n):
        out = cp.empty(n, dtype=cp.float32)
        return lambda: generator.random(dtype=cp.float32, out=out)

    return sweep(None, make)


# ---- Sorting and its family (issue 20): the same keys as rucuda-bench's cases/sort.rs ----

def splitmix(n, seed):
    """SplitMix64 words (uint64), as the Rust bench and the NVIDIA peer make them."""
    i = np.arange(1, n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + i * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return z


def random_u32(n, seed):
    return cp.asarray(splitmix(n, seed).astype(np.uint32))


def random_f32(n, seed):
    return cp.asarray(((splitmix(n, seed) >> np.uint64(40)).astype(np.float32) / np.float32(1 << 24)))


def keys_case(n, work):
    stream = cp.cuda.Stream(non_blocking=True)

    def enqueue():
        with stream:
            work()

    samples = device_seconds(stream, DEVICE_COPY, enqueue)
    return (n / statistics.median(samples) / 1e9, "GK/s"), n


def micros_case(n, work):
    stream = cp.cuda.Stream(non_blocking=True)

    def enqueue():
        with stream:
            work()

    samples = device_seconds(stream, DEVICE_COPY, enqueue)
    return micros_per(samples, 1), n


def sort_keys_u32_GKps():
    x = random_u32(ARRAY_ELEMENTS, 1)
    return keys_case(ARRAY_ELEMENTS, lambda: cp.sort(x))


def sort_keys_f32_GKps():
    x = random_f32(ARRAY_ELEMENTS, 2)
    return keys_case(ARRAY_ELEMENTS, lambda: cp.sort(x))


def sort_pairs_u32_GKps():
    # CuPy has no sort_by_key: argsort, then gather the keys and the values.
    k = random_u32(ARRAY_ELEMENTS, 3)
    v = random_u32(ARRAY_ELEMENTS, 4)

    def work():
        p = cp.argsort(k)
        return k[p], v[p]

    return keys_case(ARRAY_ELEMENTS, work)


ROWS_64 = 16 if QUICK else 64


def segsort_f32_4096x4096_GKps():
    rows = 1024 if QUICK else 4096
    x = random_f32(rows * 4096, 5).reshape(rows, 4096)
    return keys_case(x.size, lambda: cp.sort(x, axis=-1))


def segsort_f32_64x128256_GKps():
    x = random_f32(ROWS_64 * 128256, 6).reshape(ROWS_64, 128256)
    return keys_case(x.size, lambda: cp.sort(x, axis=-1))


def sortrows_f32_64x128256_us():
    x = random_f32(ROWS_64 * 128256, 6).reshape(ROWS_64, 128256)

    def work():
        p = cp.argsort(-x, axis=-1)
        return cp.take_along_axis(x, p, axis=-1), p

    return micros_case(x.size, work)


def topk(k):
    # CuPy has no topk: argpartition, then sort the k chosen.
    x = random_f32(ROWS_64 * 128256, 6).reshape(ROWS_64, 128256)

    def work():
        part = cp.argpartition(-x, k - 1, axis=-1)[:, :k]
        vals = cp.take_along_axis(x, part, axis=-1)
        order = cp.argsort(-vals, axis=-1)
        return cp.take_along_axis(vals, order, axis=-1), cp.take_along_axis(part, order, axis=-1)

    return micros_case(x.size, work)


def topk_f32_64x128256_us():
    return topk(50)


def topk1024_f32_64x128256_us():
    return topk(1024)


def histogram_u8_256_GBps():
    x = cp.asarray(splitmix(ARRAY_ELEMENTS, 7).astype(np.uint8))
    return array_case(1, lambda: cp.histogram(x, 256, (0, 256)))


def histogram_f32_256_GBps():
    x = random_f32(ARRAY_ELEMENTS, 8)
    return array_case(4, lambda: cp.histogram(x, 256, (0.0, 1.0)))


def select_if_f32_GBps():
    x = random_f32(ARRAY_ELEMENTS, 9)
    selected = int((x > 0.5).sum())
    (value, unit), n = array_case(4, lambda: x[x > 0.5])
    return (value * (4 * ARRAY_ELEMENTS + 4 * selected) / (4 * ARRAY_ELEMENTS), unit), n


def unique_i32_GKps():
    x = cp.asarray((splitmix(ARRAY_ELEMENTS, 11) % np.uint64(1 << 20)).astype(np.int32))
    return keys_case(ARRAY_ELEMENTS, lambda: cp.unique(x))


def searchsorted_f32_GKps():
    a = cp.sort(random_f32(ARRAY_ELEMENTS, 12))
    q = random_f32(ARRAY_ELEMENTS, 13)
    return keys_case(ARRAY_ELEMENTS, lambda: cp.searchsorted(a, q))


SORT_CASES = [
    sort_keys_u32_GKps,
    sort_keys_f32_GKps,
    sort_pairs_u32_GKps,
    segsort_f32_4096x4096_GKps,
    segsort_f32_64x128256_GKps,
    sortrows_f32_64x128256_us,
    topk_f32_64x128256_us,
    topk1024_f32_64x128256_us,
    histogram_u8_256_GBps,
    histogram_f32_256_GBps,
    select_if_f32_GBps,
    unique_i32_GKps,
    searchsorted_f32_GKps,
]


def sort_keys_u32_sweep_GKps():
    points = []
    for p in range(20, 25) if QUICK else range(24, 30):
        n = 1 << p
        x = random_u32(n, 10 + p)
        stream = cp.cuda.Stream(non_blocking=True)

        def enqueue():
            with stream:
                cp.sort(x)

        samples = device_seconds(stream, (2, 7 if p >= 28 else 15), enqueue)
        points.append(((n / statistics.median(samples) / 1e9, "GK/s"), n))
        del x
        cp.get_default_memory_pool().free_all_blocks()
    return points


SWEEPS = [
    saxpy_sweep_GBps,
    sum_f32_sweep_GBps,
    scan_incl_i32_sweep_GBps,
    rand_uniform_f32_philox_sweep_GSps,
    sort_keys_u32_sweep_GKps,
]


# ---- launch-bound array code, eager and as a cupy.cuda.Graph (stream capture) ----
# Same work as rucuda-bench's graph cases (src/cases/graph.rs): host time per unit of work
# over a batch followed by one synchronize, median over batches. Each returns two records:
# "cupy" (eager) and "cupy-graph" (captured once with Stream.begin_capture/end_capture,
# then Graph.launch per unit). The graph's result is checked against eager execution.

GRAPH_SAMPLING = (1, 3) if QUICK else (1, 7)


def capture_graph(stream, work):
    """A cupy.cuda.Graph of what work() queues on stream."""
    with stream:
        stream.begin_capture()
        try:
            out = work()
        finally:
            graph = stream.end_capture()
    if hasattr(graph, "upload"):
        graph.upload(stream)
    return graph, out


def graph_pair(stream, eager_unit, graph, units_per_batch, per):
    def eager_batch():
        with stream:
            for _ in range(units_per_batch):
                eager_unit()
        stream.synchronize()

    def graph_batch():
        for _ in range(units_per_batch):
            graph.launch(stream)
        stream.synchronize()

    eager = micros_per(host_seconds(GRAPH_SAMPLING, eager_batch), units_per_batch * per)
    graphed = micros_per(host_seconds(GRAPH_SAMPLING, graph_batch), units_per_batch * per)
    return eager, graphed


def check_same(what, got, want):
    if not bool(cp.all(got.view(cp.uint32) == want.view(cp.uint32))):
        raise RuntimeError(f"{what}: the graph's result differs from eager execution")


def graph_chain50_us_per_op():
    n, ops = 4096, 50
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        x = cp.arange(n, dtype=cp.float32)

    def chain():
        y = x * np.float32(0.999)
        for i in range(1, ops):
            y = y * np.float32(0.999) if i % 2 == 0 else y + np.float32(0.001)
        return y

    with stream:
        want = chain()  # compile the kernels
    stream.synchronize()
    try:
        graph, out = capture_graph(stream, chain)
    except Exception as error:  # CuPy's pool refusing allocations under capture
        print(f"cupy_bench: chain capture with allocations failed ({error!r}); using out=", file=sys.stderr)
        with stream:
            bufs = [cp.empty(n, dtype=cp.float32) for _ in range(2)]

        def chain_out():
            cp.multiply(x, np.float32(0.999), out=bufs[0])
            for i in range(1, ops):
                src, dst = bufs[(i - 1) % 2], bufs[i % 2]
                if i % 2 == 0:
                    cp.multiply(src, np.float32(0.999), out=dst)
                else:
                    cp.add(src, np.float32(0.001), out=dst)
            return bufs[(ops - 1) % 2]

        graph, out = capture_graph(stream, chain_out)
    graph.launch(stream)
    stream.synchronize()
    check_same("graph_chain50", out, want)
    batch = 20 if QUICK else 200
    eager, graphed = graph_pair(stream, chain, graph, batch, ops)
    return [("cupy", eager, n), ("cupy-graph", graphed, n)]


def rk4_step(x, v, h=np.float32(0.01)):
    k, c, d, e = np.float32(1.0), np.float32(0.1), np.float32(0.05), np.float32(0.3)

    def accel(x, v):
        a = x * -k
        b = v * c
        r = a - b
        v2 = v * v
        v3 = v2 * v
        dv3 = v3 * d
        r = r - dv3
        s = cp.sin(x)
        co = cp.cos(v)
        p = s * co
        q = p * e
        return r + q

    def advance(base, kk, hh):
        t = kk * hh
        return base + t

    def combine(k1, k2, k3, k4):
        t = k2 * np.float32(2.0)
        u = k3 * np.float32(2.0)
        s = k1 + t
        s = s + u
        s = s + k4
        return s * np.float32(h / np.float32(6.0))

    half = np.float32(h / np.float32(2.0))
    k1v = accel(x, v)
    x2 = advance(x, v, half)
    v2 = advance(v, k1v, half)
    k2v = accel(x2, v2)
    x3 = advance(x, v2, half)
    v3 = advance(v, k2v, half)
    k3v = accel(x3, v3)
    x4 = advance(x, v3, h)
    v4 = advance(v, k3v, h)
    k4v = accel(x4, v4)
    dx = combine(v, v2, v3, v4)
    dv = combine(k1v, k2v, k3v, k4v)
    x += dx
    v += dv


def rk4_steps_eager(stream, x, v, steps):
    with stream:
        for _ in range(steps):
            rk4_step(x, v)
    stream.synchronize()


def graph_rk4_step_us():
    n = 4096
    steps = 1_000 if QUICK else 10_000
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        x = cp.linspace(-1.0, 1.0, n, dtype=cp.float32)
        v = cp.zeros(n, dtype=cp.float32)
        xe, ve = x.copy(), v.copy()
        rk4_step(xe, ve)  # compile the kernels
        xe[...] = x
        ve[...] = v
    stream.synchronize()
    try:
        graph, _ = capture_graph(stream, lambda: rk4_step(x, v))
    except Exception as error:  # CuPy's pool refusing the temporaries under capture
        print(f"cupy_bench: graph_rk4_step_us capture failed ({error!r}); eager only", file=sys.stderr)
        eager = micros_per(host_seconds(GRAPH_SAMPLING, lambda: (rk4_steps_eager(stream, xe, ve, steps))), steps)
        return [("cupy", eager, steps)]
    for _ in range(10):
        graph.launch(stream)
        with stream:
            rk4_step(xe, ve)
    stream.synchronize()
    check_same("graph_rk4 x", x, xe)
    eager, graphed = graph_pair(stream, lambda: rk4_step(xe, ve), graph, steps, 1)
    return [("cupy", eager, steps), ("cupy-graph", graphed, steps)]


def graph_adam_us():
    tensors = 200
    update_m = cp.ElementwiseKernel("float32 b, float32 g", "float32 m", "m = b * m + (1.0f - b) * g", "rucuda_bench_adam_m")
    update_v = cp.ElementwiseKernel("float32 b, float32 g", "float32 v", "v = b * v + (1.0f - b) * g * g", "rucuda_bench_adam_v")
    update_p = cp.ElementwiseKernel(
        "float32 lr, float32 eps, float32 m, float32 v", "float32 p", "p -= lr * m / (sqrtf(v) + eps)", "rucuda_bench_adam_p"
    )
    b1, b2, lr, eps = np.float32(0.9), np.float32(0.999), np.float32(1e-3), np.float32(1e-8)
    stream = cp.cuda.Stream(non_blocking=True)

    def make():
        out = []
        for i in range(tensors):
            n = 1024 << (i % 7)
            out.append(
                (
                    cp.linspace(-1.0, 1.0, n, dtype=cp.float32),
                    cp.linspace(0.5, -0.5, n, dtype=cp.float32),
                    cp.zeros(n, dtype=cp.float32),
                    cp.zeros(n, dtype=cp.float32),
                )
            )
        return out

    def step(ts):
        for p, g, m, v in ts:
            update_m(b1, g, m)
            update_v(b2, g, v)
            update_p(lr, eps, m, v, p)

    with stream:
        ts, eager_ts = make(), make()
        step(make())  # compile the kernels
    stream.synchronize()
    graph, _ = capture_graph(stream, lambda: step(ts))
    for _ in range(3):
        graph.launch(stream)
        with stream:
            step(eager_ts)
    stream.synchronize()
    for i in range(0, tensors, 37):
        check_same("graph_adam p", ts[i][0], eager_ts[i][0])
    batch = 5 if QUICK else 20
    eager, graphed = graph_pair(stream, lambda: step(eager_ts), graph, batch, 1)
    return [("cupy", eager, tensors), ("cupy-graph", graphed, tensors)]


GRAPH_CASES = [graph_chain50_us_per_op, graph_rk4_step_us, graph_adam_us]


CASES = [
    d2d_copy_GBps,
    launch_empty_us,
    launch_args4_us,
    alloc_free_us,
    alloc_free_async_us,
    h2d_pageable_GBps,
    d2h_pageable_GBps,
    h2d_pinned_GBps,
    d2h_pinned_GBps,
    compile_first_ms,
    saxpy_GBps,
    sum_f32_GBps,
    reductionkernel_sum_f32_GBps,
    dot_f32_GBps,
    max_f32_GBps,
    sum_f64_GBps,
    sum_axis0_f32_GBps,
    sum_axis1_f32_GBps,
    scan_incl_i32_GBps,
    scan_incl_f32_GBps,
    scan_incl_i64_GBps,
    axpy_fused_GBps,
    small_add_us,
    rand_uniform_f32_philox_GSps,
    rand_normal_f32_philox_GSps,
    rand_uniform_f32_xorwow_GSps,
    rand_normal_f32_xorwow_GSps,
    rand_uniform_f32_mrg32k3a_GSps,
    rand_normal_f32_mrg32k3a_GSps,
] + SORT_CASES + SWEEPS + GRAPH_CASES


def main():
    cp.cuda.Device(DEVICE).use()
    name = cp.cuda.runtime.getDeviceProperties(DEVICE)["name"]
    device_name = name.decode() if isinstance(name, bytes) else str(name)
    print(f"cupy_bench: CuPy {cp.__version__} on {device_name}", file=sys.stderr)
    failed = 0
    for case in CASES:
        if PATTERNS and not any(p in case.__name__ for p in PATTERNS):
            continue
        try:
            result = case()
        except Exception as error:  # report and go on with the other cases
            print(f"cupy_bench: {case.__name__} failed: {error!r}", file=sys.stderr)
            failed += 1
            continue
        finally:
            cp.get_default_memory_pool().free_all_blocks()
        if case in GRAPH_CASES:
            rows = result
        else:
            rows = [("cupy", vu, n) for vu, n in (result if case in SWEEPS else [result])]
        for lib, (value, unit), n in rows:
            print(f"  {case.__name__:<24} {lib:<10} {value:12.4f} {unit}  (n={n})", file=sys.stderr)
            record = {"case": case.__name__, "lib": lib, "n": n, "value": value, "unit": unit, "device": device_name}
            print(json.dumps(record), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
