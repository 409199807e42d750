"""PyCUDA's exception classes (``pycuda.driver.Error`` and its subclasses)."""
from __future__ import annotations

import builtins


class Error(Exception):
    """Base class of every error rucuda raises."""


class LogicError(Error):
    """A call that cannot succeed with these arguments or in this state."""


class LaunchError(Error):
    """A kernel failed, or its launch was refused."""


class MemoryError(Error, builtins.MemoryError):  # noqa: A001
    """Out of device or host memory."""


class RuntimeError(Error, builtins.RuntimeError):  # noqa: A001
    """Anything else the driver reports."""


class NotSupportedError(LogicError):
    """The device or driver does not support the operation."""


class NoDriverError(RuntimeError):
    """No CUDA driver (libcuda.so.1) or no device can be used."""


class CompileError(Error):
    """The compiler rejected the source; the message carries its log."""

    def __init__(self, msg, command_line=None, stdout=None, stderr=None):
        super().__init__(msg)
        self.msg = msg
        self.command_line = command_line
        self.stdout = stdout
        self.stderr = stderr

    def __str__(self):
        return str(self.msg)


class CompilerNotFoundError(CompileError):
    """NVRTC (or nvcc) could not be found; the message says what to install."""
