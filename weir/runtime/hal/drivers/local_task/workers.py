"""A fixed pool of daemon worker threads fed by one queue. Threads start on the first submission
and their number never changes, so steady-state submission creates no threads; daemon threads
never hold up interpreter exit. The pool holds no reference to the device, so an unused device can
be collected (its finalizer stops the pool). Threads start through the device's `ThreadGroup`, so
its statistics count them and `shutdown` joins them."""

from __future__ import annotations

import queue
import threading

from weir.runtime.hal.drivers.local_task.operation import Operation
from weir.runtime.hal.live_objects import ThreadGroup


class WorkerPool:
    def __init__(self, count: int, name: str, shutdown_message: str,
                 threads: ThreadGroup | None = None) -> None:
        self._count = count
        self._group = threads if threads is not None else ThreadGroup()
        self._name = name
        self._shutdown_message = shutdown_message  # formatted with the operation's name
        self._queue: queue.SimpleQueue[Operation | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._stopped = False

    def submit(self, op: Operation) -> bool:
        """Queues a ready operation; False once stopped (the caller must fail it)."""
        with self._lock:
            if self._stopped:
                return False
            if not self._threads:
                for i in range(self._count):
                    self._threads.append(self._group.start(self._loop, f"{self._name}-{i}"))
            # Under the lock, so nothing is queued behind the stop sentinels.
            self._queue.put(op)
        return True

    def take(self) -> Operation | None:
        """A queued operation for the calling thread to run instead of a worker (a host about to
        wait helps rather than sleeps), or None when nothing is queued or the pool is stopped."""
        if self._stopped:
            return None
        try:
            op = self._queue.get_nowait()
        except queue.Empty:
            return None
        if op is None:  # a stop sentinel: it belongs to a worker
            self._queue.put(None)
        return op

    def stop(self) -> None:
        """Queued operations fail with the shutdown message; running ones finish."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            for _ in self._threads:
                self._queue.put(None)

    def _loop(self) -> None:
        while (op := self._queue.get()) is not None:
            try:
                if self._stopped:
                    op.finish(self._shutdown_message.format(what=op.what))
                else:
                    op.run()
            except BaseException:
                pass  # op.run reports through the fence; a worker thread must outlive any bug
            # Let go of the finished operation now rather than when the next one arrives: its
            # work holds the buffers of the call, which the caller may already have dropped.
            op = None
