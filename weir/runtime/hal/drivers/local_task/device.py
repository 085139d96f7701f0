"""The local-task device: every queue operation returns at once and runs when its wait fence is
reached. Operations are ordered only by their fences (no implicit FIFO), as in IREE.

- Readiness comes from `Semaphore.on_reached` callbacks, never from a thread blocked in a wait.
- Work (execute, copy, fill) runs on a fixed pool of worker threads. Operations without work
  (alloca's signal, dealloca, barrier) signal on the thread that made them ready: waking a
  worker costs 50-100 µs (DESIGN.md §12) and there is nothing for it to do.
- One monitor thread fails operations whose wait fence is not reached within
  `wait_timeout_s`, so a wait cycle ends in an error rather than a hang. Sooner than that, a
  blocked host wait finds cycles among the waiting operations (hal/wait_cycles.py: each one
  that waits is registered with the semaphores it signals) and raises `WaitCycleError`.
- Every failure, including a failed wait, is reported through the signal fence with the
  original message."""

from __future__ import annotations

import itertools
import weakref
from typing import Callable, Sequence

from weir.errors import RuntimeFault
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.drivers.local_task.deadlines import DeadlineMonitor
from weir.runtime.hal.drivers.local_task.execute_work import (
    ExecuteWork,
    recorded_dispatch_names,
)
from weir.runtime.hal.drivers.local_task.operation import Operation
from weir.runtime.hal.drivers.local_task.options import LocalTaskOptions
from weir.runtime.hal.drivers.local_task.workers import WorkerPool
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.local_device import LocalDevice, QueueWork
from weir.runtime.hal.queue_work import run_work
from weir.runtime.hal.statistics import DeviceStatistics, ExecutingOperation, Shard
from weir.runtime.hal.workgroups import ParallelWorkgroups

_SHUTDOWN = "{what}: device shut down before the operation ran"
_EXECUTE = "queue execute"
_ids = itertools.count()


def _stop(pool: WorkerPool, monitor: DeadlineMonitor, workgroups: ParallelWorkgroups) -> None:
    """Stops the threads without joining: also the finalizer of a collected device, which may
    run on one of those very threads."""
    pool.stop()
    workgroups.stop()
    for op in monitor.stop():
        op.expire(_SHUTDOWN.format(what=op.what))


