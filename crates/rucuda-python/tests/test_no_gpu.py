"""Tests of the rucuda wheel that need no GPU and no CUDA driver (stdlib unittest).

Run by `cargo xtask wheel --test` against the installed wheel.
"""
from __future__ import annotations

import builtins
import struct
import unittest

import numpy as np

import rucuda
from rucuda import _errors, args, dtypes


class ImportWithoutDriver(unittest.TestCase):
    def test_pycuda_driver_names_what_is_missing(self):
        problem = rucuda.driver_problem()
        if problem is None:
            self.skipTest("a CUDA driver is installed here")
        # In a fresh interpreter: another test module may have imported pycuda.driver.
        import subprocess
        import sys
        r = subprocess.run(
            [sys.executable, "-c",
             "try:\n    import pycuda.driver\nexcept ImportError as e:\n    print(e)\n"
             "else:\n    print('no ImportError')"],
            capture_output=True, text=True, check=True)
        msg = r.stdout.strip()
        self.assertIn("libcuda.so.1", msg)
        self.assertIn("pycuda.driver", msg)
        # One message, not a cascade: the cause is the driver, said once.
        self.assertEqual(msg.count("libcuda.so.1 was not found"), 1)

    def test_the_native_module_loads_without_a_driver(self):
        self.assertEqual(rucuda._native.get_version()[2], 0)
        self.assertTrue(len(rucuda._native.device_attribute_members()) > 100)


class DtypeMapping(unittest.TestCase):
    def test_c_names(self):
        cases = {
            np.float32: "float", np.float64: "double", np.int32: "int",
            np.uint32: "unsigned", np.int64: "long", np.uint64: "unsigned long",
            np.int8: "signed char", np.uint8: "unsigned char", np.int16: "short",
            np.uint16: "unsigned short", np.bool_: "bool",
            np.complex64: "pycuda::complex<float>",
            np.complex128: "pycuda::complex<double>",
        }
        for dt, name in cases.items():
            self.assertEqual(dtypes.dtype_to_ctype(dt), name, dt)

    def test_names_back_to_dtypes(self):
        self.assertEqual(dtypes.get_or_register_dtype("unsigned int"), np.uint32)
        self.assertEqual(dtypes.get_or_register_dtype("long long"), np.int64)

    def test_unknown_dtype_is_a_value_error(self):
        with self.assertRaises(ValueError):
            dtypes.dtype_to_ctype(np.dtype([("a", np.int8), ("b", np.float64)]))

    def test_registering_a_struct(self):
        dt = np.dtype([("lo", np.float32), ("hi", np.int8)])
        dtypes.register_dtype(dt, "my_pair")
        self.assertEqual(dtypes.dtype_to_ctype(dt), "my_pair")
        with self.assertRaises(RuntimeError):
            dtypes.register_dtype(np.float64, "my_pair")

    def test_parse_c_arg(self):
        v = dtypes.parse_c_arg("const float *x")
        self.assertIsInstance(v, dtypes.VectorArg)
        self.assertEqual((v.dtype, v.name), (np.float32, "x"))
        s = dtypes.parse_c_arg("unsigned int n")
        self.assertIsInstance(s, dtypes.ScalarArg)
        self.assertEqual((s.dtype, s.name, s.struct_char), (np.uint32, "n", "I"))
        with self.assertRaises(TypeError):
            dtypes.parse_c_arg("frobnicate y")


class StructFormats(unittest.TestCase):
    def test_sizes(self):
        self.assertEqual(args.format_sizes("iPf"), [4, 8, 4])
        self.assertEqual(args.format_sizes("12s"), [12])
        self.assertEqual(args.format_sizes("3i"), [4, 4, 4])
        self.assertEqual(args.format_sizes("dxxh"), [8, 2])
        with self.assertRaises(ValueError):
            args.format_sizes("iZ")

    def test_prepare_from_types(self):
        float3 = np.dtype([("x", np.float32), ("y", np.float32), ("z", np.float32)])
        self.assertEqual(args.prepare_format([np.int32, np.float64, np.uintp]), "idL")
        self.assertEqual(args.prepare_format([float3, np.float32]), "12sf")
        self.assertEqual(args.prepare_format("PPi"), "PPi")
        # Anything else is a pointer, as in PyCUDA.
        self.assertEqual(args.prepare_format([object()]), np.dtype(np.uintp).char)

    def test_pack_prepared(self):
        buf = args.pack_prepared("Pi", (0x1000, np.int32(7)))
        self.assertEqual(buf, struct.pack("Pi", 0x1000, 7))
        with self.assertRaises(TypeError) as cm:
            args.pack_prepared("Pi", (1,))
        self.assertIn("takes 2 arguments, 1 were given", str(cm.exception))
        with self.assertRaises(TypeError):
            args.pack_prepared("i", ("not a number",))

    def test_pack_prepared_struct_bytes(self):
        v = np.zeros((), np.dtype([("x", np.float32), ("y", np.float32)]))[()]
        self.assertEqual(len(args.pack_prepared("8s", (v,))), 8)


