"""Merges the execute regions of a block into as few as the data allows: an execute that depends
on the one before it on the same device (its await reaches that execute's timepoint, directly or
through joins) joins it, with a barrier between the command sequences only where data flows, as
long as the host does nothing between them that needs the first one's results (IREE's stream
partitioning, in its serial form). An execute that depends on several open ones (a fan-in)
takes them all.

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
before it, and the joins between the two that used the earlier timepoint move after it.

The block is scanned once to decide the groups, and each group is built once at the end, every
command moved once: merging one execute at a time into the next would move the growing body and
rebuild the growing join of waits at each step, quadratic in a model's hundreds of dispatches."""

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
                carried = _loop_timepoints_are_own_work(fn)
                for block in host_blocks_innermost_first(fn.body.block):
                    _schedule_block(block, carried)


def _loop_timepoints_are_own_work(fn: func.FuncOp) -> bool:
    """Whether a timepoint a loop carries (a block argument) can only stand for executes of
    the function's one device: no fence comes from outside (imports) and every execute has the
    same affinity and async region."""
    keys = set()
    for op in fn.walk():
        if isinstance(op, stream.TimepointImportOp):
            return False
        if isinstance(op, stream.CmdExecuteOp):
            keys.add(_group(op))
    return len(keys) <= 1


class _Group:
    """Executes that merge into one (the last of them), in program order, and the values derived
    from their timepoints by the joins seen since the first."""

    __slots__ = ("key", "members", "derived", "joins", "joins_before_last")

    def __init__(self, execute: stream.CmdExecuteOp, key: tuple[str, Attribute | None]) -> None:
        self.key = key
        self.members = [execute]
        self.derived: set[SSAValue] = {execute.result_timepoint}
        self.joins: list[stream.TimepointJoinOp] = []
        self.joins_before_last = 0  # joins seen before the last member: they move after it

    @staticmethod
    def joined(reached: list[_Group], execute: stream.CmdExecuteOp,
               seen: dict[Operation, int]) -> _Group:
        """`reached` (open groups, in order) and `execute` as one group. One group (a chain) is
        extended in place, so a chain of merges costs what each adds; a fan-in takes the others
        into the largest one's set of derived values. `seen` numbers the block's ops."""
        group = reached[0]
        if len(reached) > 1:
            largest = max(reached, key=lambda g: len(g.derived))
            group = _Group(reached[0].members[0], reached[0].key)
            group.members = [m for g in reached for m in g.members]
            group.derived = largest.derived
            for g in reached:
                if g is not largest:
                    group.derived |= g.derived
            # A join of two groups' timepoints is in both lists: once each, in program order.
            joins = {j: None for g in reached for j in g.joins}
            group.joins = sorted(joins, key=seen.__getitem__)
        group.members.append(execute)
        group.derived.add(execute.result_timepoint)
        group.joins_before_last = len(group.joins)
        return group


def _schedule_block(block: Block, carried: bool) -> None:
    open_groups: list[_Group] = []
    merged: dict[int, _Group] = {}  # by id: groups of several executes, not taken into another
    seen: dict[Operation, int] = {}
    for op in list(block.ops):
        seen[op] = len(seen)
        if isinstance(op, stream.CmdExecuteOp):
            key = _group(op)
            reached = [g for g in open_groups if g.key == key and (
                op.await_timepoint in g.derived or _reaches(op.await_timepoint, g.derived))]
            if reached and _only_host_ready_waits(op, reached, block, carried):
                for g in reached:
                    open_groups.remove(g)
                    merged.pop(id(g), None)
                group = _Group.joined(reached, op, seen)
                merged[id(group)] = group
            else:
                group = _Group(op, key)
            _close_users(op, open_groups, keep=reached)
            open_groups.append(group)
        elif isinstance(op, stream.TimepointJoinOp):
            for g in open_groups:
                if any(t in g.derived for t in op.timepoints):
                    g.derived.add(op.result)
                    g.joins.append(op)
        elif isinstance(op, _HOST_ONLY) or _is_host_scalar(op):
            _close_users(op, open_groups, keep=[])
        else:
            open_groups.clear()
    for group in merged.values():
        _merge(group)
    _erase_dead_joins(block)


def _group(op: stream.CmdExecuteOp) -> tuple[str, Attribute | None]:
    """Executes merge only on the same device and from the same async.execute region (or
    none): regions are the concurrency a program asks for, so each keeps its submissions. The
    affinity is compared as printed: the device attributes' own equality ignores the device."""
    return str(op.affinity), op.attributes.get(REGION_ATTR)


def _reaches(timepoint: SSAValue | None, derived: set[SSAValue]) -> bool:
    return any(t in derived for t in _leaves(timepoint))


def _only_host_ready_waits(op: stream.CmdExecuteOp, merged: list[_Group], block: Block,
                           carried: bool) -> bool:
    """Whether everything `op` waits for, beyond the executes merging into it, is ready as soon
    as the host gets there or was submitted before the block began: merging must not hold their
    work back behind something else, such as another device's work, a fence from outside, or
    an independent execute of the same block (which could run beside them). Allowed: an
    allocation; an execute of the same device and region from an enclosing block (a loop
    body's executes wait for the work before the loop: without this, a loop's body kept one
    submission per dispatch, 9 per step of an ONNX LSTM); any timepoint from before the block
    (the loop's own, a previous loop's results) when the function's timepoints are all its one
    device's work (`carried`)."""
    key = _group(op)
    for t in _leaves(op.await_timepoint):
        if any(t in s.derived for s in merged):
            continue
        owner = t.owner
        if isinstance(owner, stream.ResourceAllocaOp):
            continue
        # A block argument is carried by a loop (or a branch); a function's own arguments come
        # from its caller, whatever they are.
        carried_in = owner is block and not isinstance(block.parent_op(), func.FuncOp)
        outside = carried_in or (isinstance(owner, Operation) and
                                 owner.parent_block() is not block)
        if outside and (carried or (isinstance(owner, stream.CmdExecuteOp) and
                                    _group(owner) == key)):
            continue
        return False
    return True


