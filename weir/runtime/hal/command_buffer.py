"""Command buffers record work once and are submitted with `Device.queue_execute`. Commands are
frozen dataclasses so any driver (inline or worker threads) can replay them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from weir.errors import RuntimeFault
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.executable import Executable


@dataclass(frozen=True)
class DispatchCommand:
    executable: Executable
    entry: int
    workgroups: tuple[int, ...]
    constants: tuple[int, ...]
    bindings: tuple[Buffer, ...]


@dataclass(frozen=True)
class CopyCommand:
    src: Buffer
    src_offset: int
    dst: Buffer
    dst_offset: int
    length: int


@dataclass(frozen=True)
class FillCommand:
    dst: Buffer
    offset: int
    length: int
    pattern: bytes


@dataclass(frozen=True)
class BarrierCommand:
    """Everything before completes before anything after starts (a no-op for in-order replay)."""


Command = Union[DispatchCommand, CopyCommand, FillCommand, BarrierCommand]


class CommandBuffer:
    def __init__(self) -> None:
        self._commands: list[Command] = []
        self._finalized = False

    @property
    def finalized(self) -> bool:
        return self._finalized

    @property
    def commands(self) -> tuple[Command, ...]:
        return tuple(self._commands)

    def _record(self, command: Command) -> None:
        if self._finalized:
            raise RuntimeFault("command buffer is finalized: no more commands can be recorded")
        self._commands.append(command)

    def dispatch(self, executable: Executable, entry: int, workgroups: tuple[int, ...],
                 constants: tuple[int, ...], bindings: tuple[Buffer, ...]) -> None:
        if not isinstance(executable, Executable):
            raise RuntimeFault(f"dispatch: expected an executable, got {type(executable).__name__}")
        if type(entry) is not int or not 0 <= entry < len(executable.entry_points):
            raise RuntimeFault(f"dispatch: entry point {entry!r} out of range "
                               f"({len(executable.entry_points)} entry point(s))")
        for b in bindings:
            if not isinstance(b, Buffer):
                raise RuntimeFault(f"dispatch: bindings must be buffers, got {type(b).__name__}")
        self._record(DispatchCommand(executable, entry, tuple(workgroups), tuple(constants),
                                     tuple(bindings)))

    def copy_buffer(self, src: Buffer, src_offset: int, dst: Buffer, dst_offset: int,
                    length: int) -> None:
        src.check_range(src_offset, length, "copy_buffer source")
        dst.check_range(dst_offset, length, "copy_buffer target")
        self._record(CopyCommand(src, src_offset, dst, dst_offset, length))

    def fill_buffer(self, dst: Buffer, offset: int, length: int, pattern: bytes) -> None:
        if len(pattern) not in (1, 2, 4, 8) or length % len(pattern):
            raise RuntimeFault(f"fill_buffer: pattern of {len(pattern)} bytes cannot fill {length}")
        dst.check_range(offset, length, "fill_buffer target")
        self._record(FillCommand(dst, offset, length, bytes(pattern)))

    def execution_barrier(self) -> None:
        self._record(BarrierCommand())

    def finalize(self) -> None:
        if self._finalized:
            raise RuntimeFault("command buffer finalized twice")
        self._finalized = True

    def __repr__(self) -> str:
        return f"<hal.command_buffer {len(self._commands)} command(s)>"
