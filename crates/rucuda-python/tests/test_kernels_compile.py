"""The kernels the Python face generates (elementwise operations, reductions, scans,
cumath, curandom) compile with NVRTC for sm_90, for every dtype they are made for.

Needs NVRTC (the toolkit, NVIDIA's wheel: `pip install rucuda[nvrtc]`, or RUCUDA_NVRTC),
no GPU and no driver: kernels are compiled, and launches are recorded, not made.
"""
from __future__ import annotations

import struct
import unittest

import numpy as np

from rucuda import _native, kernels

NVRTC_OK, NVRTC_WHY = _native.nvrtc_status()


class _FakeFunction:
    # Every launch's stream handle, in order (shared by all fake functions).
    streams = []

    def __init__(self, name, log):
        self.name = name
        self.log = log
        self.overlapping = False

    def _overlaps_predecessor(self):
        self.overlapping = True

    def _launch(self, grid, block, args, sizes=None, stream=0, shared=0, timed=False):
        self.log.append((self.name, grid, block, len(args)))
        self.streams.append(stream)


class _FakeModule:
    def __init__(self, log):
        self.log = log

    def get_function(self, name):
        return _FakeFunction(name, self.log)


class _Flags:
    c_contiguous = f_contiguous = forc = True


class FakeArray:
    """What the kernels need of a GPUArray, with no device memory."""

    gpudata = 0x1000

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(self.shape)) if self.shape else 1
        self.strides = (self.dtype.itemsize,) * len(self.shape)
        self.flags = _Flags()
        self.ptr = 0x1000

    def _new_like_me(self, dtype=None, order="C"):
        return FakeArray(self.shape, self.dtype if dtype is None else dtype)


