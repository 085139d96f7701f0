"""The local-sync device: every queue operation runs inline on the caller's thread, after its
wait fence is reached. Cheapest possible submission (no thread hand-off) and deterministic, which
makes it the reference for the asynchronous drivers.

The inline wait is bounded by `LocalSyncOptions.wait_timeout_s` and by the calling thread's
deadline (deadline.py), and Ctrl-C interrupts it; whichever ends it fails the operation's signal
fence too, so nothing queued behind it waits for a signal that cannot come."""

from __future__ import annotations

from typing import Sequence

from weir.errors import DeadlineExceeded, RuntimeFault, WaitCycleError
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.command_execution import execute_command_buffers
from weir.runtime.hal.drivers.local_sync.options import LocalSyncOptions
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.local_device import LocalDevice, QueueWork
from weir.runtime.hal.queue_work import failure_message, run_work
from weir.runtime.hal.statistics import DeviceStatistics, ExecutingOperation, Shard


class LocalSyncDevice(LocalDevice):
    def __init__(self, options: LocalSyncOptions | None = None) -> None:
        super().__init__()
        self.options = options or LocalSyncOptions()

    @property
    def driver_name(self) -> str:
        return "local-sync"

    def _fail(self, signal: Fence, message: str) -> None:
        self._statistics.record_failed()
        signal.fail(message)

    def _wait(self, wait: Fence | None, signal: Fence, what: str) -> bool:
        """False when the wait fence failed (the signal fence then carries that failure)."""
        if wait is None:
            return True
        if not isinstance(wait, Fence):
            self._statistics.record_failed()
            raise RuntimeFault(f"{what}: wait/signal must be fences")
        try:
            reached = wait.wait(self.options.wait_timeout_s,
                                f"waiting inline for the wait fence of {what}")
        except (DeadlineExceeded, WaitCycleError) as e:
            # This wait's own end, not an upstream failure: the caller hears of it directly.
            self._fail(signal, str(e))
            raise
        except RuntimeFault as e:
            self._fail(signal, str(e))
            return False
        except BaseException:  # Ctrl-C: the operation never runs, so nothing may wait for it
            self._fail(signal, f"{what}: interrupted while waiting for its wait fence")
            raise
        if not reached:
            message = (f"{what}: the wait fence was not reached within "
                       f"{self.options.wait_timeout_s:g} s; local-sync runs queue operations "
                       f"inline, so only another thread could have signalled it")
            self._fail(signal, message)
            raise RuntimeFault(message)
        return True

    def queue_execute(self, wait: Fence | None, signal: Fence,
                      command_buffers: Sequence[CommandBuffer],
                      bindings: tuple[Buffer, ...] | None = None) -> None:
        """A synchronous call's execute (nothing to wait for) runs right here, without the
        closure, the frames and the per-operation objects of the general path: the same counts,
        the same in-flight record, the same messages, for about half the host time."""
        if not (wait is None or type(wait) is Fence and not wait._points) \
                or type(signal) is not Fence:
            super().queue_execute(wait, signal, command_buffers, bindings)
            return
        failure = self._execute_inline(command_buffers, bindings)
        if failure is not None:
            self._fail(signal, failure)
            return
        self._statistics.shard().completed += 1
        try:
            signal.signal()
        except RuntimeFault:
            self._statistics.record_signal_refused()
            raise

    # Everything already runs on the calling thread.
    queue_execute_awaited = queue_execute

    def execute_now(self, wait: Fence | None, command_buffers: Sequence[CommandBuffer],
                    bindings: tuple[Buffer, ...] | None = None) -> bool:
        """`queue_execute` with nothing to wait for and no fence to signal: the failure the
        fence would carry is raised instead."""
        if not (wait is None or type(wait) is Fence and not wait._points):
            return False
        failure = self._execute_inline(command_buffers, bindings)
        if failure is not None:
            self._statistics.record_failed()
            raise RuntimeFault(failure)
        self._statistics.shard().completed += 1
        return True

    def _inline_replay_op(self, statistics: DeviceStatistics, shard: Shard,
                          cb: CommandBuffer) -> ExecutingOperation:
        return _inline_operation(statistics, shard.inline_ops, _EXECUTE)

    def _execute_inline(self, command_buffers: Sequence[CommandBuffer],
                        bindings: tuple[Buffer, ...] | None) -> str | None:
        """Counts the execute as submitted and runs it (in the in-flight record meanwhile);
        its failure message, or None. The caller counts the outcome."""
        statistics = self._statistics
        shard = statistics.shard()
        shard.submitted["execute"] += 1
        op = _inline_operation(statistics, shard.inline_ops, _EXECUTE)
        statistics.record_started(op)
        try:
            execute_command_buffers(tuple(command_buffers), statistics, self._workgroups,
                                    bindings)
        except Exception as e:
            return failure_message(_EXECUTE, e)
        finally:  # before the signal, as on local-task
            statistics.record_ended(op)
        return None

    def _enqueue(self, what: str, wait: Fence | None, signal: Fence, work: QueueWork) -> None:
        if not isinstance(signal, Fence):
            self._statistics.record_failed()
            raise RuntimeFault(f"{what}: the signal fence is missing")
        if wait is not None and not self._wait(wait, signal, what):
            return
        if work is not None:
            op = _inline_operation(self._statistics, self._statistics.shard().inline_ops, what)
            self._statistics.record_started(op)
            try:
                failure = run_work(what, work)
            finally:  # before the signal, as on local-task
                self._statistics.record_ended(op)
            if failure is not None:
                self._fail(signal, failure)
                return
        self._statistics.record_completed()
        try:
            signal.signal()
        except RuntimeFault:
            self._statistics.record_signal_refused()
            raise


_EXECUTE = "queue execute"


def _inline_operation(statistics: DeviceStatistics, made: dict[str, object],
                      what: str) -> _InlineOperation:
    """The in-flight record's entry for work this thread runs inline: one per thread and kind,
    made once (`made` is the thread's own), since a thread runs one inline operation at a
    time; a fresh one in the case that never arises, work that submits more work inline."""
    op = made.get(what)
    if op is None:
        op = made[what] = _InlineOperation(what)
    elif op in statistics._executing:
        op = _InlineOperation(what)
    return op  # type: ignore[return-value]


class _InlineOperation:
    """What the in-flight record holds while local-sync runs an operation's work inline: an
    identity, and a description only asked for when the operation is part of a new peak (peaks
    above 1 only when several host threads submit to one device at once)."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def describe(self) -> str:
        """`queue execute on local-sync`: the work is a closure, so no dispatch names."""
        return f"{self.what} on local-sync"
