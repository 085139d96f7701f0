"""How a command buffer's commands are replayed: runs of native dispatches become one native call
each (weir/runtime/executables/native_replay.py), everything else runs command by command.

A one-shot command buffer is planned when it executes. A reusable one is planned by its first
execution and keeps the plan: later executions only check their binding table against what the
plan's dispatches need of each slot (sizes and writability, worked out once), gather the slots'
addresses and make the native calls. Python then does a fixed amount of work per execution
whatever the number of dispatches.

Failures stay where they were: a dispatch whose checks fail is never batched, so replayed in
order it fails at its turn with its own message, after the work before it has run."""

from __future__ import annotations

import array
from ctypes import addressof, c_char
from typing import Callable, Sequence, Union


from weir.errors import RuntimeFault, WeirError
from weir.runtime.executables.native_replay import BatchFault, MAX_BINDINGS, NativeBatch
from weir.runtime.hal.buffer import Buffer, address_of
from weir.runtime.hal.command_buffer import BarrierCommand, Command, DispatchCommand
from weir.runtime.hal.executable import NativeCall
from weir.runtime.hal.replay_words import WordsFunction, words_function
from weir.runtime.hal.statistics import dispatch_names
from weir.runtime.hal.workgroups import WorkgroupRunner

Step = Union[Command, NativeBatch]
# Runs one command that is not part of a batch (the replay's own `_run_command`).
RunCommand = Callable[[Command, WorkgroupRunner, list[str]], None]


# One byte range a dispatch touches: (buffer or slot, first byte, end byte, whether written).
Access = tuple[int, int, int, bool]


class Phases:
    """Which rows of a batch must wait for every row before them: the first after an execution
    barrier, and any that touches bytes a row of the current phase writes (or writes bytes it
    reads). Rows of one phase may run at once on several threads."""

    __slots__ = ("starts", "_current", "_barrier")

    def __init__(self) -> None:
        self.starts: list[bool] = []
        self._current: list[Access] = []
        self._barrier = False

    def barrier(self) -> None:
        self._barrier = True

    def add(self, accesses: Sequence[Access]) -> None:
        new = self._barrier or any(
            key == k and start < e and s < end and (writes or w)
            for key, start, end, writes in accesses for k, s, e, w in self._current)
        if new:
            self._current = []
        self._current.extend(accesses)
        self.starts.append(new)
        self._barrier = False

    def take(self) -> list[bool]:
        """The flags of the rows so far; the next row starts a new batch (and phase)."""
        starts, self.starts, self._current, self._barrier = self.starts, [], [], False
        return starts


def one_shot_plan(commands: Sequence[Command], threads: int) -> list[Step]:
    """The commands with each run of consecutive native dispatches replaced by one batch, which
    a runner of several `threads` spreads over them (`NativeBatch.run_shared`). A lone native
    dispatch stays a command: the runner splits its workgroups as it is."""
    plan: list[Step] = []
    run: list[tuple[Command, NativeCall]] = []
    phases = Phases()

    def flush() -> None:
        starts = phases.take()
        if len(run) == 1:
            plan.append(run[0][0])
        elif run:
            plan.append(NativeBatch([c for _, c in run], [_name(cmd) for cmd, _ in run],
                                    phases=starts, threads=threads))
        run.clear()

    for cmd in commands:
        if type(cmd) is BarrierCommand:
            phases.barrier()
            continue
        call = _native(cmd, cmd.bindings) if type(cmd) is DispatchCommand else None
        if call is None:
            flush()
            plan.append(cmd)
        else:
            # Bindings are buffers here: their addresses say which ones overlap.
            phases.add([(0, call.addresses[binding], call.addresses[binding] + end, writes)
                        for binding, end, writes in call.needs])
            run.append((cmd, call))
    flush()
    return plan


def _name(cmd: Command) -> str:
    assert type(cmd) is DispatchCommand
    return dispatch_names(cmd.executable)[cmd.entry]


def _native(cmd: DispatchCommand, bindings: Sequence[Buffer]) -> NativeCall | None:
    try:
        call = cmd.executable.native_call(cmd.entry, cmd.workgroups, cmd.constants, bindings)
    except WeirError:
        return None  # replayed on its own, where it fails with the dispatch's message
    if call is None or len(call.addresses) > MAX_BINDINGS:
        return None
    return call


def resolve(cmd: Command, table: Sequence[Buffer]) -> Command:
    """A reusable command buffer's command with the table's buffers in place of its slots (a
    slot that is a buffer already stays)."""
    if type(cmd) is DispatchCommand:
        return cmd._replace(bindings=tuple(
            _part(table[slot] if type(slot) is int else slot, offset, length)
            for slot, offset, length in cmd.bindings))  # type: ignore[misc]
    return cmd