class CallArguments(unittest.TestCase):
    def test_numpy_scalars_and_pointers(self):
        class Holder:
            gpudata = 0xABC0

        buf, sizes, handlers = args.build_arg_buf(
            [np.float32(1.5), np.intp(0x1000), Holder(), np.int16(3)])
        self.assertEqual(buf, struct.pack("flPh", 1.5, 0x1000, 0xABC0, 3))
        self.assertEqual(sizes, [4, 8, 8, 2])
        self.assertEqual(handlers, [])

    def test_cuda_array_interface(self):
        class Cai:
            __cuda_array_interface__ = {"data": (0x2000, False), "shape": (1,),
                                        "typestr": "<f4", "version": 3}

        buf, sizes, _ = args.build_arg_buf([Cai()])
        self.assertEqual(buf, struct.pack("P", 0x2000))

    def test_python_numbers_are_refused(self):
        for bad in (3, 2.5, True):
            with self.assertRaises(TypeError) as cm:
                args.build_arg_buf([np.int32(1), bad])
            self.assertIn("parameter #1", str(cm.exception))

    def test_host_arrays_go_by_value(self):
        # PyCUDA passes an ndarray argument as its bytes (a struct or small array).
        a = np.arange(3, dtype=np.float32)
        buf, sizes, _ = args.build_arg_buf([np.int32(1), a])
        self.assertEqual(buf, struct.pack("i12s", 1, a.tobytes()))
        self.assertEqual(sizes, [4, 12])

    def test_handlers_copy_as_they_say(self):
        log = []
        a = np.arange(4, dtype=np.float32)
        h_in, h_out = args.In(a), args.Out(a)
        buf, sizes, handlers = args.build_arg_buf(
            [h_in, h_out],
            mem_alloc=lambda n: (log.append(("alloc", n)) or 0x5000),
            htod=lambda d, h: log.append(("htod", d)))
        self.assertEqual(handlers, [h_in, h_out])
        self.assertEqual(log, [("alloc", 16), ("htod", 0x5000), ("alloc", 16)])
        for h in handlers:
            h.post_call(lambda host, dev: log.append(("dtoh", dev)))
        self.assertEqual(log[-1], ("dtoh", 0x5000))


class Pools(unittest.TestCase):
    def test_bitlog2(self):
        self.assertEqual(dtypes.bitlog2(17), 4)
        self.assertEqual(dtypes.bitlog2(0xAFFE), 15)
        self.assertEqual(dtypes.bitlog2(0xCC3AFFE), 27)

    def test_bins_round_trip(self):
        import random
        rng = random.Random(1)
        for _ in range(2000):
            s = rng.randrange(1 << 31) >> rng.randrange(32)
            b = dtypes.bin_number(s)
            size = dtypes.alloc_size(b)
            self.assertGreaterEqual(size, s)
            self.assertEqual(dtypes.bin_number(size), b)
        self.assertEqual(dtypes.alloc_size(dtypes.bin_number(1000)), 1023)
        self.assertEqual(dtypes.alloc_size(dtypes.bin_number(1024)), 1087)


class Curandom(unittest.TestCase):
    """pycuda.curandom's generator classes and tables (rucuda-rand's), without a GPU."""

    def test_version_enables_every_generator_class(self):
        from pycuda import curandom
        self.assertGreaterEqual(curandom.get_curand_version(), (5, 0, 0))
        for name in ["XORWOWRandomNumberGenerator", "MRG32k3aRandomNumberGenerator",
                     "Sobol32RandomNumberGenerator", "ScrambledSobol32RandomNumberGenerator",
                     "Sobol64RandomNumberGenerator", "ScrambledSobol64RandomNumberGenerator"]:
            cls = getattr(curandom, name)
            for method in ["fill_uniform", "gen_uniform", "fill_normal", "gen_normal",
                           "fill_log_normal", "gen_log_normal", "fill_poisson",
                           "gen_poisson", "call_skip_ahead"]:
                self.assertTrue(callable(getattr(cls, method)), f"{name}.{method}")

    def test_direction_vectors_are_sobol_numbers_and_repeat_past_the_table(self):
        from pycuda import curandom
        v32 = curandom._direction_vectors_host(3, 32)
        self.assertEqual(v32.shape, (3, 32))
        self.assertEqual(v32.dtype, np.uint32)
        # Dimension 0 is the van der Corput sequence: v_j = 2^(31 - j).
        self.assertEqual(list(v32[0]), [1 << (31 - j) for j in range(32)])
        v64 = curandom._direction_vectors_host(2, 64)
        self.assertEqual(list(v64[0]), [1 << (63 - j) for j in range(64)])
        big = curandom._direction_vectors_host(curandom._TABLE_DIMENSIONS + 2, 32)
        self.assertEqual(big.shape[0], curandom._TABLE_DIMENSIONS + 2)
        self.assertTrue((big[curandom._TABLE_DIMENSIONS] == big[0]).all())
        with self.assertRaises(ValueError):
            __import__("rucuda._native", fromlist=["x"]).sobol_direction_vectors(16, 1)

    def test_poisson_in_place_kernel_source(self):
        from pycuda import curandom
        self.assertIn("normcdfinv", curandom._POISSON_PREAMBLE)
        self.assertIn("exp(-lambda)", curandom._POISSON_PREAMBLE)


class Exceptions(unittest.TestCase):
    def test_hierarchy(self):
        self.assertTrue(issubclass(_errors.MemoryError, builtins.MemoryError))
        self.assertTrue(issubclass(_errors.MemoryError, _errors.Error))
        self.assertTrue(issubclass(_errors.RuntimeError, builtins.RuntimeError))
        for c in (_errors.LogicError, _errors.LaunchError, _errors.CompileError):
            self.assertTrue(issubclass(c, _errors.Error))

    def test_native_errors_carry_rucuda_messages(self):
        # Without a driver, a call that needs one raises rucuda's message in a
        # pycuda.driver.Error subclass.
        if rucuda.driver_problem() is None:
            self.skipTest("a CUDA driver is installed here")
        with self.assertRaises(_errors.Error) as cm:
            rucuda._native.Device.count()
        self.assertIn("libcuda.so.1", str(cm.exception))

    def test_compile_error_fields(self):
        e = _errors.CompileError("boom", "nvrtc -arch=sm_90", stderr="log")
        self.assertEqual((str(e), e.command_line, e.stderr), ("boom", "nvrtc -arch=sm_90", "log"))


if __name__ == "__main__":
    unittest.main()
