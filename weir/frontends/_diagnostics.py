"""torch-mlir's diagnostics kept for weir's one-line errors instead of printed to stderr."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def collected(context: Any) -> Iterator[list[tuple[str, str]]]:
    """(location, message) of each diagnostic emitted on `context` (a torch_mlir.ir.Context)
    while the block runs."""
    diagnostics: list[tuple[str, str]] = []

    def collect(d: Any) -> bool:
        diagnostics.append((str(d.location), str(d.message)))
        return True  # handled: torch-mlir's C++ side would print it to the process's stderr

    handler = context.attach_diagnostic_handler(collect)
    try:
        yield diagnostics
    finally:
        handler.detach()
