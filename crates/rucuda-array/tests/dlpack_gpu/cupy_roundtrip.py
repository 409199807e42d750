# DLPack round trip between rucuda and CuPy in one process, with no copy either way.
# Run by tests/dlpack_gpu.rs as `python3 -c <this> <path of librucuda_dlpack_fixture.so>`;
# the library (crates/rucuda-dlpack-fixture) is loaded with ctypes beside CuPy, so both
# share device 0's primary context and a device pointer means the same on both sides.
# Prints "RUCUDA_SKIPPED: ..." when CuPy is missing; exits nonzero on a mismatch.
import ctypes
import sys

try:
    import cupy
    import numpy
except Exception as e:  # noqa: BLE001 - any import failure means "no CuPy here"
    print("RUCUDA_SKIPPED: CuPy (and NumPy) not importable: %s" % e)
    sys.exit(0)

lib = ctypes.CDLL(sys.argv[1])
u64p = ctypes.POINTER(ctypes.c_uint64)
i32p = ctypes.POINTER(ctypes.c_int32)
lib.rucuda_fixture_export.restype = ctypes.c_void_p
lib.rucuda_fixture_export.argtypes = [
    ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int32, u64p]
lib.rucuda_fixture_kept_sum.restype = ctypes.c_double
lib.rucuda_fixture_kept_sum.argtypes = []
lib.rucuda_fixture_import_double.restype = ctypes.c_double
lib.rucuda_fixture_import_double.argtypes = [ctypes.c_void_p, u64p, i32p]

capi = ctypes.pythonapi
capi.PyCapsule_New.restype = ctypes.py_object
capi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
capi.PyCapsule_SetName.restype = ctypes.c_int
capi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

# The capsule's name must outlive it: keep the bytes object alive for the whole run.
DLTENSOR = ctypes.create_string_buffer(b"dltensor")
USED = ctypes.create_string_buffer(b"used_dltensor")

failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


class Exported:
    """What cupy.from_dlpack takes: __dlpack__ returning our capsule (legacy ABI)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, *args, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0


rng = numpy.random.default_rng()
print("cupy", cupy.__version__)

# rucuda -> CuPy: C- and F-ordered arrays of fresh random values.
for rows, cols, fortran in [(37, 53, 0), (37, 53, 1), (1, 1000, 1)]:
    host = numpy.ascontiguousarray(rng.standard_normal((rows, cols)).astype(numpy.float32))
    data = ctypes.c_uint64(0)
    ptr = lib.rucuda_fixture_export(host.ctypes.data, rows, cols, fortran, ctypes.byref(data))
    check(bool(ptr), "export %dx%d fortran=%d returned a tensor" % (rows, cols, fortran))
    if not ptr:
        continue
    capsule = capi.PyCapsule_New(ptr, ctypes.cast(DLTENSOR, ctypes.c_char_p), None)
    x = cupy.from_dlpack(Exported(capsule))
    label = "rucuda->cupy %dx%d %s" % (rows, cols, "F" if fortran else "C")
    check(x.shape == (rows, cols) and x.dtype == cupy.float32, label + ": shape and dtype")
    check(x.data.ptr == data.value, label + ": same device pointer (no copy)")
    check(bool(x.flags.f_contiguous) == bool(fortran) or rows == 1,
          label + ": memory order kept")
    check(numpy.array_equal(cupy.asnumpy(x), host), label + ": values")
    x *= 3  # written by CuPy, read back through rucuda's handle to the same memory
    cupy.cuda.runtime.deviceSynchronize()
    want = float((host.astype(numpy.float64) * 3).sum())
    got = lib.rucuda_fixture_kept_sum()
    check(abs(got - want) <= 1e-4 * max(1.0, abs(want)) + 1e-3,
          label + ": CuPy's writes seen by rucuda (%r vs %r)" % (got, want))
    del x
    cupy.cuda.runtime.deviceSynchronize()

# CuPy -> rucuda: C, F and strided arrays, doubled in place by rucuda.
for name, make in [
    ("C", lambda h: cupy.asarray(h)),
    ("F", lambda h: cupy.asfortranarray(cupy.asarray(h))),
    ("strided", lambda h: cupy.asarray(h)[:, ::2]),
]:
    host = rng.standard_normal((41, 66)).astype(numpy.float32)
    x = make(host)
    before = cupy.asnumpy(x).astype(numpy.float64)
    base = x.base if x.base is not None else x
    untouched = cupy.asnumpy(base).copy()
    cupy.cuda.runtime.deviceSynchronize()
    capsule = x.__dlpack__() if hasattr(x, "__dlpack__") else x.toDlpack()
    ptr = capi.PyCapsule_GetPointer(capsule, ctypes.cast(DLTENSOR, ctypes.c_char_p))
    capi.PyCapsule_SetName(capsule, ctypes.cast(USED, ctypes.c_char_p))  # consumed
    data = ctypes.c_uint64(0)
    fortran = ctypes.c_int32(-1)
    got = lib.rucuda_fixture_import_double(ptr, ctypes.byref(data), ctypes.byref(fortran))
    label = "cupy->rucuda " + name
    check(data.value == x.data.ptr, label + ": same device pointer (no copy)")
    check(fortran.value == (1 if name == "F" else 0), label + ": F order seen")
    want = float((before * 2).sum())
    check(abs(got - want) <= 1e-4 * max(1.0, abs(want)) + 1e-3,
          label + ": rucuda's sum (%r vs %r)" % (got, want))
    cupy.cuda.runtime.deviceSynchronize()
    check(numpy.array_equal(cupy.asnumpy(x), (before * 2).astype(numpy.float32)),
          label + ": rucuda's in-place writes seen by CuPy")
    if name == "strided":
        after = cupy.asnumpy(base)
        check(numpy.array_equal(after[:, 1::2], untouched[:, 1::2]),
              label + ": the elements between the view's columns untouched")

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("all DLPack round-trip checks passed")
