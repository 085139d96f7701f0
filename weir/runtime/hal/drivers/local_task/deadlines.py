"""The set of a device's waiting operations, with their deadlines. One monitor thread per device
sleeps until the earliest deadline (a heap and `Condition.wait`), instead of a timer thread per
operation, so submitting 1,000 operations creates no thread. It also lets `shutdown` find every
operation that is still waiting."""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time

from weir.runtime.hal.drivers.local_task.operation import Operation
from weir.runtime.hal.live_objects import ThreadGroup

# The heap is compacted (operations that stopped waiting dropped) when it grows past twice this
# or twice its size after the last compaction: amortised O(1) per operation.
_MIN_COMPACT = 64


class DeadlineMonitor:
    def __init__(self, timeout_s: float | None, name: str,
                 threads: ThreadGroup | None = None) -> None:
        self._group = threads if threads is not None else ThreadGroup()  # counts and joins it
        self._timeout_s = timeout_s
        self._name = name
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Operation]] = []
        self._seq = itertools.count()
        self._compact_at = 2 * _MIN_COMPACT
        self._thread: threading.Thread | None = None
        self._stopped = False

    def deadline_message(self, what: str) -> str:
        return (f"{what}: the wait fence was not reached within {self._timeout_s:g} s "
                f"(a wait cycle, or a fence nobody signals)")

    def track(self, op: Operation) -> bool:
        """Watches a waiting operation; False once stopped (the caller must fail it)."""
        deadline = math.inf if self._timeout_s is None else time.monotonic() + self._timeout_s
        with self._cond:
            if self._stopped:
                return False
            heapq.heappush(self._heap, (deadline, next(self._seq), op))
            if len(self._heap) > self._compact_at:
                self._heap = [entry for entry in self._heap if entry[2].waiting]
                heapq.heapify(self._heap)
                self._compact_at = 2 * max(_MIN_COMPACT, len(self._heap))
            if deadline != math.inf:
                if self._thread is None:
                    self._thread = self._group.start(self._loop, self._name)
                elif self._heap and self._heap[0][2] is op:
                    self._cond.notify()  # the monitor sleeps until a later deadline
        return True

    def stop(self) -> list[Operation]:
        """Stops the monitor; returns the operations that were still waiting."""
        with self._cond:
            self._stopped = True
            waiting = [op for _, _, op in self._heap if op.waiting]
            self._heap = []
            self._cond.notify()
        return waiting

    def _next_expired(self) -> Operation | None:
        """Blocks until an operation's deadline passes; None once stopped."""
        with self._cond:
            while not self._stopped:
                if not self._heap or self._heap[0][0] == math.inf:
                    self._cond.wait()
                    continue
                deadline, _, op = self._heap[0]
                if not op.waiting:
                    heapq.heappop(self._heap)
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    heapq.heappop(self._heap)
                    return op
                self._cond.wait(remaining)
        return None

    def _loop(self) -> None:
        while (op := self._next_expired()) is not None:
            try:
                op.expire(self.deadline_message(op.what))
            except Exception:
                pass  # never lose the monitor: expire already failed the fence if it could
