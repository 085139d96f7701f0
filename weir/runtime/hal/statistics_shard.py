"""The counts one thread makes on one device (statistics.py says why counting is per thread).

An execute that replays a memoized batch inline (`LocalDevice.execute_indirect_now`, a small
program's every call) is counted with one dict increment: the number of such replays of each
batch's entry-point counts, which stands for a completed execute, a command buffer run to its
end and the batch's dispatches by entry point. Readers expand it (`executed`, `entry_points`),
so every snapshot is exactly what counting each of those one by one would give. A batch that an
execute counted on its own replays (local-task's) is one increment too, in `batches`: its
command buffer and its dispatches. Batches are
keyed by their counts, not by identity: equal batches (a module loaded again) share a key, so
the dict grows with the distinct entry-point sets a program replays, never with its calls."""

from __future__ import annotations

import threading
from typing import Literal

QueueOpKind = Literal["execute", "copy", "fill", "alloca", "dealloca", "barrier"]
QUEUE_OP_KINDS: tuple[QueueOpKind, ...] = ("execute", "copy", "fill", "alloca", "dealloca",
                                           "barrier")
# A batch's entry points, each once, with its number of dispatches (`NativeBatch.counts`).
EntryCounts = tuple[tuple[str, int], ...]


class Shard:
    """The counts one thread made on one device: written by that thread alone, so without a
    lock; `owner` tells whether the thread still lives (the retired shard has none)."""

    __slots__ = ("owner", "submitted", "completed", "failed", "command_buffers", "dispatches",
                 "by_entry_point", "replays", "batches", "inline_ops")

    def __init__(self, owner: threading.Thread | None) -> None:
        self.owner = owner
        self.submitted: dict[str, int] = dict.fromkeys(QUEUE_OP_KINDS, 0)
        self.completed = 0
        self.failed = 0
        self.command_buffers = 0
        self.dispatches = 0
        self.by_entry_point: dict[str, int] = {}
        # Executes that replayed a batch with these counts to its end (see the top).
        self.replays: dict[EntryCounts, int] = {}
        # Batches with these counts replayed to their end by executes counted on their own.
        self.batches: dict[EntryCounts, int] = {}
        # local-sync's in-flight records of this thread, one per kind of work, made once
        # (see LocalSyncDevice): a thread runs one inline operation at a time.
        self.inline_ops: dict[str, object] = {}

    def fold(self, other: Shard) -> None:
        for kind, n in other.submitted.items():
            self.submitted[kind] += n
        self.completed += other.completed
        self.failed += other.failed
        self.command_buffers += other.command_buffers
        self.dispatches += other.dispatches
        for name, n in other.by_entry_point.items():
            self.by_entry_point[name] = self.by_entry_point.get(name, 0) + n
        for mine, theirs in ((self.replays, other.replays), (self.batches, other.batches)):
            for counts, n in theirs.items():
                mine[counts] = mine.get(counts, 0) + n

    def count_batch(self, counts: EntryCounts) -> None:
        """A command buffer whose one batch (`counts`: (entry point, dispatches) pairs, each
        entry point once) ran to its end: one increment, whatever its dispatches."""
        batches = self.batches
        batches[counts] = batches.get(counts, 0) + 1

    def executed(self) -> tuple[int, int, int]:
        """Completed executes, command buffers and dispatches, the replays expanded. Read from
        any thread: the replays are copied in one C call, safe against the owner adding one."""
        completed, command_buffers, dispatches = self.completed, self.command_buffers, \
            self.dispatches
        for counts, n in list(self.replays.items()):
            completed += n
            command_buffers += n
            dispatches += n * sum(k for _, k in counts)
        for counts, n in list(self.batches.items()):
            command_buffers += n
            dispatches += n * sum(k for _, k in counts)
        return completed, command_buffers, dispatches

    def entry_points(self, total: dict[str, int]) -> None:
        """Adds this shard's dispatches by entry point to `total`, the replays expanded."""
        for name, n in list(self.by_entry_point.items()):
            total[name] = total.get(name, 0) + n
        for runs in (self.replays, self.batches):
            for counts, times in list(runs.items()):
                for name, n in counts:
                    total[name] = total.get(name, 0) + n * times
