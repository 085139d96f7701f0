"""Fences: a set of (semaphore, value) timepoints. Queue operations wait on one fence and signal
another, which is all the VM and the coarse-fences ABI need to order work across devices."""

from __future__ import annotations

from typing import Iterable

from weir.errors import RuntimeFault, WeirError
from weir.runtime.hal.semaphore import Semaphore, wait_timepoints
from weir.runtime.hal.wait_cycles import PendingSignal


class Fence:
    __slots__ = ("_points",)

    def __init__(self, points: Iterable[tuple[Semaphore, int]] = ()) -> None:
        self._points: dict[Semaphore, int] = {}
        for sem, value in points:
            self.insert(sem, value)

    @staticmethod
    def create(semaphore: Semaphore | None = None, value: int = 1) -> Fence:
        """One timepoint; a fresh semaphore at 0 unless one is given."""
        fence = Fence.__new__(Fence)  # one point needs none of __init__'s merging
        fence._points = {semaphore or Semaphore(0): value}
        return fence

    @staticmethod
    def join(fences: Iterable[Fence | None]) -> Fence:
        """The union of `fences` (None entries skipped); a semaphore keeps its largest value."""
        out = Fence()
        for f in fences:
            if f is None:
                continue
            if not isinstance(f, Fence):
                raise RuntimeFault(f"hal.fence.join: expected fences, got {type(f).__name__}")
            for sem, value in f._points.items():
                out.insert(sem, value)
        return out

    def insert(self, semaphore: Semaphore, value: int) -> None:
        if self._points.get(semaphore, -1) < value:
            self._points[semaphore] = value

    @property
    def points(self) -> tuple[tuple[Semaphore, int], ...]:
        return tuple(self._points.items())

    def add_signaller(self, op: PendingSignal) -> None:
        """Registers `op` with every semaphore of this fence (see `Semaphore.add_signaller`)."""
        for sem in self._points:
            sem._signallers.append(op)

    def remove_signaller(self, op: PendingSignal) -> None:
        for sem in self._points:
            sem._signallers.remove(op)

    def signal(self) -> None:
        for sem, value in self._points.items():
            sem.signal(value)

    def fail(self, error: WeirError | str) -> None:
        for sem in self._points:
            sem.fail(error)

    def failure(self) -> str | None:
        for sem in self._points:
            if sem.failure is not None:
                return sem.failure
        return None

    def query(self) -> bool:
        """True when every timepoint is reached; raises `RuntimeFault` if any failed."""
        failure = self.failure()
        if failure is not None:
            raise RuntimeFault(failure)
        return all(sem.query() >= value for sem, value in self._points.items())

    def reached(self) -> bool:
        """True when every point is reached, without waiting; raises `RuntimeFault` with the
        original message for a failed point it looks at (as `wait` would)."""
        return self._all_reached()

    def _all_reached(self) -> bool:
        """`wait`'s fast path: True when every point is reached. Stops at the first pending point,
        so a False says nothing about failures further on (the slow path looks at them)."""
        for sem, value in self._points.items():
            if not sem.reached(value):
                return False
        return True

    def wait(self, timeout: float | None = None, waiting_for: str | None = None) -> bool:
        """True once every timepoint is reached, False on timeout (None waits without limit,
        interruptibly). Raises `RuntimeFault` with the original message when any point fails,
        even while an earlier one is still pending; `DeadlineExceeded` when the calling thread's
        deadline passes first (naming `waiting_for`, e.g. "waiting for the signal fence of
        m.f"); `WaitCycleError` when the queue operations that would reach it wait on each
        other."""
        if self._all_reached():
            return True
        return wait_timepoints(tuple(self._points.items()), timeout, waiting_for)

    def __repr__(self) -> str:
        return f"<hal.fence {len(self._points)} timepoint(s)>"
