"""Imports linked without a wrapper frame. A compiled program calls the hal module about ten
times per invocation, and the generated wrapper that names a failing hal function in its fault
(`RuntimeFault("hal.fence.create: TypeError: ...")`) costs a Python frame, about 0.1 µs, on
every one of those calls, even though nothing fails. So the runtime's own modules
(`NativeModule.links_bare`) are linked into translated code as the plain bound method, and the
naming is done only when something fails: every translated function catches what escapes it
(a `try` costs nothing until it catches) and asks `name_import_fault`, which looks at the frame
the failure came out of. When that frame is a bare-linked method's, the failure is reported as
the wrapper would have reported it; otherwise it passes on unchanged."""

from __future__ import annotations

import sys
from types import CodeType

from weir.errors import RuntimeFault, WeirError

# The code of each bare-linked method -> the qualified name its faults carry.
_NAMES: dict[CodeType, str] = {}


def register(code: CodeType, qualified: str) -> bool:
    """Lets `qualified` be linked bare; False when the same code is already registered under
    another name (its faults could not say which), and the caller keeps the wrapper."""
    return _NAMES.setdefault(code, qualified) == qualified


def name_import_fault() -> None:
    """Called by a translated function's handler with what escaped it (the exception being
    handled; the generated code binds no name for it): raises the `RuntimeFault` naming the
    bare-linked import it came out of (caused by it), or returns, and the function re-raises it
    as it is (a `WeirError`, or a failure of its own code or of a wrapped callee, already
    reported)."""
    error = sys.exc_info()[1]
    if error is None or isinstance(error, WeirError):
        return
    here = error.__traceback__  # the translated function's own frame
    callee = here.tb_next if here is not None else None
    if callee is None:
        return
    qualified = _NAMES.get(callee.tb_frame.f_code)
    if qualified is not None:
        raise RuntimeFault(f"{qualified}: {type(error).__name__}: {error}") from error
