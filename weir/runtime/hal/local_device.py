"""What the local drivers (local-sync, local-task) share: host memory, every executable format
runs on the host CPU, and each queue operation is one named piece of work (or none, for the
operations that only order) handed to the driver's `_enqueue`. Written once here so both drivers
name their operations alike ("queue fill: ...") and differ only in when and where work runs."""

from __future__ import annotations

from abc import abstractmethod
from typing import Callable, Sequence

from weir.errors import RuntimeFault, WeirError
from weir.runtime.executables.native_replay import BatchFault, NativeBatch
from weir.runtime.hal.buffer import Allocator, Buffer
from weir.runtime.hal.buffer_pool import PoolingAllocator
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.command_execution import copy_bytes, execute_command_buffers, fill_bytes
from weir.runtime.hal.command_replay import ReusablePlan, batch_failure
from weir.runtime.hal.device import Device
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.queue_work import failure_message
from weir.runtime.hal.statistics import (
    QUEUE_OP_KINDS,
    DeviceStatistics,
    ExecutingOperation,
    QueueOpKind,
    Shard,
)
from weir.runtime.hal.workgroups import InlineWorkgroups, WorkgroupRunner

# The work of a queue operation; None for operations that only order (alloca's signal, dealloca,
# barrier).
QueueWork = Callable[[], object] | None

# Each kind's name in messages ("queue fill: ..."), spelled once instead of on every submission.
_WHAT: dict[QueueOpKind, str] = {kind: f"queue {kind}" for kind in QUEUE_OP_KINDS}
_EXECUTE = _WHAT["execute"]


class LocalDevice(Device):
    # Set by a driver that shut down (local-task): `execute_indirect_now` leaves the execute to
    # `execute_now`, which fails it.
    _stopped = False

    def __init__(self) -> None:
        super().__init__()
        self._allocator = PoolingAllocator(counter=self._statistics.buffers)
        self._statistics.count_pool(self._allocator)
        # Runs the workgroups of each dispatch; local-task replaces it with a parallel one.
        self._workgroups: WorkgroupRunner = InlineWorkgroups()

    @property
    def allocator(self) -> Allocator:
        return self._allocator

    def shutdown(self, wait: bool = True, timeout_s: float | None = None) -> None:
        """Frees the pooled memory; a driver with threads stops them first."""
        self._allocator.release_pooled()

    def can_execute(self, executable_format: str) -> bool:
        # Every loader weir has today runs on the host CPU.
        return True

    @abstractmethod
    def _enqueue(self, what: str, wait: Fence | None, signal: Fence, work: QueueWork) -> None:
        """Runs `work` once `wait` is reached, then signals `signal`; a failed wait or failing
        work fails `signal` with the original message instead. Either way the outcome is counted
        in `self.statistics` just before `signal` settles (or the call raises)."""

    def _submit(self, kind: QueueOpKind, wait: Fence | None, signal: Fence,
                work: QueueWork) -> None:
        """Counts the submission, then hands the operation to the driver. Drivers count its
        completion or failure just before they settle `signal`."""
        self._statistics.record_submitted(kind)
        self._enqueue(_WHAT[kind], wait, signal, work)

    def queue_alloca(self, wait: Fence | None, signal: Fence, size: int) -> Buffer:
        try:
            buffer = self._allocator.allocate(size)
        except WeirError as e:
            self._statistics.record_submitted("alloca")
            self._statistics.record_failed()
            if isinstance(signal, Fence):
                signal.fail(e)
            raise  # there is no buffer to return
        self._submit("alloca", wait, signal, None)
        return buffer

    def queue_dealloca(self, wait: Fence | None, signal: Fence, buffer: Buffer) -> None:
        # Host memory is reclaimed when the last reference goes; ordering is all that matters.
        self._submit("dealloca", wait, signal, None)

    def queue_execute(self, wait: Fence | None, signal: Fence,
                      command_buffers: Sequence[CommandBuffer],
                      bindings: tuple[Buffer, ...] | None = None) -> None:
        buffers = tuple(command_buffers)  # the caller may reuse its list after we return
        # Captured instead of self: pending work must not pin the device.
        stats, runner = self._statistics, self._workgroups
        self._submit("execute", wait, signal,
                     lambda: execute_command_buffers(buffers, stats, runner, bindings))

    def execute_indirect_now(self, wait: Fence | None, cb: CommandBuffer,
                             bindings: tuple[Buffer, ...]) -> bool:
        """The usual case, a plan of one batch for this thread alone (not one to share over
        threads) that the table fits, written out: a call of a small program is mostly the
        layers of `execute_now`, which takes every other case. The same counts, in-flight record
        and messages as `execute_now`."""
        plan = cb.plans.get(self._workgroups.concurrency)
        inline_words = plan.inline_words if type(plan) is ReusablePlan else None
        if inline_words is None or len(bindings) != cb.binding_count or self._stopped \
                or not (wait is None or type(wait) is Fence and not wait._points):
            return self.execute_now(wait, (cb,), bindings)
        words = inline_words(bindings)
        if words is None:  # the general path says which buffer does not fit
            return self.execute_now(wait, (cb,), bindings)
        batch: NativeBatch = plan.single  # type: ignore[union-attr, assignment]
        statistics = self._statistics
        shard = statistics.shard()
        shard.submitted["execute"] += 1
        op = self._inline_replay_op(statistics, shard, cb)
        executing = statistics._executing  # `record_started` and `record_ended`, written out
        executing[op] = None
        if len(executing) > statistics._peak:
            statistics._new_peak()
        try:
            batch.run_words(words)
        except BatchFault as fault:
            ran: list[str] = []
            error = batch_failure(batch, fault, ran)  # named by its dispatch, as on any path
            statistics.record_executed(ran, 0)
            executing.pop(op, None)  # ended before the failure counts, as `execute_now` orders
            statistics.record_failed()
            raise RuntimeFault(failure_message(_EXECUTE, error)) from None
        finally:
            executing.pop(op, None)
        # Completed, with its command buffer and dispatches, in one count (statistics_shard.py).
        replays, counts = shard.replays, batch.counts
        replays[counts] = replays.get(counts, 0) + 1
        return True

    def _inline_replay_op(self, statistics: DeviceStatistics, shard: Shard,
                          cb: CommandBuffer) -> ExecutingOperation:
        """What the in-flight record holds while `execute_indirect_now` runs `cb`: the
        driver's own record of an execute it runs inline."""
        raise NotImplementedError

    def queue_copy(self, wait: Fence | None, signal: Fence, src: Buffer, src_offset: int,
                   dst: Buffer, dst_offset: int, length: int) -> None:
        self._submit("copy", wait, signal,
                     lambda: copy_bytes(src, src_offset, dst, dst_offset, length))

    def queue_fill(self, wait: Fence | None, signal: Fence, dst: Buffer, offset: int, length: int,
                   pattern: bytes) -> None:
        self._submit("fill", wait, signal, lambda: fill_bytes(dst, offset, length, pattern))

    def queue_barrier(self, wait: Fence | None, signal: Fence) -> None:
        self._submit("barrier", wait, signal, None)
