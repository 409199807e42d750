"""``pycuda.scan``: ``InclusiveScanKernel`` and ``ExclusiveScanKernel``."""
from __future__ import annotations

import struct

import numpy as np

from rucuda import kernels
from rucuda.dtypes import dtype_to_ctype

_BLOCK = 256


class _ScanKernel:
    exclusive = 0

    def __init__(self, dtype, scan_expr, neutral=None, name_prefix="scan", options=None,
                 preamble="", devices=None):
        self.dtype = np.dtype(dtype)
        if neutral is None:
            if self.exclusive:
                raise ValueError("ExclusiveScanKernel needs a neutral element")
            # Any value works for the padding of an inclusive scan's last block: it is
            # never written out; carries use exclusive scans of block totals, where the
            # first block adds nothing.
            neutral = "0"
        self.scan_expr = scan_expr
        self.neutral = neutral
        self.name = name_prefix
        self.options = options
        self.preamble = preamble

    def _module(self, exclusive):
        source = kernels.render(
            "scan.cu", PREAMBLE=self.preamble, NAME=self.name,
            TYPE=dtype_to_ctype(self.dtype), SCAN_EXPR=self.scan_expr,
            NEUTRAL=self.neutral, BLOCK=_BLOCK, EXCLUSIVE=1 if exclusive else 0)
        return kernels.module_for(kernels.with_headers(source), self.options or (),
                                  (kernels.INCLUDE_DIR,))

    def _scan(self, src_ptr, dst_ptr, n, exclusive, stream):
        import pycuda.gpuarray as gpuarray
        mod = self._module(exclusive)
        blocks = (n + _BLOCK - 1) // _BLOCK
        totals = gpuarray.GPUArray((blocks,), self.dtype)
        s = 0 if stream is None else stream.handle
        mod.get_function(self.name + "_blocks")._launch(
            (blocks, 1, 1), (_BLOCK, 1, 1),
            struct.pack("PPPq", src_ptr, dst_ptr, totals.ptr, n), None, s, 0)
        if blocks > 1:
            carries = gpuarray.GPUArray((blocks,), self.dtype)
            # The carry of block b is the scan of the totals of blocks 0..b-1.
            self._scan(totals.ptr, carries.ptr, blocks, True, stream)
            mod.get_function(self.name + "_carry")._launch(
                (blocks, 1, 1), (_BLOCK, 1, 1),
                struct.pack("PPq", dst_ptr, carries.ptr, n), None, s, 0)

    def __call__(self, input_ary, output_ary=None, allocator=None, stream=None):
        if output_ary is None:
            output_ary = input_ary
        if input_ary.dtype != self.dtype or output_ary.dtype != self.dtype:
            raise TypeError(f"scan kernel of {self.dtype} called with "
                            f"{input_ary.dtype}/{output_ary.dtype}")
        if not (input_ary.flags.c_contiguous and output_ary.flags.c_contiguous):
            raise RuntimeError("scan kernels need contiguous arrays")
        if input_ary.size:
            if self.exclusive and self.neutral is None:
                raise ValueError("ExclusiveScanKernel needs a neutral element")
            self._scan(input_ary.ptr, output_ary.ptr, input_ary.size, bool(self.exclusive),
                       stream)
        return output_ary


class InclusiveScanKernel(_ScanKernel):
    """``out[i] = in[0] op ... op in[i]``."""
    exclusive = 0


class ExclusiveScanKernel(_ScanKernel):
    """``out[i] = neutral op in[0] op ... op in[i-1]``."""
    exclusive = 1