def _part(buffer: Buffer, offset: int, length: int) -> Buffer:
    if offset == 0 and length < 0:
        return buffer
    return buffer.subspan(offset, buffer.byte_length - offset if length < 0 else length)


def numbered(commands: Sequence[Command], slots: int
             ) -> tuple[list[Command], tuple[Buffer, ...]]:
    """The commands with each buffer a dispatch binds directly (rather than by slot) numbered
    as a slot after the table's `slots`, and those buffers in that order, each once."""
    fixed: dict[int, int] = {}
    buffers: list[Buffer] = []

    def slot_of(slot: int | Buffer) -> int:
        if type(slot) is int:
            return slot
        key = id(slot)
        if key not in fixed:
            fixed[key] = slots + len(buffers)
            buffers.append(slot)  # type: ignore[arg-type]
        return fixed[key]

    out: list[Command] = []
    for cmd in commands:
        if type(cmd) is DispatchCommand:
            cmd = cmd._replace(bindings=tuple(
                (slot_of(slot), offset, length)
                for slot, offset, length in cmd.bindings))  # type: ignore[misc]
        out.append(cmd)
    return out, tuple(buffers)


class ReusablePlan:
    """The plan of a reusable command buffer: steps that are either batches of native dispatches
    reading their bindings from slots, or commands resolved against each execution's table.
    Buffers the command buffer binds itself are slots after the table's (`numbered`), checked
    once here; each execution appends their addresses, taken once, to the table's."""

    __slots__ = ("steps", "_needs", "single", "inline_words", "_fixed", "_fixed_fit",
                 "_fixed_addresses")

    def __init__(self, commands: Sequence[Command], table: Sequence[Buffer], threads: int,
                 slots: int) -> None:
        self.steps: list[NativeBatch | Command] = []
        commands, self._fixed = numbered(commands, slots)
        table = (*table, *self._fixed)
        need_end = [0] * len(table)
        need_write = [False] * len(table)
        run: list[tuple[DispatchCommand, NativeCall]] = []
        phases = Phases()

        def flush() -> None:
            starts = phases.take()
            if run:
                self.steps.append(NativeBatch(
                    [c for _, c in run], [_name(cmd) for cmd, _ in run],
                    slots=[[(slot, offset) for slot, offset, _ in cmd.bindings]  # type: ignore[misc]
                           for cmd, _ in run], phases=starts, threads=threads))
            run.clear()

        for cmd in commands:
            if type(cmd) is BarrierCommand:
                phases.barrier()
                continue
            call = None
            if type(cmd) is DispatchCommand:
                call = _native(cmd, resolve(cmd, table).bindings)  # type: ignore[arg-type]
            if call is None:
                flush()
                self.steps.append(cmd)
                continue
            accesses: list[Access] = []
            for binding, end, writes in call.needs:
                slot, offset, length = cmd.bindings[binding]  # type: ignore[misc]
                # A part of a slot: its recorded length must hold the access (checked now, on
                # the first table, by native_call) and the slot's buffer must hold the part.
                need = offset + (end if length < 0 else length)
                need_end[slot] = max(need_end[slot], need)
                need_write[slot] = need_write[slot] or writes
                # Slots are told apart by number: two slots given overlapping buffers with no
                # barrier between their dispatches race, as on any HAL.
                accesses.append((slot, offset, offset + end, writes))
            phases.add(accesses)
            run.append((cmd, call))  # type: ignore[arg-type]
        flush()
        self._needs = tuple(zip(need_end[:slots], need_write[:slots]))
        self._fixed_fit = all(
            buffer.byte_length >= end and not (writes and buffer.read_only)
            for buffer, end, writes in zip(self._fixed, need_end[slots:], need_write[slots:]))
        self._fixed_addresses = array.array("Q", (b.address for b in self._fixed))
        # The usual plan, every command one batch: `replay_memoized` replays it without a loop.
        only = self.steps[0] if len(self.steps) == 1 else None
        self.single: NativeBatch | None = only if type(only) is NativeBatch else None
        # For a single batch this thread runs alone (`LocalDevice.execute_indirect_now`): a
        # table's words for `NativeBatch.run_words`, when it fits as `addresses_if_fits`
        # decides, else None. Where the executor reads each array's data pointer itself, a
        # slot's word is its array's `id` (the table holds the arrays meanwhile): a fresh
        # buffer's address costs more in Python than the rest of a replay.
        self.inline_words: WordsFunction | None = None
        if self.single is not None and not self.single.shared and self._fixed_fit:
            self.inline_words = words_function(self.single, self._needs, self._append_addresses,
                                               self._fixed)

    def addresses_if_fits(self, table: Sequence[Buffer]) -> array.array[int] | None:
        """The slots' addresses, when every slot holds a buffer as large as, and as writable
        as, the batched dispatches need (each dispatch's other checks depend only on what was
        recorded); None when one does not (the caller's full checks then say what is wrong)."""
        if not self._fixed_fit:
            return None
        addresses = array.array("Q")
        if not self._append_addresses(addresses, table):
            return None
        addresses.extend(self._fixed_addresses)
        if not addresses:
            addresses.append(0)
        return addresses

    def _append_addresses(self, addresses: array.array[int], table: Sequence[Buffer]) -> bool:
        """Appends the slots' addresses; False as soon as a slot does not fit. One pass over the
        table: this runs on every call."""
        append = addresses.append
        for buffer, (end, writes) in zip(table, self._needs):
            if type(buffer) is not Buffer or buffer.byte_length < end or (
                    writes and buffer.read_only):
                return False
            address = buffer._address
            if address is None:  # first use of a fresh buffer (`Buffer.address`, inlined)
                try:  # `address_of`, inlined too: every call's buffers are fresh
                    address = addressof(c_char.from_buffer(buffer.data))
                except (TypeError, ValueError):
                    address = address_of(buffer.data)
                buffer._address = address
            append(address)
        return True

    def run(self, table: Sequence[Buffer], addresses: array.array[int],
            runner: WorkgroupRunner, run_command: RunCommand, dispatched: list[str]) -> None:
        if self._fixed:
            table = (*table, *self._fixed)
        for step in self.steps:
            if type(step) is NativeBatch:
                run_batch(step, dispatched, addresses, runner)
            else:
                run_command(resolve(step, table), runner, dispatched)  # type: ignore[arg-type]


