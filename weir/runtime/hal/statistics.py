"""Per-device counters, so multi-device programs can be tested from the runtime ("the first
dispatch ran on device_a's queue, the second on device_b's").

Counters, never logs: a program run 10,000 times grows no memory here, except one entry per
distinct entry point actually dispatched. One lock per device guards them because local-task
worker threads (and whichever thread settles a fence) update them concurrently; each update is a
few integer additions under that lock, cheap next to any queue operation."""

from __future__ import annotations

import threading
from typing import Literal, TypedDict

from weir.runtime.hal.executable import Executable

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
        self._lock = threading.Lock()
        self._submitted: dict[str, int] = dict.fromkeys(QUEUE_OP_KINDS, 0)
        self._completed = 0
        self._failed = 0
        self._command_buffers = 0
        self._dispatches = 0
        self._by_entry_point: dict[str, int] = {}

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

    def snapshot(self) -> StatisticsSnapshot:
        with self._lock:
            return StatisticsSnapshot(
                queue_submitted=dict(self._submitted),
                queue_completed=self._completed,
                queue_failed=self._failed,
                command_buffers_executed=self._command_buffers,
                dispatches_executed=self._dispatches,
                dispatches_by_entry_point=dict(self._by_entry_point),
            )

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

    def __repr__(self) -> str:
        s = self.snapshot()
        return (f"<hal.device_statistics submitted={sum(s['queue_submitted'].values())} "
                f"completed={s['queue_completed']} failed={s['queue_failed']} "
                f"dispatches={s['dispatches_executed']}>")
