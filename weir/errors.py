"""The small exception hierarchy every room of weir raises. Tools catch `WeirError` and print its
message on one line; anything else escaping a tool is a bug in weir."""

from __future__ import annotations


class WeirError(Exception):
    """Base of every error weir reports to a user."""


class UsageError(WeirError):
    """A bad command-line flag or API argument."""


class CompileError(WeirError):
    """A problem in the user's program, located as `file:line:col`."""

    def __init__(self, message: str, filename: str = "<stdin>", line: int = 0, col: int = 0):
        self.message = message
        self.filename = filename
        self.line = line
        self.col = col
        super().__init__(f"{filename}:{line}:{col}: error: {message}")


class ExportError(WeirError):
    """A model a framework's exporter cannot bring into MLIR (an op it cannot lower)."""


class ModuleFormatError(WeirError):
    """A module file that is truncated, corrupted or otherwise not loadable."""


class LoadError(WeirError):
    """A module, import, device or signature that cannot be resolved in a context."""


class InputError(WeirError):
    """An argument of the wrong count, shape or type."""


class RuntimeFault(WeirError):
    """Work that failed while running: a dispatch, a fence, a custom module's call."""


class DeadlineExceeded(RuntimeFault):
    """A call or a wait that ran past the deadline its caller gave it."""


class WaitCycleError(RuntimeFault):
    """A wait that can never end because the operations it waits for wait on each other."""