def dispatch_failure(name: str, error: Exception) -> RuntimeFault:
    """The error a failing dispatch fails its execute with: the entry point's name as the
    statistics keys it (`executable::entry`), then the original message (with its exception type
    when it is not a `WeirError`, i.e. a bug in a loader or kernel)."""
    detail = str(error) if isinstance(error, WeirError) else f"{type(error).__name__}: {error}"
    return RuntimeFault(f"dispatch '{name}' failed: {detail}")


def run_batch(batch: NativeBatch, dispatched: list[str],
              addresses: array.array[int] | None = None,
              runner: WorkgroupRunner | None = None) -> None:
    """Runs `batch` (on the runner's threads too where it has work to spread), appending the
    name of each dispatch that returns to `dispatched`; a failed run-time check fails the
    execute as a failing dispatch does (with rows spread over threads, rows of the failing
    row's phase after it may have run too)."""
    try:
        run_native(batch, addresses, runner)
    except BatchFault as fault:
        raise batch_failure(batch, fault, dispatched) from None
    dispatched.extend(batch.names)


def run_native(batch: NativeBatch, addresses: array.array[int] | None,
               runner: WorkgroupRunner | None) -> None:
    """The batch on the runner's threads where it has work to spread, else on this thread;
    raises BatchFault."""
    if batch.shared and runner is not None:
        batch.run_shared(runner.share, addresses)
    else:
        batch.run(addresses)


def batch_failure(batch: NativeBatch, fault: BatchFault, dispatched: list[str]) -> RuntimeFault:
    """The execute's error for a batch whose row `fault.row` failed, named by its dispatch as a
    failing dispatch outside a batch is; the rows before it go to `dispatched`."""
    dispatched.extend(batch.names[:fault.row])
    return dispatch_failure(batch.names[fault.row], fault)


def check_table(binding_count: int | None, table: tuple[Buffer, ...] | None) -> None:
    if binding_count is None:
        if table is not None:
            raise RuntimeFault("queue execute: a binding table was given for a one-shot "
                               "command buffer")
        return
    if table is None or len(table) != binding_count:
        got = "none" if table is None else f"{len(table)} buffer(s)"
        raise RuntimeFault(f"queue execute: the reusable command buffer binds {binding_count} "
                           f"slot(s), the binding table has {got}")
    for i, b in enumerate(table):
        if type(b) is not Buffer:
            raise RuntimeFault(f"queue execute: binding table slot {i} must be a buffer, got "
                               f"{type(b).__name__}")
