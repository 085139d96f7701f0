"""One queue operation of the local-task device: it counts down the timepoints of its wait fence
through `Semaphore.on_reached` callbacks and leaves the waiting state exactly once, either ready
(all points reached) or failed (the first failure, a deadline, a wait cycle, or shutdown).
Settling under a lock is what lets semaphore callbacks, the deadline monitor, a host wait that
found a cycle and `shutdown` race safely.

An operation that has to wait is registered with the semaphores it signals until it settles
(`Semaphore.add_signaller`): that is what lets a blocked host wait find wait cycles
(hal/wait_cycles.py). Operations whose waits are already met are never registered."""

from __future__ import annotations

import threading
from enum import Enum
from typing import Callable

from weir.runtime.hal.drivers.local_task.execute_work import ExecuteWork
from weir.runtime.hal.drivers.local_task.inline import run_inline
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.queue_work import failure_message, run_work
from weir.runtime.hal.semaphore import Semaphore
from weir.runtime.hal.statistics import DeviceStatistics

Timepoints = tuple[tuple[Semaphore, int], ...]


class _State(Enum):
    WAITING = 0
    READY = 1
    DONE = 2


class Operation:
    __slots__ = ("what", "signal", "work", "origin", "_statistics", "_lock", "_pending", "_state",
                 "_on_ready", "_keepalive", "_waits")

    def __init__(self, what: str, signal: Fence, work: Callable[[], object] | None,
                 on_ready: Callable[[Operation], None], keepalive: object,
                 statistics: DeviceStatistics, origin: str = "") -> None:
        self.what = what
        self.origin = origin  # the device, in wait-cycle reports
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
        # The wait timepoints while registered as a pending signaller, else None.
        self._waits: Timepoints | None = None

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
            if sem.pending(value):
                # Registered before hooking, so whatever settles it later finds it registered.
                self._waits = points
                self.signal.add_signaller(self)
                break
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

    def wait_points(self) -> Timepoints:
        return self._waits or ()

    def signal_points(self) -> Timepoints:
        return self.signal.points

    def describe(self) -> str:
        """`queue execute [exe::entry, ...] on weir-local-task-0`."""
        work = self.work
        detail = f" [{', '.join(work.dispatch_names())}]" if isinstance(work, ExecuteWork) else ""
        return f"{self.what}{detail} on {self.origin or 'local-task'}"

    def expire(self, message: str) -> bool:
        """Fails a still-waiting operation (deadline, wait cycle, shutdown); False if it already
        moved on."""
        with self._lock:
            if self._state is not _State.WAITING:
                return False
            self._state = _State.DONE
        self.finish(message)
        return True

    def run(self) -> None:
        """Runs the work on a worker thread, then signals or fails the signal fence. The work's
        end is recorded before the signal, which may start dependent operations at once."""
        work = self.work
        if work is None:
            self.finish(None)
            return
        statistics = self._statistics
        statistics.record_started(self)
        try:
            failure = run_work(self.what, work)
        except BaseException as e:  # SystemExit from a kernel must not take a worker down
            failure = failure_message(self.what, e)
        finally:
            statistics.record_ended(self)
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
        # The signal fence goes too: its semaphores must not stay alive (and counted as live)
        # while this operation waits in the deadline heap for the next compaction.
        signal, self.signal = self.signal, _NO_FENCE
        if self._waits is not None:
            self._waits = None
            signal.remove_signaller(self)
        run_inline(lambda: _complete(self.what, signal, failure, self._statistics))


_NO_FENCE = Fence()


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
