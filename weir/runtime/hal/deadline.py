"""The calling thread's deadline: one absolute time that every wait and every host-program loop
started on this thread stops at, so a caller bounds a whole invocation with one number instead
of threading a timeout through each wait inside it.

Deadlines nest and the earliest wins: a wait with its own timeout inside a call with a deadline
stops at whichever comes first. A thread with no deadline waits without limit (interruptibly)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from weir.errors import DeadlineExceeded, UsageError


class _State(threading.local):
    def __init__(self) -> None:
        self.at: float | None = None  # time.monotonic() value, None for none
        self.what = ""


_STATE = _State()


@contextmanager
def deadline(timeout_s: float | None, what: str) -> Iterator[None]:
    """Bounds everything this thread does inside the block by `timeout_s` seconds from now
    (None adds no bound); `what` names the bounded call in the error."""
    if timeout_s is not None and (isinstance(timeout_s, bool)
                                  or not isinstance(timeout_s, (int, float))
                                  or not timeout_s >= 0):
        raise UsageError(f"{what}: timeout must be None or a number of seconds >= 0, "
                         f"got {timeout_s!r}")
    state = _STATE
    saved = state.at, state.what
    if timeout_s is not None:
        at = time.monotonic() + timeout_s
        if state.at is None or at < state.at:
            state.at, state.what = at, f"{what} (timeout {timeout_s:g} s)"
    try:
        yield
    finally:
        state.at, state.what = saved


def remaining() -> float | None:
    """Seconds left before this thread's deadline (never negative); None when it has none."""
    at = _STATE.at
    return None if at is None else max(0.0, at - time.monotonic())


def bounded(timeout_s: float | None) -> float | None:
    """`timeout_s` shortened to this thread's deadline."""
    left = remaining()
    if left is None:
        return timeout_s
    return left if timeout_s is None else min(timeout_s, left)


def expired_error(waiting_for: str) -> DeadlineExceeded:
    """The error a wait cut short by this thread's deadline raises."""
    return DeadlineExceeded(f"{_STATE.what or 'call'}: deadline exceeded while {waiting_for}")


def check(waiting_for: str) -> None:
    """Raises `DeadlineExceeded` once this thread's deadline has passed."""
    at = _STATE.at
    if at is not None and time.monotonic() >= at:
        raise expired_error(waiting_for)
