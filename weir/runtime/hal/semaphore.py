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

from weir.errors import RuntimeFault, WaitCycleError, WeirError
from weir.runtime.hal.deadline import expired_error, remaining
from weir.runtime.hal.live_objects import SEMAPHORES
from weir.runtime.hal.wait_cycles import PendingSignal, Timepoint, cycle_message, find_wait_cycle

MAX_VALUE = (1 << 64) - 1
_count_alive = SEMAPHORES.track
# Waits sleep in short slices so a KeyboardInterrupt reaches the main thread promptly.
_WAIT_SLICE_S = 0.05

# Called once with None when the awaited value is reached, or with the failure message.
TimepointCallback = Callable[[str | None], None]


class Semaphore:
    __slots__ = ("_lock", "_value", "_failure", "_callbacks", "_seq", "_sleepers",
                 "_signallers", "__weakref__")

    def __init__(self, initial_value: int = 0) -> None:
        _count_alive(self)  # runtime_statistics()["semaphores_alive"]; costs no lock
        self._lock = threading.Lock()
        self._value = initial_value
        self._failure: str | None = None
        # A heap by value (then registration order): a signal pops only the callbacks it
        # reaches, so a timeline with thousands of operations queued on it (local-task) stays
        # O(log n) per signal instead of rescanning every pending callback. None until the
        # first callback: most semaphores (one per synchronous call) never get one.
        self._callbacks: list[tuple[int, int, TimepointCallback]] | None = None
        self._seq = 0  # registration order, for the heap; bumped under the lock
        # Held locks of sleeping waiters; every signal or failure releases (wakes) them all and
        # each looks again at the state. None while nobody sleeps (made under the lock).
        self._sleepers: list[threading.Lock] | None = None
        # Queue operations still waiting (or running) that will signal this semaphore, for
        # finding wait cycles (wait_cycles.py); appended and removed without the lock (atomic).
        self._signallers: list[PendingSignal] = []

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

    def pending(self, value: int) -> bool:
        """Neither reached nor failed: a wait for `value` would block. Never raises."""
        return self._failure is None and self._value < value

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
            sleepers = self._sleepers
            if sleepers is not None:
                self._sleepers = None
        if sleepers is not None:
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
            ready = [cb for _, _, cb in sorted(self._callbacks or ())]
            self._callbacks = None
            sleepers, self._sleepers = self._sleepers or (), None
        for sleeper in sleepers:
            sleeper.release()
        for cb in ready:
            cb(message)

    def wait(self, value: int, timeout: float | None = None) -> bool:
        """True once the value is reached, False on timeout (None waits without limit, in slices
        so Ctrl-C gets through). Raises `RuntimeFault` carrying the failure's message,
        `DeadlineExceeded` when the calling thread's deadline (deadline.py) passes first, and
        `WaitCycleError` when the queue operations that would reach the value wait on each
        other."""
        if self.reached(value):
            return True
        return wait_timepoints(((self, value),), timeout, None)

    def _park(self, value: int, timeout: float) -> int:
        """Sleeps until the next signal or failure, for at most `timeout` seconds: 1 when `value`
        is reached, 0 when woken short of it (or by a failure: the caller looks again), -1 when
        the time ran out; raises `RuntimeFault` if already failed."""
        with self._lock:
            if self._failure is not None:
                raise RuntimeFault(self._failure)
            if self._value >= value:
                return 1
            if timeout <= 0:
                return -1
            sleeper = threading.Lock()
            sleeper.acquire()
            if self._sleepers is None:
                self._sleepers = [sleeper]
            else:
                self._sleepers.append(sleeper)
        woke = False
        try:
            woke = sleeper.acquire(True, timeout)
        finally:
            if not woke:  # timed out or interrupted: withdraw, unless a signal took it
                with self._lock:
                    if self._sleepers is not None and sleeper in self._sleepers:
                        self._sleepers.remove(sleeper)
        if not woke:
            return -1
        return 1 if self._value >= value else 0  # no lock: the value only grows

    def add_signaller(self, op: PendingSignal) -> None:
        """Registers a pending queue operation that will signal this semaphore (until
        `remove_signaller`), so blocked waits can find wait cycles through it."""
        self._signallers.append(op)

    def remove_signaller(self, op: PendingSignal) -> None:
        self._signallers.remove(op)

    def signallers(self) -> tuple[PendingSignal, ...]:
        return tuple(self._signallers)

    def on_reached(self, value: int, callback: TimepointCallback) -> None:
        """Runs `callback` (on the signalling thread, or now) when `value` is reached or the
        semaphore fails: the hook an asynchronous driver schedules work with."""
        with self._lock:
            failure, reached = self._failure, self._value >= value
            if failure is None and not reached:
                self._seq += 1
                if self._callbacks is None:
                    self._callbacks = []
                heapq.heappush(self._callbacks, (value, self._seq, callback))
                return
        callback(failure)

    def __repr__(self) -> str:
        state = f"failed: {self._failure}" if self._failure is not None else str(self._value)
        return f"<hal.semaphore {state}>"


