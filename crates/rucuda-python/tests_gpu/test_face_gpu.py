"""rucuda's own GPU tests of its Python face, for what PyCUDA's suite does not check:
the Rust argument packer against the values a kernel sees, the operators' fast path,
cuRAND's generator classes' statistics, the multi puts, CUDA arrays and 2D/3D copies,
IPC handles, and work on a non-blocking stream. Run by ``run.sh pycuda-tests`` after
PyCUDA's files (pytest, with the wheel installed; needs a GPU)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import pycuda.autoinit  # noqa: F401
import pycuda.driver as drv
import pycuda.gpuarray as gpuarray
from pycuda.compiler import SourceModule

RNG = np.random.default_rng()

ECHO = SourceModule("""
extern "C" __global__ void echo(int a, double b, float c, signed char d,
                                unsigned long long e, short f, double *out)
{
    out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = (double)e; out[5] = f;
}
""", no_extern_c=True).get_function("echo")


def poisoned(n):
    return gpuarray.to_gpu(np.full(n, np.nan))


def test_prepared_call_packs_every_code_in_rust():
    out = poisoned(6)
    ECHO.prepare("idfbQhP")
    ECHO.prepared_call((1, 1), (1, 1, 1), -7, 2.5, np.float32(0.25), -5, 2 ** 40 + 3, -300,
                       out)
    assert out.get().tolist() == [-7, 2.5, 0.25, -5, 2 ** 40 + 3, -300]


def test_function_call_packs_numpy_scalars_in_rust():
    out = poisoned(6)
    ECHO(np.int32(11), np.float64(-1.5), np.float32(3.0), np.int8(-2), np.uint64(9),
         np.int16(7), out, block=(1, 1, 1), grid=(1, 1))
    assert out.get().tolist() == [11, -1.5, 3.0, -2, 9, 7]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint32])
def test_operators_fast_path_match_numpy(dtype):
    """Each operator twice per signature: the first call takes the Python fast path (and
    registers its kernel), the second the native table; both results match NumPy and
    carry the same attributes."""
    from pycuda import _ops
    for shape in ((1,), (1000,), (300_001,), (300, 7)):
        a_h = (RNG.random(shape) * 100 + 1).astype(dtype)
        b_h = (RNG.random(shape) * 100 + 1).astype(dtype)
        a, b = gpuarray.to_gpu(a_h), gpuarray.to_gpu(b_h)
        ops = ["__add__", "__sub__", "__mul__"]
        if np.dtype(dtype).kind == "f":
            ops.append("__truediv__")
        for op in ops:
            before = len(_ops.FAST_TABLE)
            first = getattr(a, op)(b)
            learnt = len(_ops.FAST_TABLE)
            again = getattr(a, op)(b)
            assert len(_ops.FAST_TABLE) == learnt >= before
            want = getattr(a_h, op)(b_h)
            for got in (first, again):
                assert type(got) is gpuarray.GPUArray
                assert (got.shape, got.strides, got.dtype) == (a.shape, a.strides, a.dtype)
                assert got.base is None and got.allocator is a.allocator
                if op == "__truediv__":
                    np.testing.assert_allclose(got.get(), want, rtol=1e-6)
                else:
                    np.testing.assert_array_equal(got.get(), want)
            assert sorted(first.__dict__) == sorted(again.__dict__)
            assert int(first.gpudata) != int(again.gpudata)
    assert len(_ops.FAST_TABLE) > 0


GENERATORS = ["XORWOWRandomNumberGenerator", "MRG32k3aRandomNumberGenerator",
              "PhiloxRandomNumberGenerator", "Sobol32RandomNumberGenerator",
              "ScrambledSobol32RandomNumberGenerator", "Sobol64RandomNumberGenerator",
              "ScrambledSobol64RandomNumberGenerator"]


@pytest.mark.parametrize("name", GENERATORS)
def test_generator_statistics(name):
    """Pseudo-random generators: moments. Quasi-random ones (Sobol) start every dimension
    at the sequence's first point, as cuRAND's do, so their checks are looser."""
    from pycuda import curandom
    gen = getattr(curandom, name)()
    quasi = "Sobol" in name
    n = 1 << 20
    u = gen.gen_uniform(n, np.float32).get()
    assert (u > 0).all() and (u <= 1).all()
    assert abs(u.mean() - 0.5) < (0.02 if quasi else 0.01)
    z = gen.gen_normal(n, np.float64).get()
    if quasi:
        assert abs(np.median(z)) < 0.01
    else:
        assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    k = gen.gen_poisson(n, np.uint32, 5.0).get()
    assert abs(k.mean() - 5.0) < (0.2 if quasi else 0.05)
    # In place: each element's value is its own mean (both sides of the switch at 64).
    for lam in ((3.0,) if quasi else (3.0, 200.0)):
        a = gpuarray.empty(n, np.float32).fill(lam)
        gen.fill_poisson(a)
        v = a.get()
        assert abs(v.mean() - lam) < 0.05 * lam
        if not quasi:
            assert abs(v.var() - lam) < 0.1 * lam
    if not quasi:
        raw = gen.gen_uniform(n, np.uint32).get()
        assert len(np.unique(raw)) > n // 2
    else:
        # A Sobol dimension's first points differ only in their top bits (and a 64-bit
        # one's low 32 bits are zero), as cuRAND's do: the raw words of the sequence's
        # own width are many, not mostly distinct.
        wide = np.uint64 if "64" in name else np.uint32
        raw = gen.gen_uniform(n, wide).get()
        assert len(np.unique(raw)) > 64


def test_multi_put_and_take_put_match_numpy():
    n, m = 1000, 300
    srcs_h = [RNG.random(n).astype(np.float32) for _ in range(3)]
    srcs = [gpuarray.to_gpu(s) for s in srcs_h]
    dest_h = RNG.permutation(n)[:m].astype(np.int32)
    src_idx_h = RNG.integers(0, n - 20, m).astype(np.int32)
    dest, src_idx = gpuarray.to_gpu(dest_h), gpuarray.to_gpu(src_idx_h)
    outs = gpuarray.multi_put([s[:m] for s in srcs], dest, dest_shape=(n,))
    for o, s in zip(outs, srcs_h):
        np.testing.assert_array_equal(o.get()[dest_h], s[:m])
    outs = [gpuarray.zeros(n, np.float32) for _ in range(3)]
    gpuarray.multi_take_put(srcs, dest, src_idx, out=outs, src_offsets=[0, 5, 20])
    for o, s, off in zip(outs, srcs_h, [0, 5, 20]):
        want = np.zeros(n, np.float32)
        want[dest_h] = s[src_idx_h + off]
        np.testing.assert_array_equal(o.get(), want)


def test_arrays_and_2d_3d_copies_round_trip():
    img = RNG.random((37, 53)).astype(np.float32)
    ary = drv.np_to_array(img, "C")
    d = ary.get_descriptor()
    assert (d.width, d.height) == (53, 37)
    back = np.full_like(img, np.nan)
    c = drv.Memcpy2D()
    c.set_src_array(ary)
    c.set_dst_host(back)
    c.width_in_bytes = c.dst_pitch = 53 * 4
    c.height = 37
    c()
    np.testing.assert_array_equal(back, img)
    vol = RNG.integers(0, 1 << 16, (5, 7, 9)).astype(np.uint16)
    ary3 = drv.np_to_array(vol, "C")
    back3 = np.zeros_like(vol)
    c3 = drv.Memcpy3D()
    c3.set_src_array(ary3)
    c3.set_dst_host(back3)
    c3.width_in_bytes = c3.dst_pitch = 9 * 2
    c3.height = c3.dst_height = 7
    c3.depth = 5
    c3()
    np.testing.assert_array_equal(back3, vol)
    # A pitched device-to-host copy of a sub-block, on a stream.
    g = gpuarray.to_gpu(img)
    sub = np.zeros((10, 8), np.float32)
    c = drv.Memcpy2D()
    c.set_src_device(g.gpudata)
    c.src_pitch = 53 * 4
    c.src_x_in_bytes, c.src_y = 3 * 4, 2
    c.set_dst_host(sub)
    c.width_in_bytes = c.dst_pitch = 8 * 4
    c.height = 10
    s = drv.Stream()
    c(s)
    s.synchronize()
    np.testing.assert_array_equal(sub, img[2:12, 3:11])


def test_ipc_handle_opens_in_another_process():
    data = np.arange(1000, dtype=np.float64)
    pooled = gpuarray.to_gpu(data)
    with pytest.raises(drv.LogicError, match="allocator=drv.mem_alloc"):
        drv.mem_get_ipc_handle(pooled.gpudata)
    g = gpuarray.to_gpu(data, allocator=drv.mem_alloc)
    handle = drv.mem_get_ipc_handle(g.gpudata)
    assert len(handle) == 64
    child = (
        "import sys, numpy as np, pycuda.autoinit, pycuda.driver as drv\n"
        "h = drv.IPCMemoryHandle(bytes.fromhex(sys.argv[1]))\n"
        "out = np.zeros(1000)\n"
        "drv.memcpy_dtoh(out, int(h))\n"
        "print(float(out.sum()))\n"
        "h.close()\n")
    r = subprocess.run([sys.executable, "-c", child, handle.hex()], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout.strip().splitlines()[-1]) == data.sum()


def test_fill_and_astype_on_a_non_blocking_stream():
    s = drv.Stream(flags=1)  # CU_STREAM_NON_BLOCKING
    a = gpuarray.empty(1 << 22, np.float32, allocator=drv.mem_alloc)
    a.fill(2.5, stream=s)
    b = a.astype(np.float64, stream=s)
    s.synchronize()
    assert (b.get() == 2.5).all()


SPIN = SourceModule("""
extern "C" __global__ void spin(long long cycles)
{
    const long long start = clock64();
    while (clock64() - start < cycles) { }
}
""", no_extern_c=True).get_function("spin")


def test_a_reductions_partials_outlive_a_busy_non_blocking_stream():
    """The partial sums of a reduction queued behind a spin on a non-blocking stream are
    freed as the call returns; arrays then allocated and filled on the legacy stream must
    not get their memory while the reduction still has to read it."""
    from pycuda.reduction import ReductionKernel
    s = drv.Stream(flags=1)  # CU_STREAM_NON_BLOCKING
    host = np.arange(1 << 22, dtype=np.float64)
    x = gpuarray.to_gpu(host)
    k = ReductionKernel(np.float64, "0", "a+b", "x[i]", "const double *x")
    SPIN(np.int64(2_000_000_000), block=(1, 1, 1), grid=(1, 1), stream=s)  # about 1 s
    total = k(x, stream=s)
    # As big as the partials (256 blocks): the pool would hand their memory out first.
    junk = [gpuarray.empty(256, np.float64).fill(-1e300) for _ in range(64)]
    s.synchronize()
    assert total.get() == host.sum()
    del junk


LATE_WRITE = SourceModule("""
extern "C" __global__ void late_write(int *a, long long cycles, int n)
{
    const long long start = clock64();
    while (clock64() - start < cycles) { }
    for (int i = threadIdx.x; i < n; i += blockDim.x) a[i] = 3 * i + 1;
}
""", no_extern_c=True).get_function("late_write")


@pytest.mark.parametrize("where", ["legacy stream", "blocking stream"])
def test_overlapping_elementwise_waits_for_the_kernel_before_it(where):
    """The face's elementwise kernels launch overlapping their predecessor (programmatic
    dependent launch on compute capability 9.0+) and wait for it inside: `a + b` queued
    right after a plain kernel that writes `a` late (behind a ~0.1 s spin, on the legacy
    stream or on a blocking stream, which the legacy stream waits for) reads what it
    wrote; and a chain of 300 dependent elementwise kernels, each overlapping the last,
    sums exactly."""
    from pycuda.elementwise import ElementwiseKernel
    k = ElementwiseKernel("int *z, const int *x, const int *y", "z[i] = x[i] + y[i]",
                          "rucuda_test_add")
    plain, ranged, _sms = k._functions()
    assert plain._overlapping and ranged._overlapping
    n = 100_003
    b_h = RNG.integers(-1000, 1000, n).astype(np.int32)
    a, b = gpuarray.to_gpu(np.full(n, -7, np.int32)), gpuarray.to_gpu(b_h)
    stream = drv.Stream() if where == "blocking stream" else None
    LATE_WRITE(a, np.int64(200_000_000), np.int32(n), block=(256, 1, 1), grid=(1, 1),
               stream=stream)
    c = a + b
    expected = 3 * np.arange(n, dtype=np.int32) + 1 + b_h
    np.testing.assert_array_equal(c.get(), expected)
    z = gpuarray.empty_like(c)
    x = c
    for _ in range(150):
        k(z, x, b)
        k(x, z, b)
    np.testing.assert_array_equal(x.get(), expected + 300 * b_h)


def test_small_blocks_are_reused_in_legacy_stream_order():
    """A freed small stream-ordered block goes to the block cache, and the next allocation
    of its size class gets it with no driver call; the work queued on it then runs after
    the work still using it from before (both on the legacy stream)."""
    n = 1000
    x_h = RNG.random(n).astype(np.float32)
    x = gpuarray.to_gpu(x_h)
    y = gpuarray.to_gpu(np.full(n, np.nan, np.float32))
    SPIN(np.int64(500_000_000), block=(1, 1, 1), grid=(1, 1))  # legacy stream, ~0.25 s
    t = x + x
    addr = int(t.gpudata)
    drv.memcpy_dtod_async(y.gpudata, t.gpudata, t.nbytes)  # reads t behind the spin
    del t
    u = x * x
    assert int(u.gpudata) == addr, "the freed block was not handed out again"
    np.testing.assert_array_equal(y.get(), x_h + x_h)
    np.testing.assert_array_equal(u.get(), x_h * x_h)


def test_block_cache_is_bounded_and_flushed():
    """Thousands of freed small blocks: the cache keeps a few MiB and frees the rest; the
    caches' flush (clear_context_caches) leaves later allocations working."""
    from pycuda.tools import clear_context_caches
    x_h = RNG.random(1024).astype(np.float32)
    x = gpuarray.to_gpu(x_h)
    many = [x + x for _ in range(4096)]  # 16 MiB of 4 KiB blocks
    addrs = {int(a.gpudata) for a in many}
    assert len(addrs) == len(many)
    del many
    drv.mem_get_info()
    again = [x - x for _ in range(64)]
    assert all((a.get() == 0).all() for a in again[:4])
    clear_context_caches()
    z = x * x
    np.testing.assert_array_equal(z.get(), x_h * x_h)


