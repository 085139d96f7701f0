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
distinct entry point actually dispatched and per distinct batch replayed inline
(statistics_shard.py), and one small shard per thread that uses the device (the shards of
threads that ended are folded into one).

No lock on the hot path: every call of a program counts several times, and on local-sync a lock
round trip per count was a measurable part of a call. Each thread counts into a shard of its own
(reached through a `threading.local`), which only that thread writes; readers add the shards up.
The in-flight record is a dict whose single operations are atomic; the lock is taken only when a
new peak is reached (rare: the peak only grows), when a thread makes its shard, and by readers.
Read while other threads count, a snapshot is not taken at one instant, but it is never
inconsistent: completions are read before submissions, so `queue_pending` is never negative."""

from __future__ import annotations

import threading
import weakref
from typing import Protocol, TypedDict

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
from weir.runtime.hal.statistics_shard import QUEUE_OP_KINDS, QueueOpKind, Shard

__all__ = ["QUEUE_OP_KINDS", "DeviceStatistics", "ExecutingOperation", "QueueOpKind",
           "RuntimeStatistics", "Shard", "StatisticsSnapshot", "dispatch_name", "dispatch_names",
           "runtime_statistics"]



class StatisticsSnapshot(TypedDict):
    """Plain values (read while other threads count: completions before submissions, so the
    pending count is never negative)."""

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
    settle also sees the count. Once no thread is counting:
    sum(submitted) == completed + failed + pending."""

    def __init__(self) -> None:
        # The device's live objects: its allocator counts buffers into `buffers`, its threads
        # start through `threads`, and `count_pool` names the pool whose bytes to report.
        self.buffers: LiveObjects = buffer_counter()
        self.threads = ThreadGroup()
        self._pool: _Pool | None = None
        _ALL_STATISTICS.add(self)
        # Guards the list of shards, the peak, and nothing a count touches.
        self._lock = threading.Lock()
        self._local = threading.local()
        self._shards: list[Shard] = []
        self._retired = Shard(None)  # what threads that ended counted
        # The operations executing now, in start order (a dict as an ordered set).
        self._executing: dict[ExecutingOperation, None] = {}
        self._peak = 0
        self._peak_ops: tuple[str, ...] = ()

    def shard(self) -> Shard:
        """The calling thread's counts (drivers write them directly on their hottest path)."""
        try:
            return self._local.shard  # type: ignore[no-any-return]
        except AttributeError:
            return self._new_shard()

    def _new_shard(self) -> Shard:
        shard = Shard(threading.current_thread())
        with self._lock:
            # Threads that ended count no more: fold their shards, so a program that starts a
            # thread per call keeps one shard per live thread.
            live = []
            for s in self._shards:
                if s.owner is not None and s.owner.is_alive():
                    live.append(s)
                else:
                    self._retired.fold(s)
            live.append(shard)
            self._shards = live
        self._local.shard = shard
        return shard

    def _all_shards(self) -> list[Shard]:
        with self._lock:
            return [self._retired, *self._shards]

    # ------------------------------------------------------------------------------- reading

    @property
    def queue_submitted(self) -> dict[str, int]:
        total = dict.fromkeys(QUEUE_OP_KINDS, 0)
        for s in self._all_shards():
            for kind, n in s.submitted.items():
                total[kind] += n
        return total

    @property
    def queue_completed(self) -> int:
        return sum(s.executed()[0] for s in self._all_shards())

    @property
    def queue_failed(self) -> int:
        return sum(s.failed for s in self._all_shards())

    @property
    def command_buffers_executed(self) -> int:
        return sum(s.executed()[1] for s in self._all_shards())

    @property
    def dispatches_executed(self) -> int:
        return sum(s.executed()[2] for s in self._all_shards())

    @property
    def dispatches_by_entry_point(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for s in self._all_shards():
            s.entry_points(total)
        return total

    @property
    def queue_pending(self) -> int:
        shards = self._all_shards()
        settled = sum(s.executed()[0] + s.failed for s in shards)  # before the submissions
        return sum(sum(s.submitted.values()) for s in shards) - settled

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
        shards = self._all_shards()
        executed = [s.executed() for s in shards]  # settled before submitted: see the top
        completed = sum(e[0] for e in executed)
        failed = sum(s.failed for s in shards)
        command_buffers = sum(e[1] for e in executed)
        dispatches = sum(e[2] for e in executed)
        submitted = dict.fromkeys(QUEUE_OP_KINDS, 0)
        by_entry_point: dict[str, int] = {}
        for s in shards:
            for kind, n in s.submitted.items():
                submitted[kind] += n
            s.entry_points(by_entry_point)
        with self._lock:
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
        self.shard().submitted[kind] += 1

    def record_completed(self) -> None:
        self.shard().completed += 1

    def record_failed(self) -> None:
        self.shard().failed += 1

    def record_signal_refused(self) -> None:
        """An operation counted as completed could not signal its fence after all (someone failed
        the semaphore meanwhile): it failed instead. The completion goes first, so a reader in
        between sees it pending rather than settled twice."""
        shard = self.shard()
        shard.completed -= 1
        shard.failed += 1

    def record_executed(self, dispatches: list[str], command_buffers: int) -> None:
        """The dispatches (by `dispatch_name`) that returned and the command buffers that ran to
        their end in one queue execute, counted together."""
        shard = self.shard()
        shard.command_buffers += command_buffers
        shard.dispatches += len(dispatches)
        by_entry_point = shard.by_entry_point
        for name in dispatches:
            by_entry_point[name] = by_entry_point.get(name, 0) + 1

    def record_started(self, op: ExecutingOperation) -> None:
        """`op`'s work starts executing now. Drivers call it only for operations with work
        (barriers, alloca's signal and dealloca do not execute anything) and pair it with
        `record_ended`. One dict store (atomic) unless the peak grows."""
        executing = self._executing
        executing[op] = None
        if len(executing) > self._peak:
            self._new_peak()

    def _new_peak(self) -> None:
        with self._lock:
            running = tuple(self._executing)  # one C-level copy, safe against other threads
            if len(running) > self._peak:
                self._peak = len(running)
                self._peak_ops = tuple(_describe(o) for o in running)

    def record_ended(self, op: ExecutingOperation) -> None:
        """`op`'s work ended, whether it succeeded or failed. Drivers call it before they settle
        the signal fence: an operation that the signal starts never overlaps its producer."""
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
