"""The local-task device: every queue operation returns at once and runs when its wait fence is
reached. Operations are ordered only by their fences (no implicit FIFO), as in IREE.

- Readiness comes from `Semaphore.on_reached` callbacks, never from a thread blocked in a wait.
- Work (execute, copy, fill) runs on a fixed pool of worker threads. Operations without work
  (alloca's signal, dealloca, barrier) signal on the thread that made them ready: waking a
  worker costs 50-100 µs (DESIGN.md §12) and there is nothing for it to do.
- One monitor thread fails operations whose wait fence is not reached within
  `wait_timeout_s`, so a wait cycle ends in an error rather than a hang.
- Every failure, including a failed wait, is reported through the signal fence with the
  original message."""

from __future__ import annotations

import itertools
import weakref
from typing import Callable, Sequence

from weir.errors import RuntimeFault, WeirError
from weir.runtime.hal.buffer import Allocator, Buffer
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.command_execution import copy_bytes, execute_command_buffer, fill_bytes
from weir.runtime.hal.device import Device
from weir.runtime.hal.drivers.local_task.deadlines import DeadlineMonitor
from weir.runtime.hal.drivers.local_task.operation import Operation
from weir.runtime.hal.drivers.local_task.options import LocalTaskOptions
from weir.runtime.hal.drivers.local_task.workers import WorkerPool
from weir.runtime.hal.fence import Fence

_SHUTDOWN = "{what}: device shut down before the operation ran"
_ids = itertools.count()


def _stop(pool: WorkerPool, monitor: DeadlineMonitor) -> None:
    """Stops the threads without joining: also the finalizer of a collected device, which may
    run on one of those very threads."""
    pool.stop()
    for op in monitor.stop():
        op.expire(_SHUTDOWN.format(what=op.what))


class LocalTaskDevice(Device):
    def __init__(self, options: LocalTaskOptions | None = None) -> None:
        self.options = options or LocalTaskOptions()
        self._allocator = Allocator()
        name = f"weir-local-task-{next(_ids)}"
        self._pool = WorkerPool(self.options.worker_count, f"{name}-worker", _SHUTDOWN)
        self._monitor = DeadlineMonitor(self.options.wait_timeout_s, f"{name}-deadlines")
        self._stopped = False
        self._finalizer = weakref.finalize(self, _stop, self._pool, self._monitor)

    @property
    def driver_name(self) -> str:
        return "local-task"

    @property
    def allocator(self) -> Allocator:
        return self._allocator

    def can_execute(self, executable_format: str) -> bool:
        # Every loader weir has today runs on the host CPU.
        return True

    def shutdown(self, wait: bool = True, timeout_s: float | None = None) -> None:
        """Stops the workers and the monitor. Operations still waiting or queued fail their
        signal fence ("device shut down"); running ones finish. Later operations fail at once.
        `wait` joins the threads (each for at most `timeout_s`)."""
        self._stopped = True
        self._finalizer()  # runs _stop once, whether here or at collection
        if wait:
            self._pool.join(timeout_s)
            self._monitor.join(timeout_s)

    def __enter__(self) -> LocalTaskDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def _submit(self, what: str, wait: Fence | None, signal: Fence,
                work: Callable[[], object] | None) -> None:
        if not isinstance(signal, Fence):
            raise RuntimeFault(f"{what}: the signal fence is missing")  # nowhere else to say it
        if wait is not None and not isinstance(wait, Fence):
            signal.fail(f"{what}: the wait must be a fence or None, got {type(wait).__name__}")
            return
        if self._stopped:
            signal.fail(_SHUTDOWN.format(what=what))
            return
        op = Operation(what, signal, work, self._ready, keepalive=self)
        if op.arm(wait) and not self._monitor.track(op):
            op.expire(_SHUTDOWN.format(what=what))  # shut down while submitting

    def _ready(self, op: Operation) -> None:
        """Called once, on the thread that reached the last wait point (or the submitter)."""
        if op.work is None:
            op.finish(None)
        elif not self._pool.submit(op):
            op.finish(_SHUTDOWN.format(what=op.what))

    def queue_alloca(self, wait: Fence | None, signal: Fence, size: int) -> Buffer:
        try:
            buffer = self._allocator.allocate(size)
        except WeirError as e:
            if isinstance(signal, Fence):
                signal.fail(e)
            raise  # there is no buffer to return
        self._submit("queue alloca", wait, signal, None)
        return buffer

    def queue_dealloca(self, wait: Fence | None, signal: Fence, buffer: Buffer) -> None:
        # Host memory is reclaimed when the last reference goes; ordering is all that matters.
        self._submit("queue dealloca", wait, signal, None)

    def queue_execute(self, wait: Fence | None, signal: Fence,
                      command_buffers: Sequence[CommandBuffer]) -> None:
        buffers = tuple(command_buffers)  # the caller may reuse its list after we return

        def work() -> None:
            for cb in buffers:
                execute_command_buffer(cb)
        self._submit("queue execute", wait, signal, work)

    def queue_copy(self, wait: Fence | None, signal: Fence, src: Buffer, src_offset: int,
                   dst: Buffer, dst_offset: int, length: int) -> None:
        self._submit("queue copy", wait, signal,
                     lambda: copy_bytes(src, src_offset, dst, dst_offset, length))

    def queue_fill(self, wait: Fence | None, signal: Fence, dst: Buffer, offset: int, length: int,
                   pattern: bytes) -> None:
        self._submit("queue fill", wait, signal, lambda: fill_bytes(dst, offset, length, pattern))

    def queue_barrier(self, wait: Fence | None, signal: Fence) -> None:
        self._submit("queue barrier", wait, signal, None)