def test_dlpack_round_trip_shares_the_memory():
    """A GPUArray through its own __dlpack__ and from_dlpack: the same memory (a fill
    through the copy shows in the original), the original kept alive by the consumer,
    and a consumer stream ordered after the work queued before the export."""
    x_h = RNG.random((64, 33)).astype(np.float32)
    x = gpuarray.to_gpu(x_h)
    y = gpuarray.from_dlpack(x)
    assert (int(y.gpudata), y.shape, y.strides, y.dtype) == (
        int(x.gpudata), x.shape, x.strides, x.dtype)
    y.fill(np.float32(2.5))
    np.testing.assert_array_equal(x.get(), np.full_like(x_h, 2.5))
    t = gpuarray.from_dlpack(x.T)
    assert t.strides == x.T.strides
    np.testing.assert_array_equal(t.get(), np.full_like(x_h, 2.5).T)
    # A non-blocking consumer stream waits for the spin queued on the legacy stream.
    s = drv.Stream(flags=1)  # CU_STREAM_NON_BLOCKING
    x.fill(np.float32(-1.0))
    SPIN(np.int64(200_000_000), block=(1, 1, 1), grid=(1, 1))  # legacy stream, ~0.1 s
    x.fill(np.float32(7.0))
    z = gpuarray.from_dlpack(x.__dlpack__(stream=s.handle))
    out = np.empty_like(x_h)
    drv.memcpy_dtoh_async(out, z.gpudata, s)
    s.synchronize()
    np.testing.assert_array_equal(out, np.full_like(x_h, 7.0))
    del x, y, t
    np.testing.assert_array_equal(z.get(), np.full_like(x_h, 7.0))


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_dlpack_with_other_libraries(library):
    """CuPy's and PyTorch's arrays read ours and ours theirs, through DLPack. Both make
    the device's primary context current (cudaSetDevice), replacing autoinit's on the
    thread's stack: rucuda then adopts the primary context, as PyCUDA works in whatever
    context the driver has current."""
    mod = pytest.importorskip(library)
    try:
        x_h = RNG.random(1000).astype(np.float32)
        x = gpuarray.to_gpu(x_h)
        if library == "cupy":
            theirs = mod.from_dlpack(x)
            np.testing.assert_array_equal(mod.asnumpy(theirs), x_h)
            back = gpuarray.from_dlpack(mod.arange(10, dtype=mod.int64) * 3)
        else:
            theirs = mod.from_dlpack(x)
            np.testing.assert_array_equal(theirs.cpu().numpy(), x_h)
            back = gpuarray.from_dlpack(mod.arange(10, dtype=mod.int64, device="cuda") * 3)
        np.testing.assert_array_equal(back.get(), np.arange(10) * 3)
        y = back + back  # a kernel of ours in the adopted context, on their memory
        np.testing.assert_array_equal(y.get(), np.arange(10) * 6)
    finally:
        pycuda.autoinit.context.push()  # autoinit's context on top again


