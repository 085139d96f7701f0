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
    # Buffers; in a reusable command buffer, (slot, offset, length) references into the binding
    # table instead (length -1: the rest of the slot's buffer), where a slot may also be a
    # buffer the command buffer binds itself (a constant: the same on every execution).
    bindings: tuple[Buffer, ...] | tuple[tuple[int | Buffer, int, int], ...]


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


def _slot_references(bindings: tuple[object, ...], slots: int
                     ) -> tuple[tuple[int | Buffer, int, int], ...]:
    """A reusable command buffer's bindings: flat (slot, offset, length) triples, length -1
    meaning the rest of the slot's buffer; a slot is a binding table index or a buffer bound
    for every execution (IREE's direct bindings beside indirect ones)."""
    if len(bindings) % 3 or not all(
            type(x) is int or (i % 3 == 0 and type(x) is Buffer) for i, x in enumerate(bindings)):
        raise RuntimeFault(f"dispatch: a reusable command buffer binds (slot or buffer, offset, "
                           f"length) triples, got {bindings!r}")
    triples = tuple(zip(bindings[0::3], bindings[1::3], bindings[2::3]))
    for slot, offset, length in triples:  # type: ignore[misc]
        where = f"slot {slot}" if type(slot) is int else "a buffer"
        if type(slot) is int and not 0 <= slot < slots:
            raise RuntimeFault(f"dispatch: binding ({where}, offset {offset}, length "
                               f"{length}) is outside the {slots} slot(s) of this reusable "
                               "command buffer")
        if offset < 0 or length < -1:
            raise RuntimeFault(f"dispatch: binding ({where}, offset {offset}, length "
                               f"{length}): the offset must be >= 0 and the length >= -1")
    return triples  # type: ignore[return-value]

# Classes already found to be Executables: `isinstance` against the ABC runs Python code in `abc`
# (about 0.5 µs), and every call of a compiled program records dispatches.
_EXECUTABLE_CLASSES: set[type] = set()


class CommandBuffer:
    """One-shot (the default: recorded with buffers, submitted once) or reusable: recorded once
    with binding slot numbers where buffers go, then submitted any number of times with a
    binding table that puts a buffer in each slot (`binding_count` of them)."""

    __slots__ = ("_commands", "_finalized", "binding_count", "plans")

    def __init__(self, binding_count: int | None = None) -> None:
        self._commands: list[Command] | tuple[Command, ...] = []
        self._finalized = False
        self.binding_count = binding_count
        # How replay runs it, worked out by its first execution (command_execution.py) per
        # number of threads of the workgroup runner: recording is over by then, so it stays true.
        self.plans: dict[int, object] = {}

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
        if self.binding_count is None:
            for b in bindings:
                if not isinstance(b, Buffer):
                    raise RuntimeFault(f"dispatch: bindings must be buffers, got "
                                       f"{type(b).__name__}")
        else:
            bindings = _slot_references(bindings, self.binding_count)  # type: ignore[assignment]
        self._record(DispatchCommand(executable, entry, tuple(workgroups), tuple(constants),
                                     tuple(bindings)))

    def copy_buffer(self, src: Buffer, src_offset: int, dst: Buffer, dst_offset: int,
                    length: int) -> None:
        self._one_shot("copy_buffer")
        src.check_range(src_offset, length, "copy_buffer source")
        dst.check_range(dst_offset, length, "copy_buffer target")
        self._record(CopyCommand(src, src_offset, dst, dst_offset, length))

    def fill_buffer(self, dst: Buffer, offset: int, length: int, pattern: bytes) -> None:
        self._one_shot("fill_buffer")
        if len(pattern) not in (1, 2, 4, 8) or length % len(pattern):
            raise RuntimeFault(f"fill_buffer: pattern of {len(pattern)} bytes cannot fill {length}")
        dst.check_range(offset, length, "fill_buffer target")
        self._record(FillCommand(dst, offset, length, bytes(pattern)))

    def _one_shot(self, what: str) -> None:
        if self.binding_count is not None:
            raise RuntimeFault(f"{what}: not supported in a reusable command buffer (only "
                               "dispatches and barriers bind slots)")

    def execution_barrier(self) -> None:
        self._record(BarrierCommand())

    def finalize(self) -> None:
        if self._finalized:
            raise RuntimeFault("command buffer finalized twice")
        self._finalized = True
        self._commands = tuple(self._commands)

    def __repr__(self) -> str:
        reusable = "" if self.binding_count is None else f", {self.binding_count} slot(s)"
        return f"<hal.command_buffer {len(self._commands)} command(s){reusable}>"
