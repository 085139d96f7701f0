"""Merges the execute regions of a block into as few as the data allows: an execute that depends
on the one before it on the same device (its await reaches that execute's timepoint, directly or
through joins) joins it, with a barrier between the two command sequences, as long as the host
does nothing between them that needs the first one's results (IREE's stream partitioning, in its
serial form). An execute that depends on several open ones (a fan-in) takes them all.

Why: each execute becomes a command buffer, a fence and a queue submission on the host, for every
call. A model's hundreds of dependent dispatches between two host synchronisation points become
one command buffer submitted once, so the host cost per dispatch is one recorded command.

What may lie between the two executes: work the host does without waiting for the device
(sizes, allocations, constants, imports, host scalar arithmetic, joins of timepoints, executes on
other devices that do not wait for the first one). Anything that uses the first execute's
timepoint other than through a join (a host await, a transfer, an external chain, another
device's execute), and any op the pass does not know, ends the region: the second execute keeps
its own submission. Independent executes stay apart until something depends on both; executes
of different async.execute regions never merge (the regions are the concurrency the program asks
for), nor does an execute that also waits for something the host does not make ready itself
(another device's work, a fence from outside), which would hold the merged work back.

The merged execute takes the place of the later one: everything the earlier one read is defined
before it, and the joins between the two that used the earlier timepoint move after it."""

from __future__ import annotations

from weir.compiler.host_control_flow import host_blocks_innermost_first
from weir.compiler.pass_base import Pass
from weir.compiler.stream.async_regions import REGION_ATTR
from weir.compiler.state import CompilationState
from weir.dialects import stream
from weir.ir.upstream import (
    arith,
    Attribute,
    Block,
    Builder,
    func,
    InsertPoint,
    ModuleOp,
    Operation,
    SSAValue,
)

# Host work that never waits for the device: it may sit between two executes that merge.
_HOST_ONLY: tuple[type[Operation], ...] = (
    stream.TensorSizeOfOp, stream.ResourceAllocaOp, stream.ResourceConstantOp,
    stream.TensorImportOp, stream.TimepointImmediateOp, stream.TimepointImportOp,
)


class ScheduleExecution(Pass):
    flag = "schedule-execution"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for fn in module.body.block.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                for block in host_blocks_innermost_first(fn.body.block):
                    _schedule_block(block)


class _Open:
    """The last execute on a device that a later one may still join, and the values derived from
    its timepoint by the joins seen since."""

    __slots__ = ("execute", "derived", "joins")

    def __init__(self, execute: stream.CmdExecuteOp) -> None:
        self.execute = execute
        self.derived: set[SSAValue] = {execute.result_timepoint}
        self.joins: list[stream.TimepointJoinOp] = []


def _schedule_block(block: Block) -> None:
    open_executes: list[_Open] = []
    for op in list(block.ops):
        if isinstance(op, stream.CmdExecuteOp):
            key = _group(op)
            same = [s for s in open_executes if _group(s.execute) == key]
            reached = [s for s in same if op.await_timepoint in s.derived
                       or _reaches(op.await_timepoint, s.derived)]
            if reached and _only_host_ready_waits(op, reached):
                for state in reversed(reached):  # the latest first: program order in the body
                    _merge(state, op)
                    open_executes.remove(state)
            _close_users(op, open_executes, keep=reached)
            open_executes.append(_Open(op))
        elif isinstance(op, stream.TimepointJoinOp):
            for state in open_executes:
                if any(t in state.derived for t in op.timepoints):
                    state.derived.add(op.result)
                    state.joins.append(op)
        elif isinstance(op, _HOST_ONLY) or _is_host_scalar(op):
            _close_users(op, open_executes, keep=[])
        else:
            open_executes.clear()
    _erase_dead_joins(block)


