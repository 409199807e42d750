"""pycuda.driver's launch front-ends (Function.__call__, prepare, prepared_*call) on a
recording stand-in for a kernel: argument packing, launch shapes and argument errors, with
no GPU. (The driver check of `import pycuda.driver` is stubbed; nothing here calls it.)"""
from __future__ import annotations

import struct
import unittest

import numpy as np

from nodriver import import_without_driver

(drv,) = import_without_driver("pycuda.driver")


class Recorder:
    """What pycuda.driver's front-ends need of a Function. Its Rust fast paths answer
    NotImplemented, so the Python packing path is what is recorded (the Rust packer is
    checked against struct.pack in `NativePacker`)."""

    def __init__(self):
        self.calls = []

    def _call_launch(self, *args):
        return NotImplemented

    def _prepared_launch(self, *args):
        return NotImplemented

    def _set_format(self, fmt):
        self.format = fmt

    def _launch(self, grid, block, args, sizes=None, stream=0, shared=0, timed=False):
        self.calls.append(dict(grid=grid, block=block, args=args, sizes=sizes,
                               stream=stream, shared=shared, timed=timed))
        return 0.25 if timed else None


class Call(unittest.TestCase):
    def test_shapes_and_buffer(self):
        f = Recorder()
        drv._function_call(f, np.float32(1.5), np.intp(0x1000), block=(4, 2), grid=(3,),
                           shared=64)
        c = f.calls[0]
        self.assertEqual((c["grid"], c["block"], c["shared"]), ((3, 1, 1), (4, 2, 1), 64))
        self.assertEqual(c["args"], struct.pack("fl", 1.5, 0x1000))
        self.assertEqual(c["sizes"], [4, 8])

    def test_time_kernel_returns_the_time(self):
        f = Recorder()
        self.assertEqual(drv._function_call(f, block=(1, 1, 1), time_kernel=True), 0.25)

    def test_errors(self):
        f = Recorder()
        with self.assertRaisesRegex(ValueError, "block"):
            drv._function_call(f, np.int32(1))
        with self.assertRaisesRegex(ValueError, "extra keyword arguments: bogus"):
            drv._function_call(f, block=(1, 1, 1), bogus=1)
        with self.assertRaises(drv.LogicError):
            drv._function_call(f, block=(1, 1, 1), texrefs=[object()])
        with self.assertRaisesRegex(TypeError, "parameter #0"):
            drv._function_call(f, 7, block=(1, 1, 1))
        with self.assertRaises(ValueError):
            drv._function_call(f, block=(1, 1, 1, 1))
        self.assertEqual(f.calls, [])


class Prepared(unittest.TestCase):
    def test_prepared_calls(self):
        f = Recorder()
        self.assertIs(drv._function_prepare(f, "iP"), f)
        drv._function_prepared_call(f, (2, 1), (32, 1, 1), np.int32(3), 0x1000,
                                    shared_size=16)
        c = f.calls[0]
        self.assertEqual((c["grid"], c["block"], c["shared"]), ((2, 1, 1), (32, 1, 1), 16))
        self.assertEqual(c["args"], struct.pack("iP", 3, 0x1000))
        t = drv._function_prepared_timed_call(f, (1, 1), (1, 1, 1), 1, 2)
        self.assertEqual(t(), 0.25)

        class FakeStream:
            handle = 0xBEEF

        drv._function_prepared_async_call(f, (1, 1), (1, 1, 1), FakeStream(), 1, 2)
        self.assertEqual(f.calls[-1]["stream"], 0xBEEF)

    def test_vector_types_and_memory_objects(self):
        f = Recorder()
        float3 = np.dtype([("x", np.float32), ("y", np.float32), ("z", np.float32)])
        drv._function_prepare(f, [float3, np.intp])

        class Holder(drv.PointerHolderBase):
            def get_pointer(self):
                return 0x3000

        v = np.array((1, 2, 3), float3)
        drv._function_prepared_call(f, (1, 1), (1, 1, 1), v, Holder())
        self.assertEqual(f.calls[0]["args"],
                         struct.pack("12sl", np.asarray(v).tobytes(), 0x3000))

    def test_unprepared_is_a_logic_error(self):
        with self.assertRaises(drv.LogicError):
            drv._function_prepared_call(Recorder(), (1, 1), (1, 1, 1))


class NativePacker(unittest.TestCase):
    """The Rust packer behind prepared_call and __call__ gives struct.pack's bytes, and
    leaves to Python what it does not handle."""

    def setUp(self):
        from rucuda import _native
        self.native = _native

    def test_prepared_formats_match_struct(self):
        cases = [
            ("iPfd?h", (np.int32(-3), 0x1234_5678_9ABC, 1.5, np.float64(-2.25), True, -7)),
            ("@3ix2Q", (1, 2, 3, 2 ** 64 - 1, np.uint64(5))),
            ("bBhHiIlLqQ", (-1, 255, -300, 65535, -(2 ** 31), 2 ** 32 - 1, -5, 6, -7, 8)),
            ("", ()),
        ]
        for fmt, args in cases:
            self.assertEqual(self.native._pack_format(fmt, args), struct.pack(fmt, *args),
                             fmt)

    def test_prepared_pointer_from_allocation_like_objects(self):
        class Arr:
            gpudata = 0x4000

        self.assertEqual(self.native._pack_format("P", (Arr(),)), struct.pack("P", 0x4000))

    def test_what_python_packs(self):
        for fmt, args in [("<i", (1,)), ("4s", (b"abcd",)), ("e", (1.0,)),
                          ("I", (-1,)), ("i", (1.5,)), ("ii", (1,)), ("P", (object(),))]:
            self.assertIsNone(self.native._pack_format(fmt, args), fmt)

    def test_call_arguments_match_struct(self):
        class Arr:
            gpudata = 0x5000

        args = (np.float32(1.5), np.int8(-2), np.intp(0x1000), Arr(), np.uint16(9),
                np.float64(3.0), np.bool_(True))
        packed, sizes = self.native._pack_call(args)
        self.assertEqual(packed, struct.pack("fblPHd?", 1.5, -2, 0x1000, 0x5000, 9, 3.0,
                                             True))
        self.assertEqual(sizes, [4, 1, 8, 8, 2, 8, 1])
        for other in [(7,), (1.5,), (np.zeros(3),), (np.complex64(1),), (object(),)]:
            self.assertIsNone(self.native._pack_call(other), repr(other))


class Constants(unittest.TestCase):
    def test_enums(self):
        self.assertEqual(int(drv.device_attribute.MAX_THREADS_PER_BLOCK), 1)
        self.assertEqual(int(drv.device_attribute.MULTIPROCESSOR_COUNT), 16)
        self.assertEqual(int(drv.function_attribute.NUM_REGS), 4)
        self.assertEqual(int(drv.ctx_flags.SCHED_BLOCKING_SYNC), 4)
        self.assertEqual(int(drv.event_flags.DISABLE_TIMING), 2)
        self.assertEqual(int(drv.host_alloc_flags.DEVICEMAP), 2)
        self.assertEqual(int(drv.limit.MALLOC_HEAP_SIZE), 2)
        self.assertEqual(int(drv.jit_input_type.LIBRARY), 4)

    def test_exception_classes(self):
        for name in ["Error", "MemoryError", "LogicError", "LaunchError", "RuntimeError",
                     "CompileError"]:
            self.assertTrue(issubclass(getattr(drv, name), drv.Error) or name == "Error")


if __name__ == "__main__":
    unittest.main()
