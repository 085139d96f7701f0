"""Command buffers record work once and are submitted with `Device.queue_execute`. Commands are
immutable records so any driver (inline or worker threads) can replay them: NamedTuples rather
than frozen dataclasses, which cost a microsecond more to create, on every dispatch of every call."""

from __future__ import annotations

from typing import NamedTuple, Union

from weir.errors import RuntimeFault
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.executable import Executable


class DispatchCommand(NamedTuple):
    executable: Executable
    entry: int
    workgroups: tuple[int, ...]
    constants: tuple[int, ...]
    bindings: tuple[Buffer, ...]


class CopyCommand(NamedTuple):
    src: Buffer
    src_offset: int
    dst: Buffer
    dst_offset: int
    length: int


class FillCommand(NamedTuple):
    dst: Buffer
    offset: int
    length: int
    pattern: bytes


class BarrierCommand(NamedTuple):
    """Everything before completes before anything after starts (a no-op for in-order replay)."""


Command = Union[DispatchCommand, CopyCommand, FillCommand, BarrierCommand]

# Classes already found to be Executables: `isinstance` against the ABC runs Python code in `abc`
# (about 0.5 µs), and every call of a compiled program records dispatches.
_EXECUTABLE_CLASSES: set[type] = set()


class CommandBuffer:
    __slots__ = ("_commands", "_finalized")

    def __init__(self) -> None:
        self._commands: list[Command] | tuple[Command, ...] = []
        self._finalized = False

    @property
    def finalized(self) -> bool:
        return self._finalized

    @property
    def commands(self) -> tuple[Command, ...]:
        return tuple(self._commands)  # once finalized, the tuple itself: replay copies nothing

    def _record(self, command: Command) -> None:
        if self._finalized:
            raise RuntimeFault("command buffer is finalized: no more commands can be recorded")
        self._commands.append(command)  # type: ignore[union-attr] (a list until finalized)

    def dispatch(self, executable: Executable, entry: int, workgroups: tuple[int, ...],
                 constants: tuple[int, ...], bindings: tuple[Buffer, ...]) -> None:
        if type(executable) not in _EXECUTABLE_CLASSES:
            if not isinstance(executable, Executable):
                raise RuntimeFault(f"dispatch: expected an executable, got "
                                   f"{type(executable).__name__}")
            _EXECUTABLE_CLASSES.add(type(executable))
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
        self._commands = tuple(self._commands)

    def __repr__(self) -> str:
        return f"<hal.command_buffer {len(self._commands)} command(s)>"