def _floats_with_specials(n, dtype, zeros=True):
    """Random floats with NaNs and infinities, and with zeros='both' some -0.0 and +0.0
    (equal to NumPy, whose argsort then keeps them in place; rucuda puts -0.0 first)."""
    x = (RNG.standard_normal(n) * 100).astype(dtype)
    for special in ([np.nan, np.inf, -np.inf] + ([-0.0, 0.0] if zeros else [])):
        x[RNG.integers(0, n, max(1, n // 50))] = special
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_sort_and_argsort_match_numpy(dtype):
    """NumPy's sort and stable argsort, along each axis of 2-D arrays and of a strided
    view, NaNs last; -0.0 before +0.0; descending as NumPy's reversed order of the
    non-NaN keys, NaNs still last."""
    for shape in ((1,), (1000,), (300_001,), (37, 129), (5, 20_000)):
        n = int(np.prod(shape))
        h = _floats_with_specials(n, dtype, zeros=False).reshape(shape)
        a = gpuarray.to_gpu(h)
        for axis in range(-1, -len(shape) - 1, -1):
            np.testing.assert_array_equal(gpuarray.sort(a, axis=axis).get(),
                                          np.sort(h, axis=axis))
            np.testing.assert_array_equal(gpuarray.argsort(a, axis=axis).get(),
                                          np.argsort(h, axis=axis, kind="stable"))
    h = _floats_with_specials(10_001, dtype)
    a = gpuarray.to_gpu(h)
    s = gpuarray.sort(a).get()
    np.testing.assert_array_equal(s, np.sort(h))
    zeros = np.signbit(s[s == 0])
    assert zeros.any() and (~zeros).any()
    np.testing.assert_array_equal(zeros, np.sort(~zeros) == 0)  # all -0.0 first
    np.testing.assert_array_equal(gpuarray.sort(a[::3]).get(), np.sort(h[::3]))
    d = gpuarray.sort(a, descending=True).get()
    finite = h[~np.isnan(h)]
    np.testing.assert_array_equal(d[:finite.size], np.sort(finite)[::-1])
    assert np.isnan(d[finite.size:]).all()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32, np.int64, np.uint64, np.bool_])
def test_integer_sorts_are_stable(dtype):
    """Few distinct values, so the positions check stability."""
    info = np.iinfo(dtype) if dtype is not np.bool_ else None
    for n in (1, 2, 1000, 1 << 20):
        if info is None:
            h = RNG.integers(0, 2, n).astype(np.bool_)
        else:
            h = RNG.integers(max(info.min, -3), min(info.max, 3), n, endpoint=True).astype(dtype)
        a = gpuarray.to_gpu(h)
        np.testing.assert_array_equal(gpuarray.sort(a).get(), np.sort(h))
        np.testing.assert_array_equal(gpuarray.argsort(a).get(), np.argsort(h, kind="stable"))


def test_topk_matches_sorting_the_rows():
    h = RNG.standard_normal((64, 12_825)).astype(np.float32)
    h[:, ::100] = h[:, 1:2]  # ties, chosen in position order
    a = gpuarray.to_gpu(h)
    for k, largest in ((1, True), (50, True), (1024, False)):
        v, i = gpuarray.topk(a, k, largest=largest)
        order = np.argsort(-h if largest else h, axis=-1, kind="stable")[:, :k]
        np.testing.assert_array_equal(i.get(), order)
        np.testing.assert_array_equal(v.get(), np.take_along_axis(h, order, axis=-1))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint8])
