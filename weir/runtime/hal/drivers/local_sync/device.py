"""The local-sync device: every queue operation runs inline on the caller's thread, after its
wait fence is reached. Cheapest possible submission (no thread hand-off) and deterministic, which
makes it the reference for the asynchronous drivers."""

from __future__ import annotations

from typing import Callable, Sequence

from weir.errors import RuntimeFault
from weir.runtime.hal.buffer import Allocator, Buffer
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.command_execution import copy_bytes, execute_command_buffer, fill_bytes
from weir.runtime.hal.device import Device
from weir.runtime.hal.drivers.local_sync.options import LocalSyncOptions
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.queue_work import run_work


class LocalSyncDevice(Device):
    def __init__(self, options: LocalSyncOptions | None = None) -> None:
        self.options = options or LocalSyncOptions()
        self._allocator = Allocator()

    @property
    def driver_name(self) -> str:
        return "local-sync"

    @property
    def allocator(self) -> Allocator:
        return self._allocator

    def can_execute(self, executable_format: str) -> bool:
        # Every loader weir has today runs on the host CPU.
        return True

    def _wait(self, wait: Fence | None, signal: Fence, what: str) -> bool:
        """False when the wait fence failed (the signal fence then carries that failure)."""
        if wait is None:
            return True
        if not isinstance(wait, Fence) or not isinstance(signal, Fence):
            raise RuntimeFault(f"{what}: wait/signal must be fences")
        try:
            reached = wait.wait(self.options.wait_timeout_s)
        except RuntimeFault as e:
            signal.fail(str(e))
            return False
        if not reached:
            message = (f"{what}: the wait fence was not reached within "
                       f"{self.options.wait_timeout_s:g} s; local-sync runs queue operations "
                       f"inline, so only another thread could have signalled it")
            signal.fail(message)
            raise RuntimeFault(message)
        return True

    def _run(self, wait: Fence | None, signal: Fence, what: str, work: Callable[[], object]) -> None:
        if not isinstance(signal, Fence):
            raise RuntimeFault(f"{what}: the signal fence is missing")
        if not self._wait(wait, signal, what):
            return
        failure = run_work(what, work)
        if failure is not None:
            signal.fail(failure)
            return
        signal.signal()

    def queue_alloca(self, wait: Fence | None, signal: Fence, size: int) -> Buffer:
        buffer = self._allocator.allocate(size)
        self._run(wait, signal, "queue alloca", lambda: None)
        return buffer

    def queue_dealloca(self, wait: Fence | None, signal: Fence, buffer: Buffer) -> None:
        # Host memory is reclaimed when the last reference goes; ordering is all that matters.
        self._run(wait, signal, "queue dealloca", lambda: None)

    def queue_execute(self, wait: Fence | None, signal: Fence,
                      command_buffers: Sequence[CommandBuffer]) -> None:
        def work() -> None:
            for cb in command_buffers:
                execute_command_buffer(cb)
        self._run(wait, signal, "queue execute", work)

    def queue_copy(self, wait: Fence | None, signal: Fence, src: Buffer, src_offset: int,
                   dst: Buffer, dst_offset: int, length: int) -> None:
        self._run(wait, signal, "queue copy",
                  lambda: copy_bytes(src, src_offset, dst, dst_offset, length))

    def queue_fill(self, wait: Fence | None, signal: Fence, dst: Buffer, offset: int, length: int,
                   pattern: bytes) -> None:
        self._run(wait, signal, "queue fill", lambda: fill_bytes(dst, offset, length, pattern))

    def queue_barrier(self, wait: Fence | None, signal: Fence) -> None:
        self._run(wait, signal, "queue barrier", lambda: None)
