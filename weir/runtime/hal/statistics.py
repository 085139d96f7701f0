"""Per-device counters, so multi-device programs can be tested from the runtime ("the first
dispatch ran on device_a's queue, the second on device_b's"), and live-object counts (buffers,
pooled memory, pending queue operations, threads; per device and for the whole process with
`runtime_statistics()`), so a leak shows in the runtime's own numbers (live_objects.py says how
they are counted at next to no cost).

The device also records which queue operations are executing (their work started on a worker, or
inline, and has not ended) and the most that ever executed at once, with the operations that made
up that peak when it was first reached: tests prove that independent work overlapped from the
runtime's own record instead of from wall-clock timing. Only the operations executing now and the
peak's descriptions are kept.

Counters, never logs: a program run 10,000 times grows no memory here, except one entry per
distinct entry point actually dispatched. One lock per device guards them because local-task
worker threads (and whichever thread settles a fence) update them concurrently; each update is a
few integer additions under that lock, cheap next to any queue operation."""

from __future__ import annotations

import threading
import weakref
from typing import Literal, Protocol, TypedDict

from weir.runtime.hal.executable import Executable
from weir.runtime.hal.live_objects import (
    DEVICES,
    SEMAPHORES,
    LiveObjects,
    ThreadGroup,
    all_buffer_counters,
    buffer_counter,
    threads_alive,
)

QueueOpKind = Literal["execute", "copy", "fill", "alloca", "dealloca", "barrier"]
QUEUE_OP_KINDS: tuple[QueueOpKind, ...] = ("execute", "copy", "fill", "alloca", "dealloca",
                                           "barrier")


class StatisticsSnapshot(TypedDict):
    """Plain values, taken together under the lock (so they are consistent with each other)."""

    queue_submitted: dict[str, int]  # by kind; every kind present, 0 if never submitted
    queue_completed: int  # signal fence signalled
    queue_failed: int  # signal fence failed (failed wait, failing work, deadline, shutdown)
    command_buffers_executed: int  # ran every command to completion
    dispatches_executed: int
    dispatches_by_entry_point: dict[str, int]  # keys: see `dispatch_name`
    # Live now (they go down again), unlike the totals above:
    queue_pending: int  # submitted and not yet completed or failed
    buffers_alive: int  # made by the device's allocator and still referenced
    buffer_bytes_alive: int
    pooled_bytes: int  # memory of dead buffers the allocator keeps for reuse (not alive)
    threads_alive: int  # threads the device started that have not ended
    in_flight: int  # queue operations whose work is executing now (see `record_started`)
    in_flight_peak: int  # the most ever executing at once on this device
    in_flight_peak_ops: tuple[str, ...]  # what executed when the peak was first reached, by start


class RuntimeStatistics(TypedDict):
    """What the whole process holds (`runtime_statistics()`): the sum over every device still
    alive, plus what belongs to no device or outlived its device."""

    devices_alive: int
    queue_pending: int
    semaphores_alive: int
    buffers_alive: int  # every allocator's, including buffers made without a device
    buffer_bytes_alive: int
    pooled_bytes: int
    threads_alive: int  # every thread a device started, even one of a device since collected


class _Pool(Protocol):
    @property
    def pooled_bytes(self) -> int: ...


class ExecutingOperation(Protocol):
    """A queue operation as the in-flight record holds it: by identity while it executes, and
    described only when it is part of a new peak (rare: the peak only grows)."""

    def describe(self) -> str: ...


def _describe(op: ExecutingOperation) -> str:
    """Runs under the statistics lock on a worker's path: a failing `describe` must neither
    escape into the worker (the operation would never settle) nor lose the peak."""
    try:
        return op.describe()
    except Exception as e:
        return f"{type(op).__name__} (describe failed: {type(e).__name__}: {e})"


def dispatch_name(executable: Executable, entry: int) -> str:
    """The readable key of one entry point: `executable::entry` when the executable knows its
    module name, else the entry point's own name. An unnamed entry point falls back to its
    ordinal (`executable#2`, or the executable's class name when even that is unknown)."""
    names = executable.entry_points
    entry_name = names[entry] if 0 <= entry < len(names) else ""
    exe_name = executable.name
    if entry_name:
        return entry_name if exe_name is None else f"{exe_name}::{entry_name}"
    return f"{exe_name or type(executable).__name__}#{entry}"


def dispatch_names(executable: Executable) -> tuple[str, ...]:
    """`dispatch_name` of every entry point, computed once per executable (it keeps them): its
    name is set when it is loaded, before anything dispatches it."""
    names = executable._dispatch_names
    if names is None:
        names = tuple(dispatch_name(executable, entry)
                      for entry in range(len(executable.entry_points)))
        executable._dispatch_names = names
    return names