def test_unique_matches_numpy(dtype):
    h = RNG.integers(0, 50, (300, 71)).astype(dtype)
    if dtype is np.float32:
        h[0, :5] = np.nan
    a = gpuarray.to_gpu(h)
    expected = np.unique(h, return_index=True, return_inverse=True, return_counts=True,
                         equal_nan=True)
    got = gpuarray.unique(a, return_index=True, return_inverse=True, return_counts=True)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g.get(), e.reshape(g.shape))
    np.testing.assert_array_equal(gpuarray.unique(a).get(), expected[0])


def test_searchsorted_histogram_and_bincount_match_numpy():
    s_h = np.sort(RNG.standard_normal(100_003))
    q_h = np.concatenate([RNG.standard_normal(5000), s_h[:100], [np.inf, -np.inf]])
    s = gpuarray.to_gpu(s_h)
    for side in ("left", "right"):
        np.testing.assert_array_equal(gpuarray.searchsorted(s, gpuarray.to_gpu(q_h),
                                                            side=side).get(),
                                      np.searchsorted(s_h, q_h, side=side))
    np.testing.assert_array_equal(gpuarray.searchsorted(s, q_h[:7]).get(),
                                  np.searchsorted(s_h, q_h[:7]))
    # float64 data: NumPy's edges are float64 like rucuda's, so the counts agree exactly.
    x_h = RNG.standard_normal(1 << 20)
    x = gpuarray.to_gpu(x_h)
    for bins, rng in ((256, None), (10, (-1.0, 2.0))):
        c, e = gpuarray.histogram(x, bins=bins, range=rng)
        ce, ee = np.histogram(x_h, bins=bins, range=rng)
        np.testing.assert_array_equal(c.get(), ce)
        np.testing.assert_allclose(e, ee, rtol=1e-12)
    # float32 data: NumPy rounds its edges to float32, rucuda keeps them in float64; a
    # value between the two roundings of an edge may land one bin over.
    c32 = gpuarray.histogram(x.astype(np.float32), bins=256)[0].get()
    ce32 = np.histogram(x_h.astype(np.float32), bins=256)[0]
    assert c32.sum() == ce32.sum() == x_h.size
    assert np.abs(c32 - ce32).max() <= 3
    edges = [-3.0, -1.0, 0.0, 0.5, 4.0]
    np.testing.assert_array_equal(gpuarray.histogram(x, bins=edges)[0].get(),
                                  np.histogram(x_h, bins=edges)[0])
    b_h = RNG.integers(0, 300, 1 << 18).astype(np.int32)
    np.testing.assert_array_equal(gpuarray.bincount(gpuarray.to_gpu(b_h), minlength=400).get(),
                                  np.bincount(b_h, minlength=400))