class LocalTaskDevice(LocalDevice):
    def __init__(self, options: LocalTaskOptions | None = None) -> None:
        super().__init__()
        self.options = options or LocalTaskOptions()
        name = f"weir-local-task-{next(_ids)}"
        self._name = name  # names its operations in wait-cycle reports
        threads = self._statistics.threads  # every thread below: counted, joined by shutdown
        self._pool = WorkerPool(self.options.worker_count, f"{name}-worker", _SHUTDOWN, threads)
        self._monitor = DeadlineMonitor(self.options.wait_timeout_s, f"{name}-deadlines", threads)
        workgroups = ParallelWorkgroups(self.options.workgroup_threads, f"{name}-workgroups",
                                        threads, self.options.worker_spin_us)
        self._workgroups = workgroups
        self._call_spin_ns = int(self.options.call_spin_us * 1000)
        self._stopped = False
        self._finalizer = weakref.finalize(self, _stop, self._pool, self._monitor, workgroups)

    @property
    def driver_name(self) -> str:
        return "local-task"

    def shutdown(self, wait: bool = True, timeout_s: float | None = None) -> None:
        """Stops the workers, the monitor and the workgroup helpers and frees pooled memory.
        Operations still waiting or queued fail their signal fence ("device shut down");
        running ones finish. Later operations fail at once. `wait` joins the threads (each for
        at most `timeout_s`)."""
        self._stopped = True
        self._finalizer()  # runs _stop once, whether here or at collection
        super().shutdown(wait, timeout_s)
        if wait:
            self._statistics.threads.join(timeout_s)

    def __enter__(self) -> LocalTaskDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def expect_work(self) -> None:
        """The workgroup threads watch for work for `call_spin_us` from now (and wake if they
        sleep), so a call's first dispatch does not wait for them to wake."""
        if self._call_spin_ns:
            self._workgroups.prime(self._call_spin_ns)

    def help_until(self, reached: Callable[[], bool]) -> None:
        """Runs ready operations from this device's queue on the calling thread (any of them:
        workers are interchangeable) until `reached()`; what workers already took runs there."""
        while not reached():
            op = self._pool.take()
            if op is None:
                return
            op.run()

    def queue_execute(self, wait: Fence | None, signal: Fence,
                      command_buffers: Sequence[CommandBuffer],
                      bindings: tuple[Buffer, ...] | None = None) -> None:
        # As LocalDevice's, with the work as an object that can name its dispatches while the
        # operation waits (wait-cycle reports).
        work = ExecuteWork(tuple(command_buffers), self._statistics, self._workgroups, bindings)
        self._submit("execute", wait, signal, work)

    def queue_execute_awaited(self, wait: Fence | None, signal: Fence,
                              command_buffers: Sequence[CommandBuffer],
                              bindings: tuple[Buffer, ...] | None = None) -> None:
        """Work that is ready now runs on the calling thread, which would only block until a
        worker had run it (its workgroups still spread over the device's workgroup threads);
        work with a wait still pending is queued as usual, and the caller's wait helps."""
        try:
            ready = wait is None or type(wait) is Fence and wait._all_reached()
        except RuntimeFault:  # a failed wait: the usual path fails the signal with it
            ready = False
        if not ready:
            self.queue_execute(wait, signal, command_buffers, bindings)
            return
        work = ExecuteWork(tuple(command_buffers), self._statistics, self._workgroups, bindings)
        self._statistics.record_submitted("execute")
        self._enqueue(_EXECUTE, wait, signal, work, _run_here)

    def execute_now(self, wait: Fence | None, command_buffers: Sequence[CommandBuffer],
                    bindings: tuple[Buffer, ...] | None = None) -> bool:
        """Work with nothing to wait for runs on the calling thread (its workgroups still spread
        over the workgroup threads), held in the in-flight record meanwhile, counted and failed
        as the operation `queue_execute` makes would be."""
        if not (wait is None or type(wait) is Fence and not wait._points):
            return False
        statistics = self._statistics
        statistics.record_submitted("execute")
        if self._stopped:
            statistics.record_failed()
            raise RuntimeFault(_SHUTDOWN.format(what=_EXECUTE))
        work = ExecuteWork(tuple(command_buffers), statistics, self._workgroups, bindings)
        op = _InlineExecute(work.command_buffers, self._name)
        statistics.record_started(op)
        try:
            failure = run_work(_EXECUTE, work)
        except BaseException:  # Ctrl-C in the work: the execute ends, failed, as on a worker
            statistics.record_ended(op)
            statistics.record_failed()
            raise
        statistics.record_ended(op)
        if failure is not None:
            statistics.record_failed()
            raise RuntimeFault(failure)
        statistics.record_completed()
        return True

    def _inline_replay_op(self, statistics: DeviceStatistics, shard: Shard,
                          cb: CommandBuffer) -> ExecutingOperation:
        """The thread's record of an inline execute, made once and pointed at `cb` (a thread
        runs one at a time); a fresh one in the case that never arises, an execute inside
        another."""
        op = shard.inline_ops.get(_EXECUTE)
        if op is None or op in statistics._executing:
            op = _InlineExecute((cb,), self._name)
            shard.inline_ops.setdefault(_EXECUTE, op)
            return op
        op.command_buffers = (cb,)  # type: ignore[attr-defined]
        return op  # type: ignore[return-value]

    def _enqueue(self, what: str, wait: Fence | None, signal: Fence, work: QueueWork,
                 on_ready: Callable[[Operation], None] | None = None) -> None:
        """`on_ready`: what runs the operation once its waits are met (default: `_ready`, a
        worker)."""
        if not isinstance(signal, Fence):
            self._statistics.record_failed()
            raise RuntimeFault(f"{what}: the signal fence is missing")  # nowhere else to say it
        if wait is not None and not isinstance(wait, Fence):
            self._statistics.record_failed()
            signal.fail(f"{what}: the wait must be a fence or None, got {type(wait).__name__}")
            return
        if self._stopped:
            self._statistics.record_failed()
            signal.fail(_SHUTDOWN.format(what=what))
            return
        op = Operation(what, signal, work, on_ready or self._ready, keepalive=self,
                       statistics=self._statistics, origin=self._name)
        if op.arm(wait) and not self._monitor.track(op):
            op.expire(_SHUTDOWN.format(what=what))  # shut down while submitting

    def _ready(self, op: Operation) -> None:
        """Called once, on the thread that reached the last wait point (or the submitter)."""
        if op.work is None:
            op.finish(None)
        elif not self._pool.submit(op):
            op.finish(_SHUTDOWN.format(what=op.what))


def _run_here(op: Operation) -> None:
    """Runs an operation that was ready when submitted on the submitting thread."""
    op.run()


class _InlineExecute:
    """What the in-flight record holds while `execute_now` runs: described as the operation
    `queue_execute` makes is."""

    __slots__ = ("command_buffers", "origin")

    def __init__(self, command_buffers: tuple[CommandBuffer, ...], origin: str) -> None:
        self.command_buffers = command_buffers
        self.origin = origin

    def describe(self) -> str:
        names = recorded_dispatch_names(self.command_buffers)
        return f"{_EXECUTE} [{', '.join(names)}] on {self.origin}"
