"""Where a dispatch's workgroups run. An executable that splits its iteration space into
workgroups hands the ranges to its device's runner: local-sync runs them all on the calling
thread, local-task spreads them over one thread per core. Native code releases the GIL, so the
threads really run in parallel; the runner only hands out ranges and joins.

A runner is owned by one device and never shared, so devices do not contend for its threads."""

from __future__ import annotations

import os
import queue
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Callable, TypeVar

from weir.runtime.hal.live_objects import ThreadGroup
from weir.runtime.hal.work_board import WorkBoard

T = TypeVar("T")

# A contiguous range [begin, end) of workgroup ids, run on one thread.
WorkgroupBody = Callable[[int, int], None]


class WorkgroupRunner(ABC):
    @property
    @abstractmethod
    def concurrency(self) -> int:
        """How many ranges may run at once: executables size their split by it."""

    @abstractmethod
    def run(self, count: int, body: WorkgroupBody) -> None:
        """Runs workgroups 0..count-1 and returns when all are done; the first exception
        raised by any range is re-raised here after the others finish."""

    def share(self, function: int, args: Sequence[int], threads: int,
              lead: Callable[[], T]) -> T:
        """Runs `lead()` on the calling thread (slot 0) while the runner's other threads call
        the native `function(*args, slot)` for slots 1 .. min(threads, concurrency) - 1, and
        returns its result once no other thread is still inside `function`. `function` itself
        knows when the work is over (the shared executor's tickets), so a helper that comes
        late finds nothing to do. A runner without other threads just calls `lead()`."""
        return lead()


class InlineWorkgroups(WorkgroupRunner):
    @property
    def concurrency(self) -> int:
        return 1

    def run(self, count: int, body: WorkgroupBody) -> None:
        if count > 0:
            body(0, count)


class _Join:
    """Counts finished ranges; the dispatching thread sleeps on it once, not per range."""

    __slots__ = ("pending", "lock", "done", "error")

    def __init__(self, pending: int) -> None:
        self.pending = pending
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.error: BaseException | None = None

    def finish(self, error: BaseException | None) -> None:
        with self.lock:
            if error is not None and self.error is None:
                self.error = error
            self.pending -= 1
            if self.pending == 0:
                self.done.set()


# A range of workgroups with the join it reports to.
_Task = tuple[WorkgroupBody, int, int, _Join]
# Queued to wake a sleeping helper for what was posted on the board.
_LOOK = "look at the board"


class ParallelWorkgroups(WorkgroupRunner):
    """`threads - 1` helper threads plus the dispatching thread itself, which runs the first range
    (so a one-core machine has no helpers and no hand-offs). Helpers are daemons started on the
    first parallel dispatch; `stop` ends them. Between tasks a helper watches the device's work
    board for `spin_us` (work_board.py), where `share` posts native work, before it sleeps; a
    `prime` keeps it watching longer, or wakes it."""

    def __init__(self, threads: int | None = None, name: str = "weir-workgroups",
                 group: ThreadGroup | None = None, spin_us: float = 0.0) -> None:
        self._threads = max(1, threads if threads is not None else (os.cpu_count() or 1))
        self._group = group if group is not None else ThreadGroup()  # its device's: counted
        self._name = name
        self._queue: queue.SimpleQueue[_Task | str | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._helpers: list[threading.Thread] = []
        self._stopped = False
        self._board = WorkBoard(spin_us)
        self._posting = threading.Lock()  # one post on the board at a time

    @property
    def concurrency(self) -> int:
        return self._threads

    def run(self, count: int, body: WorkgroupBody) -> None:
        parts = min(count, self._threads)
        if parts <= 1 or self._stopped:
            if count > 0:
                body(0, count)
            return
        self._start()
        bounds = [count * i // parts for i in range(parts + 1)]
        join = _Join(parts - 1)
        for i in range(1, parts):
            self._put((body, bounds[i], bounds[i + 1], join))
        error: BaseException | None = None
        try:
            body(bounds[0], bounds[1])
        except BaseException as e:  # re-raised below, after the helpers' ranges are done
            error = e
        join.done.wait()
        if error is not None:
            raise error
        if join.error is not None:
            raise join.error

    def share(self, function: int, args: Sequence[int], threads: int,
              lead: Callable[[], T]) -> T:
        slots = min(threads, self._threads)
        # Another execute holds the board (concurrent queue operations): this one runs alone.
        if slots <= 1 or self._stopped or not self._posting.acquire(blocking=False):
            return lead()
        try:
            self._start()
            watching = self._board.post(function, args, slots)  # wakes native sleepers
            if not self._board.native_sleep:
                for _ in range(len(self._helpers) - watching):
                    self._queue.put(_LOOK)
            try:
                return lead()
            finally:
                self._board.close()
        finally:
            self._posting.release()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            for _ in self._helpers:
                self._put(None)

    def prime(self, window_ns: int) -> None:
        """Native work is about to be shared: helpers watch the board for `window_ns` from now,
        and wake now if they sleep (work_board.py). Nothing before the helpers exist."""
        if self._helpers and not self._stopped:
            self._board.prime(window_ns)

    def _put(self, task: _Task | str | None) -> None:
        """Queues Python work for a helper; helpers asleep on the board wake to take it."""
        self._queue.put(task)
        if self._board.native_sleep:
            self._board.call()

    def _start(self) -> None:
        with self._lock:
            if self._helpers or self._stopped:
                return
            for i in range(self._threads - 1):
                self._helpers.append(self._group.start(self._loop, f"{self._name}-{i}"))

    def _loop(self) -> None:
        seen = -1  # the board's last generation this helper looked at
        board = self._board
        sleep = board.native_sleep
        while True:
            # Posts, a spin waiting for more and, where it can, a sleep on the board (GIL
            # released): it returns when Python work is queued, or else when the spin ends.
            seen = board.serve(seen, sleep)
            if sleep:
                try:
                    task = self._queue.get_nowait()
                except queue.Empty:  # another helper took it
                    continue
                board.took()
            else:
                task = self._queue.get()
            if task is None:
                return
            if isinstance(task, str):  # _LOOK: the next serve finds the post
                continue
            body, begin, end, join = task
            try:
                body(begin, end)
            except BaseException as e:  # handed to the dispatching thread, which raises it
                join.finish(e)
            else:
                join.finish(None)
            task = body = join = None  # type: ignore[assignment]  # hold nothing while idle
