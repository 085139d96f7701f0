"""The device interface. Every queue operation takes a wait fence (or None) and a signal fence
and reports failures through the signal fence, never only by raising: that way a driver that runs
the operation later on a worker thread (local-task) has exactly the same contract as one that
runs it inline (local-sync).

Each device owns its `statistics`, updated by the queue that actually runs the work, so tests of
multi-device programs can tell which device's queue ran what, and so leaks (buffers, pending
operations, threads) show in the device's own counts.

`shutdown` releases what a device holds between calls (threads, pooled memory); a device that is
collected without it releases them too (local-task stops its threads from a finalizer)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Self, Sequence

from weir.runtime.hal.buffer import Allocator, Buffer
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.live_objects import DEVICES
from weir.runtime.hal.semaphore import Semaphore
from weir.runtime.hal.statistics import DeviceStatistics


class Device(ABC):
    def __init__(self) -> None:
        # Subclasses must call this: every device counts its own queue work and live objects.
        self._statistics = DeviceStatistics()
        DEVICES.add(self)

    @property
    def statistics(self) -> DeviceStatistics:
        """The live counters of this device's queue (not a copy: `snapshot()` gives one)."""
        return self._statistics

    @property
    @abstractmethod
    def driver_name(self) -> str: ...

    @property
    @abstractmethod
    def allocator(self) -> Allocator: ...

    @abstractmethod
    def can_execute(self, executable_format: str) -> bool:
        """Whether executables of this payload format run on this device."""

    def shutdown(self, wait: bool = True, timeout_s: float | None = None) -> None:
        """Releases what the device holds between calls: the threads it started end (joined
        when `wait`, each for at most `timeout_s`) and its pooled memory is freed. Idempotent.
        Operations still waiting fail their signal fence; drivers that run work on threads fail
        later operations too. This base has nothing to release."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def expect_work(self) -> None:
        """A call that will submit work here has begun (`weir.api` calls it first): a device
        whose threads sleep when idle may wake them now. Most devices have nothing to do."""

    def create_semaphore(self, initial_value: int = 0) -> Semaphore:
        return Semaphore(initial_value)

    def help_until(self, reached: Callable[[], bool]) -> None:
        """Lets a thread that is about to wait run this device's ready queue work itself until
        `reached()` holds or nothing is ready: a synchronous call then costs no hand-off to a
        worker and back. Devices without queued work (or that must not share it) do nothing."""

    def create_command_buffer(self, binding_count: int | None = None) -> CommandBuffer:
        """One-shot, or reusable with `binding_count` binding slots."""
        return CommandBuffer(binding_count)

    @abstractmethod
    def queue_alloca(self, wait: Fence | None, signal: Fence, size: int) -> Buffer:
        """Returns the buffer now; it may be used by work ordered after `signal`."""

    @abstractmethod
    def queue_dealloca(self, wait: Fence | None, signal: Fence, buffer: Buffer) -> None: ...

    @abstractmethod
    def queue_execute(self, wait: Fence | None, signal: Fence,
                      command_buffers: Sequence[CommandBuffer],
                      bindings: tuple[Buffer, ...] | None = None) -> None:
        """`bindings`: the binding table of reusable command buffers, a buffer per slot."""

    def queue_execute_awaited(self, wait: Fence | None, signal: Fence,
                              command_buffers: Sequence[CommandBuffer],
                              bindings: tuple[Buffer, ...] | None = None) -> None:
        """`queue_execute` for a caller that waits on `signal` right after and does nothing
        meanwhile (vm/awaited_executes.py): a driver may run work that is ready now on the
        calling thread rather than wake another to run it. By default, `queue_execute`."""
        self.queue_execute(wait, signal, command_buffers, bindings)

    def execute_now(self, wait: Fence | None, command_buffers: Sequence[CommandBuffer],
                    bindings: tuple[Buffer, ...] | None = None) -> bool:
        """An execute the caller awaits at once with a fence no one else sees: True when the
        device ran it to its end on the calling thread (raising `RuntimeFault` with what its
        signal fence would have failed with, counted as that execute would be); False, with
        nothing done, when it cannot (the caller then submits it with a fence and waits)."""
        return False

    def execute_indirect_now(self, wait: Fence | None, cb: CommandBuffer,
                             bindings: tuple[Buffer, ...]) -> bool:
        """`execute_now` of one reusable command buffer and its binding table (a compiled
        program's usual execute), for drivers that shorten its path."""
        return self.execute_now(wait, (cb,), bindings)

    @abstractmethod
    def queue_copy(self, wait: Fence | None, signal: Fence, src: Buffer, src_offset: int,
                   dst: Buffer, dst_offset: int, length: int) -> None: ...

    @abstractmethod
    def queue_fill(self, wait: Fence | None, signal: Fence, dst: Buffer, offset: int, length: int,
                   pattern: bytes) -> None: ...

    @abstractmethod
    def queue_barrier(self, wait: Fence | None, signal: Fence) -> None: ...

    def __repr__(self) -> str:
        return f"<hal.device {self.driver_name}>"
