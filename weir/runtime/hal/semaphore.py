"""Timeline semaphores: a 64-bit value that only increases, or a failure state that carries the
original error message so every waiter reports the real cause, not "semaphore failed".

Every call of a compiled program creates, signals and waits on a few semaphores, so they are
built for that: a plain lock guards the state, reads need no lock, and a thread that has to sleep
parks on a lock of its own that the next signal (or failure) releases. (A `threading.Condition`
does the same in Python code and costs microseconds more to create, wait on and notify.)"""

from __future__ import annotations

import heapq
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
    __slots__ = ("_lock", "_value", "_failure", "_callbacks", "_seq", "_sleepers",
                 "__weakref__")

    def __init__(self, initial_value: int = 0) -> None:
        self._lock = threading.Lock()
        self._value = initial_value
        self._failure: str | None = None
        # A heap by value (then registration order): a signal pops only the callbacks it
        # reaches, so a timeline with thousands of operations queued on it (local-task) stays
        # O(log n) per signal instead of rescanning every pending callback.
        self._callbacks: list[tuple[int, int, TimepointCallback]] = []
        self._seq = 0  # registration order, for the heap; bumped under the lock
        # Held locks of sleeping waiters; every signal or failure releases (wakes) them all and
        # each looks again at the state.
        self._sleepers: list[threading.Lock] = []

    @property
    def failure(self) -> str | None:
        return self._failure

    def query(self) -> int:
        """The current value; raises `RuntimeFault` with the original message if failed."""
        # No lock: the value only grows and stops changing once failed, so reading the failure
        # first and the value second never reports a value the semaphore did not have.
        failure = self._failure
        if failure is not None:
            raise RuntimeFault(failure)
        return self._value

    def reached(self, value: int) -> bool:
        """Whether `value` is reached, without waiting; raises `RuntimeFault` if failed."""
        failure = self._failure
        if failure is not None:
            raise RuntimeFault(failure)
        return self._value >= value

    def signal(self, value: int) -> None:
        if type(value) is not int or value > MAX_VALUE:
            raise RuntimeFault(f"semaphore value {value!r} is not a u64")
        with self._lock:
            if self._failure is not None:
                raise RuntimeFault(self._failure)
            if value <= self._value:
                raise RuntimeFault(f"semaphore signalled to {value} but it is already at "
                                   f"{self._value}: timeline values must increase")
            self._value = value
            callbacks = self._callbacks
            ready = []
            while callbacks and callbacks[0][0] <= value:
                ready.append(heapq.heappop(callbacks)[2])
            # Taken under the lock; never the live list, on which a waiter may park once the
            # lock is released.
            sleepers: list[threading.Lock] | tuple[()] = self._sleepers
            if sleepers:
                self._sleepers = []
            else:
                sleepers = ()
        for sleeper in sleepers:
            sleeper.release()
        for cb in ready:
            cb(None)

    def fail(self, error: WeirError | str) -> None:
        """Puts the semaphore in a failure state; the first failure's message wins."""
        message = str(error)
        with self._lock:
            if self._failure is not None:
                return
            self._failure = message
            ready = [cb for _, _, cb in sorted(self._callbacks)]
            self._callbacks = []
            sleepers, self._sleepers = self._sleepers, []
        for sleeper in sleepers:
            sleeper.release()
        for cb in ready:
            cb(message)

    def wait(self, value: int, timeout: float | None = None) -> bool:
        """True once the value is reached, False on timeout (None waits forever, interruptibly);
        raises `RuntimeFault` carrying the failure's message."""
        if self.reached(value):
            return True
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        while True:
            with self._lock:
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
                sleeper = threading.Lock()
                sleeper.acquire()
                self._sleepers.append(sleeper)
            if not sleeper.acquire(True, slice_s):
                with self._lock:  # timed out: withdraw, unless a signal took it meanwhile
                    if sleeper in self._sleepers:
                        self._sleepers.remove(sleeper)

    def on_reached(self, value: int, callback: TimepointCallback) -> None:
        """Runs `callback` (on the signalling thread, or now) when `value` is reached or the
        semaphore fails: the hook an asynchronous driver schedules work with."""
        with self._lock:
            failure, reached = self._failure, self._value >= value
            if failure is None and not reached:
                self._seq += 1
                heapq.heappush(self._callbacks, (value, self._seq, callback))
                return
        callback(failure)

    def __repr__(self) -> str:
        state = f"failed: {self._failure}" if self._failure is not None else str(self._value)
        return f"<hal.semaphore {state}>"