def wait_timepoints(points: tuple[Timepoint, ...], timeout: float | None,
                    waiting_for: str | None) -> bool:
    """The slow path of `Semaphore.wait` and `Fence.wait`: True once every point is reached,
    False when `timeout` passes first. It sleeps on one pending point at a time in slices, and
    between slices looks at every point for a failure (raised with its original message) and
    for a wait cycle. The calling thread's deadline shortens `timeout`; when that is what ends
    the wait it raises `DeadlineExceeded` naming `waiting_for` instead of returning False."""
    left = remaining()
    if left is None and timeout is None and len(points) == 1:
        # The common case (a host waiting for its call's work): one park, woken by the signal.
        sem, value = points[0]
        if sem._park(value, _WAIT_SLICE_S) > 0:
            return True
    by_deadline = left is not None and (timeout is None or left < timeout)
    if by_deadline:
        timeout = left
    end = None if timeout is None else time.monotonic() + max(timeout, 0.0)
    while True:
        pending = None
        for sem, value in points:
            failure = sem._failure
            if failure is not None:
                raise RuntimeFault(failure)
            if pending is None and sem._value < value:
                pending = sem, value
        if pending is None:
            return True
        # Without a time limit no clock is read: a wait woken by its signal costs what a plain
        # lock hand-off does.
        slice_s = _WAIT_SLICE_S if end is None else min(end - time.monotonic(), _WAIT_SLICE_S)
        woken = pending[0]._park(pending[1], slice_s)
        if woken > 0:
            if len(points) == 1:
                return True  # nothing else to look at
            continue
        if woken == 0:
            continue  # a signal short of the value, or a failure: look again
        # A whole slice (or the timeout) passed with no signal: is anything coming?
        _raise_on_wait_cycle(points, waiting_for)
        if end is not None and time.monotonic() >= end:
            if by_deadline:
                raise expired_error(waiting_for or _describe(points))
            return False


def _describe(points: tuple[Timepoint, ...]) -> str:
    pending = [(sem, value) for sem, value in points if sem._value < value]
    what = "; ".join(f"a semaphore at {sem._value} to reach {value}" for sem, value in pending)
    return f"waiting for {what or 'a fence'}"


def _raise_on_wait_cycle(points: tuple[Timepoint, ...], waiting_for: str | None) -> None:
    """Raises `WaitCycleError` when the queue operations the points depend on wait on each
    other; those operations are failed with the same message (nothing could ever run them), so
    every wait that depends on them ends too."""
    if not any(sem._signallers for sem, _ in points):
        return
    cycle = find_wait_cycle(points)
    if cycle is None:
        return
    message = cycle_message(cycle, points, waiting_for)
    for op in cycle:
        op.expire(message)
    raise WaitCycleError(message)
