"""Counts of the runtime's live objects (buffers, semaphores, threads), so a host or a test can
tell a leak from a steady state by the runtime's own numbers: after 10,000 invocations the
counts must be what they were after the first.

Every call of a compiled program creates a few buffers and semaphores, so counting must cost
next to nothing. An object is counted by a weak reference whose callback is a C method (`pop` of
the dict of live references): neither its creation nor its death runs Python code for the count,
nothing takes a lock (each dict operation is atomic under the GIL), and the count read at any
moment is exact (`len` of the dict). Threads are not counted as they start and stop: a snapshot
asks each thread the runtime started whether it is still alive, which costs nothing meanwhile.
"""

from __future__ import annotations

import threading
import weakref
from typing import Callable


class LiveObjects:
    """The objects one owner (an allocator, the semaphore class) made that something still
    references, each with a size in bytes (0 where size means nothing)."""

    __slots__ = ("_alive", "_forget", "__weakref__")

    def __init__(self) -> None:
        self._alive: dict[weakref.ref[object], int] = {}
        # Runs when a tracked object dies: a C method, so a death costs no Python frame.
        self._forget = self._alive.pop

    def track(self, obj: object, nbytes: int = 0) -> None:
        """Counts `obj` until it is collected."""
        self._alive[weakref.ref(obj, self._forget)] = nbytes

    @property
    def count(self) -> int:
        return len(self._alive)

    @property
    def nbytes(self) -> int:
        # One C call over the values (ints: nothing in it runs Python code or lets another
        # thread in), so a death on another thread cannot change the dict during the sum.
        return sum(self._alive.values())

    def __repr__(self) -> str:
        return f"<live {self.count} objects, {self.nbytes} bytes>"


# Every buffer counter (one per allocator, plus `HOST_BUFFERS`), for process-wide totals. A
# counter stays alive while its allocator or any buffer it counts does (buffers refer to it).
_BUFFER_COUNTERS: weakref.WeakSet[LiveObjects] = weakref.WeakSet()


def buffer_counter() -> LiveObjects:
    """A counter of one allocator's buffers that the process-wide totals include."""
    counter = LiveObjects()
    _BUFFER_COUNTERS.add(counter)
    return counter


def all_buffer_counters() -> list[LiveObjects]:
    return list(_BUFFER_COUNTERS)


# Buffers of allocators that belong to no device (`Allocator()`, e.g. `BufferView.from_numpy`
# without an allocator).
HOST_BUFFERS = buffer_counter()

# Every semaphore of the process: semaphores belong to no device (`Fence.create()` makes them).
SEMAPHORES = LiveObjects()

# Every device not yet collected (`Device.__init__` adds it).
DEVICES: weakref.WeakSet[object] = weakref.WeakSet()

# Every thread a `ThreadGroup` started, while anything (the threading module, while it runs)
# refers to it.
_THREADS: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


class ThreadGroup:
    """The threads one device started (workers, deadline monitor, workgroup helpers), all
    daemons: they never hold up interpreter exit, and a device collected without `shutdown`
    stops them from its finalizer."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def start(self, target: Callable[[], None], name: str) -> threading.Thread:
        thread = threading.Thread(target=target, name=name, daemon=True)
        with self._lock:
            # Threads that ended are dropped here, so a group never grows past what it runs.
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        _THREADS.add(thread)
        thread.start()
        return thread

    @property
    def alive(self) -> int:
        with self._lock:
            threads = list(self._threads)
        return sum(t.is_alive() for t in threads)

    def join(self, timeout_s: float | None = None) -> None:
        """Waits for every thread of the group to end (each for at most `timeout_s`), except the
        calling thread itself."""
        with self._lock:
            threads = list(self._threads)
        me = threading.current_thread()
        for thread in threads:
            if thread is not me:
                thread.join(timeout_s)


def threads_alive() -> int:
    """Threads any device started that have not ended, whether or not their device is alive."""
    return sum(t.is_alive() for t in list(_THREADS))
