"""Timeline semaphores: a 64-bit value that only increases, or a failure state that carries the
original error message so every waiter reports the real cause, not "semaphore failed"."""

from __future__ import annotations

import threading
import time
from typing import Callable

from weir.errors import RuntimeFault, WeirError

MAX_VALUE = (1 << 64) - 1
# Waits sleep in short slices so a KeyboardInterrupt reaches the main thread promptly.
_WAIT_SLICE_S = 0.05

# Called once with None when the awaited value is reached, or with the failure message.
TimepointCallback = Callable[[str | None], None]


class Semaphore:
    def __init__(self, initial_value: int = 0) -> None:
        self._cond = threading.Condition()
        self._value = initial_value
        self._failure: str | None = None
        self._callbacks: list[tuple[int, TimepointCallback]] = []

    @property
    def failure(self) -> str | None:
        return self._failure

    def query(self) -> int:
        """The current value; raises `RuntimeFault` with the original message if failed."""
        with self._cond:
            if self._failure is not None:
                raise RuntimeFault(self._failure)
            return self._value

    def signal(self, value: int) -> None:
        if type(value) is not int or value > MAX_VALUE:
            raise RuntimeFault(f"semaphore value {value!r} is not a u64")
        with self._cond:
            if self._failure is not None:
                raise RuntimeFault(self._failure)
            if value <= self._value:
                raise RuntimeFault(f"semaphore signalled to {value} but it is already at "
                                   f"{self._value}: timeline values must increase")
            self._value = value
            ready = [cb for v, cb in self._callbacks if v <= value]
            self._callbacks = [(v, cb) for v, cb in self._callbacks if v > value]
            self._cond.notify_all()
        for cb in ready:
            cb(None)

    def fail(self, error: WeirError | str) -> None:
        """Puts the semaphore in a failure state; the first failure's message wins."""
        message = str(error)
        with self._cond:
            if self._failure is not None:
                return
            self._failure = message
            ready = [cb for _, cb in self._callbacks]
            self._callbacks = []
            self._cond.notify_all()
        for cb in ready:
            cb(message)

    def wait(self, value: int, timeout: float | None = None) -> bool:
        """True once the value is reached, False on timeout (None waits forever, interruptibly);
        raises `RuntimeFault` carrying the failure's message."""
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        with self._cond:
            while True:
                if self._failure is not None:
                    raise RuntimeFault(self._failure)
                if self._value >= value:
                    return True
                if deadline is None:
                    slice_s = _WAIT_SLICE_S
                else:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return False
                    slice_s = min(remaining, _WAIT_SLICE_S)
                self._cond.wait(slice_s)

    def on_reached(self, value: int, callback: TimepointCallback) -> None:
        """Runs `callback` (on the signalling thread, or now) when `value` is reached or the
        semaphore fails: the hook an asynchronous driver schedules work with."""
        with self._cond:
            failure, reached = self._failure, self._value >= value
            if failure is None and not reached:
                self._callbacks.append((value, callback))
                return
        callback(failure)

    def __repr__(self) -> str:
        state = f"failed: {self._failure}" if self._failure is not None else str(self._value)
        return f"<hal.semaphore {state}>"