@unittest.skipUnless(NVRTC_OK, f"NVRTC not found: {NVRTC_WHY}")
class GeneratedKernelsCompile(unittest.TestCase):
    def setUp(self):
        self.compiled = []
        self.launched = []
        self._saved = (kernels.module_for, kernels.launch_shape, kernels.context_key,
                       kernels.sm_count)
        kernels.context_key = lambda: None
        kernels.sm_count = lambda key: 132
        kernels.clear()

        def module_for(source, options=(), include_dirs=()):
            image = _native.compile(source, options=list(options), arch="sm_90",
                                    no_extern_c=True,
                                    include_dirs=[str(d) for d in include_dirs])
            self.assertGreater(len(image), 0)
            self.compiled.append(source)
            return _FakeModule(self.launched)

        kernels.module_for = module_for
        kernels.launch_shape = lambda n, block=256: ((max(1, (n + block - 1) // block), 1, 1),
                                                     (block, 1, 1))

    def tearDown(self):
        (kernels.module_for, kernels.launch_shape, kernels.context_key,
         kernels.sm_count) = self._saved
        kernels.clear()

    def test_elementwise_with_ranges(self):
        from pycuda.elementwise import ElementwiseKernel
        k = ElementwiseKernel("float a, float *x, float b, float *y, float *z",
                              "z[i] = a*x[i] + b*y[i]", "linear_combination")
        x = FakeArray((50,), np.float32)
        k(5, x, 6, x, x)
        k(5, x, 6, x, x, slice=slice(3000, 5, -1))
        self.assertEqual([n for n, *_ in self.launched],
                         ["linear_combination", "linear_combination_range"])
        # Both kernels wait for their predecessor first, so both launch overlapping it.
        plain, ranged, _sms = k._functions()
        self.assertTrue(plain.overlapping and ranged.overlapping)
        (source,) = self.compiled
        bodies = source.split("__global__")[1:]
        self.assertEqual(len(bodies), 2)
        for body in bodies:
            first = body.split("{", 1)[1].strip().splitlines()[0]
            self.assertEqual(first, "RUCUDA_WAIT_FOR_PREDECESSOR();")

    def test_operators_for_every_dtype(self):
        from pycuda import _ops
        dts = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
               np.uint64, np.float32, np.float64]
        for dt in dts:
            a = FakeArray((7,), dt)
            for op in ["+", "-", "*", "/", "pow", "==", "<", ">="]:
                _ops.binary(a, a, op)
                _ops.binary(a, 2, op)
                _ops.binary(a, 2, op, reverse=True)
            _ops.unary(a, "-")
            _ops.unary(a, "abs")
            _ops.fill(a, 3)
            _ops.astype(a, np.float64)
            _ops.arange(a, 0, 1)
            _ops.sum(a)
            _ops.max(a)
            _ops.min(a)
            _ops.dot(a, a)
            _ops.any(a)
            _ops.all(a)
            _ops.subset_max(FakeArray((3,), np.int32), a)
            _ops.maximum(a, a)
            _ops.minimum(a, 1)
            _ops.if_positive(a, a, a)
            _ops.where(a, a, a)
            _ops.reverse(a)
            _ops.logical_and(a, a)
            _ops.logical_not(a)
            _ops.take(a, FakeArray((3,), np.uint32))
        self.assertGreater(len(self.compiled), 300)

    def test_complex_operations(self):
        from pycuda import _ops, cumath
        for dt in (np.complex64, np.complex128):
            a = FakeArray((5,), dt)
            r = FakeArray((5,), np.float32)
            for op in ["+", "-", "*", "/", "pow", "==", "!="]:
                _ops.binary(a, a, op)
                _ops.binary(a, 2j, op)
                _ops.binary(a, 1.5, op, reverse=True)
                _ops.binary(a, r, op)
            _ops.unary(a, "-")
            _ops.unary(a, "abs")
            _ops.part(a, "real")
            _ops.part(a, "imag")
            _ops.part(a, "conj")
            _ops.unary(a, "conj", out=FakeArray((5,), np.complex64))
            _ops.fill(a, 1 + 2j)
            _ops.astype(a, np.float64)
            _ops.astype(r, dt)
            _ops.astype(a, np.complex64)
            _ops.sum(a)
            _ops.dot(a, a)
            _ops.any(a)
            _ops.mul_add(a, 2, a, 3)
            for name in ["exp", "log", "log10", "sqrt", "sin", "cos", "tan", "sinh",
                         "cosh", "tanh"]:
                getattr(cumath, name)(a)

    def test_two_stage_reductions_launch_both_stages(self):
        from pycuda.reduction import ReductionKernel

        class FakeOut(FakeArray):
            pass

        import pycuda.reduction as red
        saved = red.__dict__.get("_BLOCK")
        k = ReductionKernel(np.float32, "0", "a+b", "x[i]*y[i]",
                            "const float *x, const float *y")
        # The output arrays come from pycuda.gpuarray, which needs a driver: check the
        # sources compile instead.
        k._stage1()
        k._stage2()
        self.assertEqual(len(self.compiled), 2)
        self.assertEqual(saved, 512)

    def test_temporaries_used_on_a_stream_are_freed_after_it(self):
        # A reduction's partial results are freed once the caller's stream has run the
        # second stage (the stream may be non-blocking); none are made for one block.
        from pycuda.reduction import ReductionKernel
        freed = []

        class Data:
            def free_after(self, handle):
                freed.append(handle)

        class Arr(FakeArray):
            def __init__(self, shape, dtype):
                super().__init__(shape, dtype)
                self.gpudata = Data()

        class S:
            handle = 0xBEEF

        k = ReductionKernel(np.float32, "0", "a+b", "x[i]", "const float *x")
        k(Arr((100_000,), np.float32), stream=S())
        self.assertEqual(freed, [0xBEEF])
        k(Arr((100_000,), np.float32))
        k(Arr((10,), np.float32), stream=S())
        self.assertEqual(freed, [0xBEEF])
        self.assertEqual([n.endswith("stage2") for n, *_ in self.launched].count(True), 2)

    def test_cumath(self):
        from pycuda import cumath
        for dt in (np.float32, np.float64):
            a = FakeArray((9,), dt)
            for name in ["fabs", "ceil", "floor", "exp", "log", "log10", "sqrt", "sin",
                         "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh"]:
                getattr(cumath, name)(a)
            cumath.fmod(a, a)
            cumath.ldexp(a, a)
            cumath.modf(a)
            cumath.frexp(a)

    def test_scans(self):
        from pycuda.scan import ExclusiveScanKernel, InclusiveScanKernel
        for dt in (np.int32, np.float64):
            InclusiveScanKernel(dt, "a+b")._module(False)
            ExclusiveScanKernel(dt, "a+b", "0")._module(True)
        self.assertEqual(len(self.compiled), 4)

    def test_uniform_random(self):
        from pycuda import curandom
        for dt in (np.float32, np.float64, np.int32, np.uint64):
            src = kernels.render("uniform.cu", NAME="u", TYPE=curandom.dtype_to_ctype(
                np.dtype(dt)), CONVERT=curandom._convert(np.dtype(dt)))
            kernels.module_for(src)

    def test_curandom_helper_kernels(self):
        # The in-place Poisson fill and the 64-to-32-bit truncation of raw outputs.
        from pycuda import curandom
        for dt in (np.float32, np.float64, np.uint32):
            for bits, word in ((32, np.uint32), (64, np.uint64)):
                k = curandom._poisson_inplace_kernel(np.dtype(dt), bits)
                k(FakeArray((10,), dt), FakeArray((10,), word))
        for dt in (np.int32, np.uint32):
            curandom._truncate(FakeArray((10,), dt), FakeArray((10,), np.uint64), None)
        self.assertEqual(len(self.launched), 8)

    def test_fill_astype_any_all_run_on_the_given_stream(self):
        from pycuda import _ops

        class FakeStream:
            handle = 0xBEEF

        _FakeFunction.streams.clear()
        a = FakeArray((10,), np.float32)
        _ops.fill(a, 1.5, FakeStream())
        _ops.astype(a, np.float64, FakeStream())
        _ops.reduce(a, "any", FakeStream())
        self.assertTrue(_FakeFunction.streams)
        self.assertTrue(all(s == 0xBEEF for s in _FakeFunction.streams),
                        _FakeFunction.streams)

    def test_multi_put_and_take_put(self):
        from pycuda import _ops
        srcs = [FakeArray((8,), np.float32) for _ in range(3)]
        outs = [FakeArray((96,), np.float32) for _ in range(3)]
        dest = FakeArray((8,), np.uint32)
        src_idx = FakeArray((8,), np.uint32)
        self.assertIs(_ops.multi_put(srcs, dest, out=outs)[2], outs[2])
        _ops.multi_take_put(srcs, dest, src_idx, out=outs, src_offsets=[0, 8, 16])
        names = [n for n, *_ in self.launched]
        self.assertEqual(names, ["rucuda_multi_put"] * 3 + ["rucuda_multi_take_put"] * 3)
        # P P P + n; P P P P + u32 offset (padded) + n.
        self.assertEqual([a for *_, a in self.launched], [32] * 3 + [48] * 3)
        with self.assertRaises(TypeError):
            _ops.multi_put(srcs, dest, out=[FakeArray((96,), np.float64)] * 3)
        with self.assertRaises(ValueError):
            _ops.multi_put(srcs, dest, out=outs[:2])
        with self.assertRaises(ValueError):
            _ops.multi_put([FakeArray((4,), np.float32)], dest, out=outs[:1])
        with self.assertRaises(TypeError):
            _ops.multi_take_put(srcs, dest, FakeArray((8,), np.int32), out=outs)
        with self.assertRaises(ValueError):
            _ops.multi_take_put(srcs, dest, src_idx, out=outs, src_offsets=[0])
        self.assertEqual(_ops.multi_put([], dest), [])

    def test_vector_type_arguments(self):
        from pycuda.elementwise import ElementwiseKernel
        dt = np.dtype([("x", np.float32), ("y", np.float32), ("z", np.float32)])
        from rucuda.dtypes import register_dtype
        register_dtype(dt, "float3", alias_ok=True)
        k = ElementwiseKernel("float3 *dest, float3 v", "dest[i] = v", "set3")
        k(FakeArray((4,), dt), np.zeros((), dt)[()])
        self.assertEqual(self.launched[0][3], 8 + 12 + 4 + 8)  # P, 12s, pad, q


class TemplatesAreComplete(unittest.TestCase):
    def test_unfilled_slots_are_errors(self):
        with self.assertRaises(KeyError):
            kernels.render("elementwise.cu", NAME="x")

    def test_multi_line_values_land_in_code_not_in_comments(self):
        # PyCUDA's test_struct_reduce passes a multi-line preamble: a slot named in a
        # template's comment once swallowed its first line into the comment.
        import os
        import re
        folder = os.path.join(os.path.dirname(kernels.__file__), "cuda")
        for name in sorted(os.listdir(folder)):
            text = kernels.template(name)
            slots = set(re.findall(r"\$([A-Z_]+)\$", text))
            values = {k: f"/*{k}-first*/\n/*{k}-second*/" for k in slots}
            rendered = kernels.render(name, **values)
            for k in slots:
                for line in rendered.splitlines():
                    if f"/*{k}-first*/" in line:
                        self.assertNotIn("//", line.split(f"/*{k}-first*/")[0],
                                         f"{name}: slot {k} lands in a comment")

    def test_struct_of_packed_range_arguments(self):
        self.assertEqual(struct.calcsize("Pqqq"), 32)


if __name__ == "__main__":
    unittest.main()