def _is_host_scalar(op: Operation) -> bool:
    """Arithmetic on host scalars (sizes, offsets): no regions, no timepoints or resources."""
    return (op.dialect_name() == "arith" and not op.regions
            and not any(isinstance(v.type, (stream.TimepointType, stream.ResourceType))
                        for v in (*op.operands, *op.results))) or isinstance(op, arith.ConstantOp)


def _close_users(op: Operation, open_groups: list[_Group], keep: list[_Group]) -> None:
    """An op that uses an open execute's timepoint (other than the execute that just merged it)
    pins that execute where it is: nothing may join it any more."""
    open_groups[:] = [g for g in open_groups
                      if g in keep or not any(v in g.derived for v in op.operands)]


def _leaves(timepoint: SSAValue | None) -> list[SSAValue]:
    """The timepoints a (possibly joined) timepoint stands for."""
    if timepoint is None:
        return []
    out: dict[SSAValue, None] = {}  # ordered, and a constant-time test for repeats
    stack = [timepoint]
    while stack:
        t = stack.pop()
        owner = t.owner
        if isinstance(owner, stream.TimepointJoinOp):
            stack.extend(reversed(owner.timepoints))
        elif not isinstance(owner, stream.TimepointImmediateOp):
            out.setdefault(t)
    return list(out)


def _merge(group: _Group) -> None:
    """The last member becomes the execute of the group: each member's commands in order, with
    a barrier before a member that depends on one since the previous barrier, awaiting
    everything they awaited of anything else."""
    *earlier, last = group.members
    results = {m.result_timepoint for m in group.members}
    waits: dict[SSAValue, None] = {}
    for member in group.members:
        for t in _leaves(member.await_timepoint):
            if t not in results:
                waits.setdefault(t)
    b = Builder(InsertPoint.before(last))
    if len(waits) > 1:
        new_await: SSAValue | None = b.insert(stream.TimepointJoinOp.build(
            operands=[list(waits)], result_types=[stream.TimepointType()])).result
    else:
        new_await = next(iter(waits), None)
    last.operands = [new_await] if new_await is not None else []

    body = last.body.block
    anchor = body.first_op

    def put(cmd: Operation) -> None:
        body.insert_op_before(cmd, anchor) if anchor is not None else body.add_op(cmd)

    phase = _Phase()
    for member in earlier:
        if phase.needs_barrier(member):
            put(stream.CmdBarrierOp.build())
        for cmd in list(member.body.block.ops):
            cmd.detach()
            put(cmd)
    if phase.needs_barrier(last):
        put(stream.CmdBarrierOp.build())
    for member in earlier:
        member.result_timepoint.replace_all_uses_with(last.result_timepoint)
        member.detach()
        member.erase()
    # Joins between the first and the last that used an earlier timepoint now use the merged
    # one: they go after it, in order; those left without users go away.
    after: Operation = last
    for join in group.joins[:group.joins_before_last]:
        if join.parent is None:
            continue
        join.detach()
        if join.result.uses:
            after.parent.insert_op_after(join, after)  # type: ignore[union-attr]
            after = join
        else:
            join.erase()


class _Phase:
    """The resources read and written since the last barrier of a merged execute: a member
    needs a barrier before it only if it touches what the phase writes or writes what the phase
    reads. Members without one between them may run at once (the HAL's barrier semantics), which
    is what lets a device spread independent small dispatches over its threads.

    Resources are told apart by value: at this point every resource is its own allocation
    (pack-transients runs later and places transients by these phases, not by command order).
    A member with a command this does not know (or a barrier of its own) gets a barrier before
    it and one after it."""

    __slots__ = ("reads", "writes", "opaque", "first")

    def __init__(self) -> None:
        self.reads: set[SSAValue] = set()
        self.writes: set[SSAValue] = set()
        self.opaque = False
        self.first = True

    def needs_barrier(self, member: stream.CmdExecuteOp) -> bool:
        accesses = _accesses(member)
        if self.first:
            need = False
            self.first = False
        elif accesses is None or self.opaque:
            need = True
        else:
            reads, writes = accesses
            need = bool((reads | writes) & self.writes or writes & self.reads)
        if need:
            self.reads, self.writes = set(), set()
        self.opaque = accesses is None
        if accesses is not None:
            self.reads |= accesses[0]
            self.writes |= accesses[1]
        return need


def _accesses(member: stream.CmdExecuteOp) -> tuple[set[SSAValue], set[SSAValue]] | None:
    """What the member's commands read and write; None if one is not a dispatch or a copy."""
    reads: set[SSAValue] = set()
    writes: set[SSAValue] = set()
    for cmd in member.body.block.ops:
        if isinstance(cmd, stream.CmdDispatchOp):
            for r, access in zip(cmd.resources, cmd.access.data):
                if access.data != "wo":
                    reads.add(r)
                if access.data != "ro":
                    writes.add(r)
        elif isinstance(cmd, stream.CmdCopyOp):
            reads.add(cmd.source)
            writes.add(cmd.target)
        else:
            return None
    return reads, writes


def _erase_dead_joins(block: Block) -> None:
    """Joins that only fed a merged execute's old await are left without users."""
    for op in reversed(list(block.ops)):
        if isinstance(op, stream.TimepointJoinOp) and not op.result.uses:
            op.detach()
            op.erase()
