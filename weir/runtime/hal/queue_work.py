"""Running the work of one queue operation, shared by the local drivers so that a failing kernel
reports the same message whether it ran inline (local-sync) or on a worker (local-task)."""

from __future__ import annotations

from typing import Callable

from weir.errors import WeirError


def failure_message(what: str, error: BaseException) -> str:
    """A `WeirError` already says what went wrong for the user; anything else is a bug in a loader
    or kernel, so name the operation and the exception type to make it findable."""
    if isinstance(error, WeirError):
        return str(error)
    return f"{what}: {type(error).__name__}: {error}"


def run_work(what: str, work: Callable[[], object]) -> str | None:
    """Runs `work`; None on success, else the message the signal fence must fail with. Never
    raises an `Exception`, because a caller on a worker thread has nobody to raise to."""
    try:
        work()
    except Exception as e:
        return failure_message(what, e)
    return None
