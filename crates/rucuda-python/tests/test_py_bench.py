"""The bench script's folding of rounds (`py_bench.py --median-of`), with no GPU: the
median per case and implementation, every round's value in order, other lines ignored."""
from __future__ import annotations

import importlib.util
import json
import os
import tempfile
import unittest

_PATH = os.path.join(os.path.dirname(__file__), os.pardir, "bench", "py_bench.py")
_spec = importlib.util.spec_from_file_location("py_bench", _PATH)
py_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(py_bench)


class MedianOfRounds(unittest.TestCase):
    def test_medians_keep_every_round_in_order(self):
        lines = [
            {"case": "py_small_add_us", "lib": "rucuda", "value": 5.7, "unit": "us"},
            {"case": "py_small_add_us", "lib": "cupy", "value": 9.5, "unit": "us"},
            {"case": "py_small_add_us", "lib": "rucuda", "value": 4.0, "unit": "us"},
            {"case": "py_small_add_us", "lib": "cupy", "value": 9.0, "unit": "us"},
            {"case": "py_small_add_us", "lib": "rucuda", "value": 5.6, "unit": "us"},
            {"case": "py_compile_first_ms", "lib": "raw", "value": 30.0, "unit": "ms"},
        ]
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write("== pycuda-bench round 1\n")
            for line in lines:
                f.write(json.dumps(line) + "\n")
            path = f.name
        try:
            got = {(r["case"], r["lib"]): r for r in py_bench.median_of_rounds(path)}
        finally:
            os.unlink(path)
        self.assertEqual(got[("py_small_add_us", "rucuda")]["value"], 5.6)
        self.assertEqual(got[("py_small_add_us", "rucuda")]["rounds"], [5.7, 4.0, 5.6])
        self.assertEqual(got[("py_small_add_us", "cupy")]["value"], 9.25)
        self.assertEqual(got[("py_compile_first_ms", "raw")]["unit"], "ms")
        self.assertEqual(len(got), 3)


if __name__ == "__main__":
    unittest.main()
