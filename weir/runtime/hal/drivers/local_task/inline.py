"""A per-thread trampoline for completions. Signalling a fence runs the callbacks of operations
waiting on it on the same thread, and a work-less operation (barrier, dealloca) signals its own
fence right there; run recursively, a chain of 1,000 barriers would overflow Python's stack. Instead
the first completion on a thread drains a queue and nested ones only append to it."""

from __future__ import annotations

import threading
from collections import deque
from typing import Callable

_state = threading.local()


def run_inline(action: Callable[[], None]) -> None:
    """Runs `action` now, or after the completion this thread is already inside of."""
    pending: deque[Callable[[], None]] | None = getattr(_state, "pending", None)
    if pending is not None:
        pending.append(action)
        return
    pending = deque((action,))
    _state.pending = pending
    try:
        while pending:
            pending.popleft()()
    finally:
        _state.pending = None
        # Only an interrupt (actions never raise `Exception`) gets here with work left; run it
        # anyway, or the fences it would signal could never be reached.
        while pending:
            run_inline(pending.popleft())
