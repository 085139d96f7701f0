"""Queue executes whose signal fence the same function awaits at once. A synchronous program
submits its work and then waits for it:

    hal.device.queue.execute.indirect(device, wait, %signal, cb, table)
    hal.fence.await(-1, (%signal,))

Between the two the calling thread does nothing but block, so handing the work to a worker
thread (local-task) buys no concurrency: it only costs the worker's wake-up and the wake of the
caller after it, tens of microseconds against a kernel of one. The translator calls such an
execute through its `awaited` variant (`ModuleInstance.variant`), which tells the device that
the caller waits on the signal next (`Device.queue_execute_awaited`): a device may then run work
that is ready now on the calling thread. The await itself stays, with its timeout, its deadline
and its errors; nothing else changes, since no other instruction runs between the two calls."""

from __future__ import annotations

from weir.format.vm_isa import Call, Const, Instruction

# The executes that have an awaited variant, and where their signal fence is.
_SIGNAL_ARGUMENT = {"hal.device.queue.execute": 2, "hal.device.queue.execute.indirect": 2}
_AWAIT = "hal.fence.await"
AWAITED = "awaited"


def variant_name(base: str) -> str:
    """The translated code's name for `base`'s awaited form: not a name any import can have
    (`#` is no part of an identifier), so it never clashes with the module's own imports."""
    return f"{base}#{AWAITED}"


def awaited_executes(instructions: tuple[Instruction, ...]) -> set[int]:
    """The positions in one block of the execute calls whose signal fence the next call awaits,
    alone, with only constants written between them (and not into the fence's register)."""
    found: set[int] = set()
    for i, ins in enumerate(instructions):
        if not isinstance(ins, Call) or ins.callee not in _SIGNAL_ARGUMENT or ins.dsts:
            continue
        signal = ins.args[_SIGNAL_ARGUMENT[ins.callee]]
        if not isinstance(signal, int):
            continue
        for later in instructions[i + 1:]:
            if isinstance(later, Const) and later.dst != signal:
                continue
            if isinstance(later, Call) and later.callee == _AWAIT and len(later.args) == 2 \
                    and later.args[1] == (signal,):
                found.add(i)
            break
    return found
