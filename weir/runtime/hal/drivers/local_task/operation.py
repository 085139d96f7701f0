"""One queue operation of the local-task device: it counts down the timepoints of its wait fence
through `Semaphore.on_reached` callbacks and leaves the waiting state exactly once, either ready
(all points reached) or failed (the first failure, a deadline, or shutdown). Settling under a
lock is what lets semaphore callbacks, the deadline monitor and `shutdown` race safely."""

from __future__ import annotations

import threading
from enum import Enum
from typing import Callable

from weir.runtime.hal.drivers.local_task.inline import run_inline
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.queue_work import failure_message, run_work
from weir.runtime.hal.statistics import DeviceStatistics


class _State(Enum):
    WAITING = 0
    READY = 1
    DONE = 2


class Operation:
    __slots__ = ("what", "signal", "work", "_statistics", "_lock", "_pending", "_state",
                 "_on_ready", "_keepalive")

    def __init__(self, what: str, signal: Fence, work: Callable[[], object] | None,
                 on_ready: Callable[[Operation], None], keepalive: object,
                 statistics: DeviceStatistics) -> None:
        self.what = what
        self.signal = signal
        # The device's counters (not the device): the outcome is counted on whatever thread
        # settles the operation, which may be another device's worker.
        self._statistics = statistics
        # None for operations that only order (barrier, dealloca, alloca's signal).
        self.work = work
        self._lock = threading.Lock()
        self._pending = 0
        self._state = _State.WAITING
        self._on_ready = on_ready
        # The device: kept alive while work is pending, so dropping the last user reference to
        # a device does not shut it down under its own queue.
        self._keepalive: object = keepalive

    @property
    def waiting(self) -> bool:
        return self._state is _State.WAITING

    def arm(self, wait: Fence | None) -> bool:
        """Hooks every point of `wait`; True while the operation is still waiting afterwards
        (points already reached or failed fire their callbacks right here)."""
        points = () if wait is None else wait.points
        if not points:
            self._became_ready()
            return False
        self._pending = len(points)
        for sem, value in points:
            sem.on_reached(value, self._on_point)
            if not self.waiting:
                break  # failed already; the other points no longer matter
        return self.waiting

    def _on_point(self, failure: str | None) -> None:
        """A semaphore callback, on whatever thread signalled or failed the point."""
        with self._lock:
            if self._state is not _State.WAITING:
                return
            if failure is None:
                self._pending -= 1
                if self._pending:
                    return
            self._state = _State.READY if failure is None else _State.DONE
        if failure is None:
            self._on_ready(self)
        else:
            self.finish(failure)  # a failed wait fails the signal with the original message

    def _became_ready(self) -> None:
        with self._lock:
            self._state = _State.READY
        self._on_ready(self)

    def expire(self, message: str) -> bool:
        """Fails a still-waiting operation (deadline, shutdown); False if it already moved on."""
        with self._lock:
            if self._state is not _State.WAITING:
                return False
            self._state = _State.DONE
        self.finish(message)
        return True

    def run(self) -> None:
        """Runs the work on a worker thread, then signals or fails the signal fence."""
        work = self.work
        try:
            failure = None if work is None else run_work(self.what, work)
        except BaseException as e:  # SystemExit from a kernel must not take a worker down
            failure = failure_message(self.what, e)
        # Release what the work captured before the signal wakes the host, which may drop the
        # call's buffers and allocate the next ones at once (the pool reuses only free memory).
        work = None
        self.finish(failure)

    def finish(self, failure: str | None) -> None:
        """Signals (None) or fails the signal fence, through the trampoline so completions that
        cascade through chains of dependent operations stay iterative."""
        with self._lock:
            self._state = _State.DONE
        # Drop what the work captured (buffers) and every path back to the device: a finished
        # operation may linger in the deadline heap or a semaphore's callbacks for a while.
        self.work = None
        self._keepalive = None
        self._on_ready = _already_ready
        run_inline(lambda: _complete(self.what, self.signal, failure, self._statistics))


def _already_ready(op: Operation) -> None:
    pass


def _complete(what: str, signal: Fence, failure: str | None, statistics: DeviceStatistics) -> None:
    """Counts the outcome before settling the fence, so a host woken by it sees the count."""
    if failure is None:
        statistics.record_completed()
        try:
            signal.signal()
            return
        except Exception as e:  # the semaphore failed meanwhile or was signalled past the value
            statistics.record_signal_refused()
            failure = failure_message(what, e)
    else:
        statistics.record_failed()
    try:
        signal.fail(failure)
    except Exception:
        pass  # a callback someone else registered raised; the fence already carries the failure