def _group(op: stream.CmdExecuteOp) -> tuple[str, Attribute | None]:
    """Executes merge only on the same device and from the same async.execute region (or
    none): regions are the concurrency a program asks for, so each keeps its submissions. The
    affinity is compared as printed: the device attributes' own equality ignores the device."""
    return str(op.affinity), op.attributes.get(REGION_ATTR)


def _reaches(timepoint: SSAValue | None, derived: set[SSAValue]) -> bool:
    return any(t in derived for t in _leaves(timepoint))


def _only_host_ready_waits(op: stream.CmdExecuteOp, merged: list[_Open]) -> bool:
    """Whether everything `op` waits for, beyond the executes merging into it, is ready as soon
    as the host gets there (allocations): merging must not hold their work back behind
    something else, such as another device's work or a fence from outside."""
    for t in _leaves(op.await_timepoint):
        if any(t in s.derived for s in merged):
            continue
        if not isinstance(t.owner, stream.ResourceAllocaOp):
            return False
    return True


def _is_host_scalar(op: Operation) -> bool:
    """Arithmetic on host scalars (sizes, offsets): no regions, no timepoints or resources."""
    return (op.dialect_name() == "arith" and not op.regions
            and not any(isinstance(v.type, (stream.TimepointType, stream.ResourceType))
                        for v in (*op.operands, *op.results))) or isinstance(op, arith.ConstantOp)


def _close_users(op: Operation, open_executes: list[_Open], keep: list[_Open]) -> None:
    """An op that uses an open execute's timepoint (other than the execute that just merged it)
    pins that execute where it is: nothing may join it any more."""
    open_executes[:] = [s for s in open_executes
                        if s in keep or not any(v in s.derived for v in op.operands)]


def _leaves(timepoint: SSAValue | None) -> list[SSAValue]:
    """The timepoints a (possibly joined) timepoint stands for."""
    if timepoint is None:
        return []
    out: list[SSAValue] = []
    stack = [timepoint]
    while stack:
        t = stack.pop()
        owner = t.owner
        if isinstance(owner, stream.TimepointJoinOp):
            stack.extend(reversed(owner.timepoints))
        elif not isinstance(owner, stream.TimepointImmediateOp) and t not in out:
            out.append(t)
    return out


def _merge(earlier: _Open, later: stream.CmdExecuteOp) -> None:
    """`later` becomes the execute of both: `earlier`'s commands, a barrier, then its own."""
    first = earlier.execute
    waits = _leaves(first.await_timepoint)
    for t in _leaves(later.await_timepoint):
        if t not in earlier.derived and t not in waits:
            waits.append(t)
    b = Builder(InsertPoint.before(later))
    if len(waits) > 1:
        new_await: SSAValue | None = b.insert(stream.TimepointJoinOp.build(
            operands=[waits], result_types=[stream.TimepointType()])).result
    else:
        new_await = waits[0] if waits else None
    later.operands = [new_await] if new_await is not None else []

    body = later.body.block
    anchor = body.first_op
    for cmd in list(first.body.block.ops):
        cmd.detach()
        body.insert_op_before(cmd, anchor) if anchor is not None else body.add_op(cmd)
    barrier = stream.CmdBarrierOp.build()
    body.insert_op_before(barrier, anchor) if anchor is not None else body.add_op(barrier)

    first.result_timepoint.replace_all_uses_with(later.result_timepoint)
    first.detach()
    first.erase()
    # Joins between the two that used the earlier timepoint now use the merged one: they go
    # after it, in order; those left without users go away.
    after = later
    for join in earlier.joins:
        if join.parent is None:
            continue
        join.detach()
        if join.result.uses:
            after.parent.insert_op_after(join, after)  # type: ignore[union-attr]
            after = join
        else:
            join.erase()


def _erase_dead_joins(block: Block) -> None:
    """Joins that only fed a merged execute's old await are left without users."""
    for op in reversed(list(block.ops)):
        if isinstance(op, stream.TimepointJoinOp) and not op.result.uses:
            op.detach()
            op.erase()