class DeviceStatistics:
    """The live counters of one device (`Device.statistics`). Read single values through the
    properties or all of them at once with `snapshot()`; the `record_*` methods are for drivers.

    An operation counts as submitted when its queue method is called, and as completed or failed
    just before its signal fence is signalled or failed, so a host that has seen the fence
    settle also sees the count. At any time: sum(submitted) == completed + failed + pending."""

    def __init__(self) -> None:
        # The device's live objects: its allocator counts buffers into `buffers`, its threads
        # start through `threads`, and `count_pool` names the pool whose bytes to report.
        self.buffers: LiveObjects = buffer_counter()
        self.threads = ThreadGroup()
        self._pool: _Pool | None = None
        _ALL_STATISTICS.add(self)
        self._lock = threading.Lock()
        self._submitted: dict[str, int] = dict.fromkeys(QUEUE_OP_KINDS, 0)
        self._completed = 0
        self._failed = 0
        self._command_buffers = 0
        self._dispatches = 0
        self._by_entry_point: dict[str, int] = {}
        # The operations executing now, in start order (a dict as an ordered set).
        self._executing: dict[ExecutingOperation, None] = {}
        self._peak = 0
        self._peak_ops: tuple[str, ...] = ()

    # ------------------------------------------------------------------------------- reading

    @property
    def queue_submitted(self) -> dict[str, int]:
        with self._lock:
            return dict(self._submitted)

    @property
    def queue_completed(self) -> int:
        return self._completed

    @property
    def queue_failed(self) -> int:
        return self._failed

    @property
    def command_buffers_executed(self) -> int:
        return self._command_buffers

    @property
    def dispatches_executed(self) -> int:
        return self._dispatches

    @property
    def dispatches_by_entry_point(self) -> dict[str, int]:
        with self._lock:
            return dict(self._by_entry_point)

    @property
    def queue_pending(self) -> int:
        with self._lock:
            return sum(self._submitted.values()) - self._completed - self._failed

    @property
    def pooled_bytes(self) -> int:
        return 0 if self._pool is None else self._pool.pooled_bytes

    @property
    def in_flight(self) -> int:
        return len(self._executing)

    @property
    def in_flight_peak(self) -> int:
        return self._peak

    @property
    def in_flight_peak_ops(self) -> tuple[str, ...]:
        return self._peak_ops

    def snapshot(self) -> StatisticsSnapshot:
        with self._lock:
            submitted = dict(self._submitted)
            completed, failed = self._completed, self._failed
            command_buffers, dispatches = self._command_buffers, self._dispatches
            by_entry_point = dict(self._by_entry_point)
            in_flight, peak, peak_ops = len(self._executing), self._peak, self._peak_ops
        return StatisticsSnapshot(
            queue_submitted=submitted,
            queue_completed=completed,
            queue_failed=failed,
            command_buffers_executed=command_buffers,
            dispatches_executed=dispatches,
            dispatches_by_entry_point=by_entry_point,
            queue_pending=sum(submitted.values()) - completed - failed,
            buffers_alive=self.buffers.count,
            buffer_bytes_alive=self.buffers.nbytes,
            pooled_bytes=self.pooled_bytes,
            threads_alive=self.threads.alive,
            in_flight=in_flight,
            in_flight_peak=peak,
            in_flight_peak_ops=peak_ops,
        )

    def count_pool(self, pool: _Pool) -> None:
        """Reports `pool.pooled_bytes` as this device's pooled memory (drivers call it once)."""
        self._pool = pool

    # ------------------------------------------------------------------------------- recording

    def record_submitted(self, kind: QueueOpKind) -> None:
        with self._lock:
            self._submitted[kind] += 1

    def record_completed(self) -> None:
        with self._lock:
            self._completed += 1

    def record_failed(self) -> None:
        with self._lock:
            self._failed += 1

    def record_signal_refused(self) -> None:
        """An operation counted as completed could not signal its fence after all (someone failed
        the semaphore meanwhile): it failed instead."""
        with self._lock:
            self._completed -= 1
            self._failed += 1

    def record_executed(self, dispatches: list[str], command_buffers: int) -> None:
        """The dispatches (by `dispatch_name`) that returned and the command buffers that ran to
        their end in one queue execute, counted together: one lock round trip per execute
        rather than one per dispatch."""
        with self._lock:
            self._command_buffers += command_buffers
            self._dispatches += len(dispatches)
            by_entry_point = self._by_entry_point
            for name in dispatches:
                by_entry_point[name] = by_entry_point.get(name, 0) + 1

    def record_started(self, op: ExecutingOperation) -> None:
        """`op`'s work starts executing now. Drivers call it only for operations with work
        (barriers, alloca's signal and dealloca do not execute anything) and pair it with
        `record_ended`."""
        with self._lock:
            executing = self._executing
            executing[op] = None
            if len(executing) > self._peak:
                self._peak = len(executing)
                self._peak_ops = tuple(_describe(o) for o in executing)

    def record_ended(self, op: ExecutingOperation) -> None:
        """`op`'s work ended, whether it succeeded or failed. Drivers call it before they settle
        the signal fence: an operation that the signal starts never overlaps its producer."""
        with self._lock:
            self._executing.pop(op, None)

    def __repr__(self) -> str:
        s = self.snapshot()
        return (f"<hal.device_statistics submitted={sum(s['queue_submitted'].values())} "
                f"completed={s['queue_completed']} failed={s['queue_failed']} "
                f"pending={s['queue_pending']} dispatches={s['dispatches_executed']} "
                f"buffers={s['buffers_alive']} threads={s['threads_alive']}>")


# Every device's statistics while the device, or work it ran that still holds them, is alive.
_ALL_STATISTICS: weakref.WeakSet[DeviceStatistics] = weakref.WeakSet()


def runtime_statistics() -> RuntimeStatistics:
    """The live objects of the whole process, counted by the runtime itself: what a leak check
    compares before and after a workload (`weir-run-module --print_statistics` prints them).
    Process-wide rather than per instance, because semaphores and buffers made without a device
    belong to no instance. Each number is exact when read; read while other threads run work,
    the numbers are not taken at one instant together."""
    devices = list(_ALL_STATISTICS)
    buffers = all_buffer_counters()
    return RuntimeStatistics(
        devices_alive=len(DEVICES),
        queue_pending=sum(d.queue_pending for d in devices),
        semaphores_alive=SEMAPHORES.count,
        buffers_alive=sum(c.count for c in buffers),
        buffer_bytes_alive=sum(c.nbytes for c in buffers),
        pooled_bytes=sum(d.pooled_bytes for d in devices),
        threads_alive=threads_alive(),
    )
