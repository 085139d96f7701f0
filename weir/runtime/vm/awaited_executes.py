"""Queue executes whose signal fence the same function awaits at once. A synchronous program
submits its work and then waits for it:

    %signal = hal.fence.create(%device)
    hal.device.queue.execute.indirect(%device, %wait, %signal, %cb, (%in, %out))
    hal.fence.await(-1, (%signal,))

Between the execute and the await the calling thread does nothing but block, so handing the
work to a worker thread (local-task) buys no concurrency: it only costs the worker's wake-up and
the wake of the caller after it, tens of microseconds against a kernel of one. The translator
calls such an execute through a variant of its hal export (`ModuleInstance.variant`):

- `awaited`: the execute's own arguments; it tells the device that the caller waits on the
  signal next (`Device.queue_execute_awaited`), so ready work may run on the calling thread.
  The await stays, with its timeout, its deadline and its errors.
- `now`: when the fence was made by `hal.fence.create` in the same block and nothing else in
  the function reads it, the three calls become one, at the await's place (only constants run
  between the execute and the await, so nothing observes the move): `now(fence device,
  execute's arguments without the signal, await's timeout)`. A device that can finish the
  work on the calling thread (`Device.execute_now`) then needs no fence at all; any other gets
  one, and the execute and the await as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from weir.format.image import FunctionDef
from weir.format.vm_dataflow import reads_writes
from weir.format.vm_isa import Call, Const, Instruction

# The executes that have these variants, and where their signal fence is.
_SIGNAL_ARGUMENT = {"hal.device.queue.execute": 2, "hal.device.queue.execute.indirect": 2}
_AWAIT = "hal.fence.await"
_CREATE = "hal.fence.create"
AWAITED = "awaited"
NOW = "now"


def variant_name(base: str, variant: str) -> str:
    """The translated code's name for `base`'s `variant` form: not a name any import can have
    (`#` is no part of an identifier), so it never clashes with the module's own imports."""
    return f"{base}#{variant}"


@dataclass(frozen=True)
class Fused:
    """What the await at its position becomes: the `now` variant of `execute`'s callee."""

    create: Call
    execute: Call
    timeout: int  # the await's timeout register

    @property
    def args(self) -> tuple[int | tuple[int, ...], ...]:
        signal = _SIGNAL_ARGUMENT[self.execute.callee]
        rest = self.execute.args[:signal] + self.execute.args[signal + 1:]
        return (self.create.args[0], *rest, self.timeout)


@dataclass
class BlockPlan:
    """Per instruction position of one block: `awaited` executes, the positions whose call is
    left out (`dropped`: a fused fence.create and execute), and the awaits that run `fused`."""

    awaited: set[int]
    dropped: set[int]
    fused: dict[int, Fused]

    def variants(self) -> set[tuple[str, str]]:
        return {(f.execute.callee, NOW) for f in self.fused.values()}


def plan_function(fn: FunctionDef) -> list[BlockPlan]:
    """The plan of each block of `fn`."""
    reads: dict[int, int] = {}
    for block in fn.blocks:
        for ins in block.instructions:
            for reg in reads_writes(ins)[0]:
                reads[reg] = reads.get(reg, 0) + 1
    return [_plan_block(block.instructions, reads) for block in fn.blocks]


def _plan_block(instructions: tuple[Instruction, ...], reads: dict[int, int]) -> BlockPlan:
    plan = BlockPlan(set(), set(), {})
    created: dict[int, int] = {}  # fence register -> position of its hal.fence.create
    for i, ins in enumerate(instructions):
        if not isinstance(ins, Call):
            continue
        if ins.callee == _CREATE and len(ins.dsts) == 1 and len(ins.args) == 1:
            created[ins.dsts[0]] = i
        if ins.callee not in _SIGNAL_ARGUMENT or ins.dsts:
            continue
        signal = ins.args[_SIGNAL_ARGUMENT[ins.callee]]
        if not isinstance(signal, int):
            continue
        at = _await_of(instructions, i, signal)
        if at is None:
            continue
        plan.awaited.add(i)
        # Read by the execute and the await alone: the fence is the pair's own.
        if signal in created and reads.get(signal) == 2:
            create = instructions[created[signal]]
            assert isinstance(create, Call)
            timeout = instructions[at].args[0]  # type: ignore[union-attr]
            if isinstance(timeout, int):
                plan.dropped.update((created[signal], i))
                plan.fused[at] = Fused(create, ins, timeout)
    return plan


def _await_of(instructions: tuple[Instruction, ...], execute: int, signal: int) -> int | None:
    """The position of the await of `signal` alone when it is the next call after `execute`,
    with only constants written between (none into the fence's register)."""
    for at in range(execute + 1, len(instructions)):
        later = instructions[at]
        if isinstance(later, Const) and later.dst != signal:
            continue
        if isinstance(later, Call) and later.callee == _AWAIT and len(later.args) == 2 \
                and later.args[1] == (signal,) and not later.dsts:
            return at
        return None
    return None

