"""PyCUDA's API, provided by the ``rucuda`` wheel (rucuda's Rust crates do the work)."""
from __future__ import annotations

VERSION = (2026, 1)
VERSION_STATUS = ""
VERSION_TEXT = "2026.1"
