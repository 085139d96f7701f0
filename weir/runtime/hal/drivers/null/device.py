"""The null driver: the skeleton to copy when writing a new driver. Every operation says it is
not implemented, so a half-written driver fails loudly at the first thing it lacks. A real driver
also counts its queue work in `self.statistics` (see weir/runtime/hal/local_device.py)."""

from __future__ import annotations

from typing import NoReturn, Sequence

from weir.errors import RuntimeFault
from weir.runtime.hal.buffer import Allocator, Buffer
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.device import Device
from weir.runtime.hal.fence import Fence


def _not_implemented(what: str) -> NoReturn:
    raise RuntimeFault(f"{what} is not implemented by the null driver")


class NullDevice(Device):
    @property
    def driver_name(self) -> str:
        return "null"

    @property
    def allocator(self) -> Allocator:
        _not_implemented("allocator")

    def can_execute(self, executable_format: str) -> bool:
        return False

    def queue_alloca(self, wait: Fence | None, signal: Fence, size: int) -> Buffer:
        _not_implemented("queue_alloca")

    def queue_dealloca(self, wait: Fence | None, signal: Fence, buffer: Buffer) -> None:
        _not_implemented("queue_dealloca")

    def queue_execute(self, wait: Fence | None, signal: Fence,
                      command_buffers: Sequence[CommandBuffer],
                      bindings: tuple[Buffer, ...] | None = None) -> None:
        _not_implemented("queue_execute")

    def queue_copy(self, wait: Fence | None, signal: Fence, src: Buffer, src_offset: int,
                   dst: Buffer, dst_offset: int, length: int) -> None:
        _not_implemented("queue_copy")

    def queue_fill(self, wait: Fence | None, signal: Fence, dst: Buffer, offset: int, length: int,
                   pattern: bytes) -> None:
        _not_implemented("queue_fill")

    def queue_barrier(self, wait: Fence | None, signal: Fence) -> None:
        _not_implemented("queue_barrier")