def test_sort_results_live_and_die_like_other_arrays():
    """A sort result works with the face's own kernels, queued on the legacy stream right
    behind a spin, and its memory is freed only after them: many results made and
    dropped at once all come out right."""
    h = RNG.standard_normal(100_000).astype(np.float32)
    a = gpuarray.to_gpu(h)
    outs = []
    for _ in range(20):
        s = gpuarray.sort(a)
        SPIN(np.int64(2_000_000), block=(1, 1, 1), grid=(1, 1))
        outs.append((s * 2).get())
        del s
    for o in outs:
        np.testing.assert_array_equal(o, np.sort(h) * 2)


def test_a_sort_result_dropped_while_a_blocking_stream_reads_it():
    """A copy on a blocking stream reads a sort result behind a ~0.1 s spin; the result is
    dropped at once and more sort results of its size are made and written on the legacy
    stream: the dropped memory must not be handed out before the copy has read it (its
    holder's free waits for the legacy stream, which waits for the blocking stream)."""
    h = RNG.standard_normal(1 << 20).astype(np.float32)
    a = gpuarray.to_gpu(h)
    r = gpuarray.sort(a)
    out = gpuarray.to_gpu(np.full(h.size, np.nan, np.float32))
    s = drv.Stream()  # blocking
    SPIN(np.int64(200_000_000), block=(1, 1, 1), grid=(1, 1), stream=s)
    drv.memcpy_dtod_async(out.gpudata, r.gpudata, r.nbytes, stream=s)
    del r
    negated = a * -1
    junk = [gpuarray.sort(negated) for _ in range(8)]
    s.synchronize()
    np.testing.assert_array_equal(out.get(), np.sort(h))
    np.testing.assert_array_equal(junk[0].get(), np.sort(-h))
