"""Gives the transients of each execute region one allocation (a slab) instead of one each, with
each transient at an offset chosen by its live range: transients whose commands never overlap
share bytes (IREE's `stream.resource.pack`).

Why: every allocation is a host call on every invocation; a region of a hundred dispatches had a
hundred. One slab per region is one call, and packing by live range keeps its size near the
most that is live at once rather than the sum.

Which transients: those with a size known at compile time that only this execute's commands use
(nothing on the host reads them, no other execute sees them). A transient's live range is the
span of phases that use it: the commands between two barriers may run at once (schedule-execution
puts barriers only where data flows), phases run in order, so two transients whose spans of
phases do not meet are never live together. Slots
are aligned to 64 bytes, as kernels assume of buffers."""

from __future__ import annotations

from collections.abc import Callable

from weir.compiler.host_control_flow import host_blocks_innermost_first
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.targets.element_types import dtype_name
from weir.dialects import stream
from weir.format.element_types import BY_NAME
from weir.ir.upstream import (
    arith,
    Attribute,
    Block,
    Builder,
    func,
    IndexType,
    InsertPoint,
    IntegerAttr,
    ModuleOp,
    Operation,
    SSAValue,
)

ALIGNMENT = 64


class PackTransients(Pass):
    flag = "pack-transients"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for fn in module.body.block.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                for block in host_blocks_innermost_first(fn.body.block):
                    for op in list(block.ops):
                        if isinstance(op, stream.CmdExecuteOp):
                            _pack(op, block)


def _static_size(alloca: stream.ResourceAllocaOp) -> int | None:
    size = alloca.size.owner
    if isinstance(size, stream.TensorSizeOfOp) and not size.dims:
        t = size.encoding
        return BY_NAME[dtype_name(t.element_type, size)].byte_size * t.element_count()
    if isinstance(size, arith.ConstantOp) and isinstance(size.value, IntegerAttr):
        return size.value.value.data
    return None


def _live_ranges(execute: stream.CmdExecuteOp) -> dict[SSAValue, tuple[int, int]]:
    """Spans of phases (the commands between two barriers, which may run at once)."""
    spans: dict[SSAValue, tuple[int, int]] = {}
    phase = 0
    for cmd in execute.body.block.ops:
        if isinstance(cmd, stream.CmdBarrierOp):
            phase += 1
            continue
        for v in cmd.operands:
            first, _ = spans.get(v, (phase, phase))
            spans[v] = (first, phase)
    return spans


def _candidates(execute: stream.CmdExecuteOp, block: Block,
                spans: dict[SSAValue, tuple[int, int]]) -> list[tuple[SSAValue, int]]:
    body = execute.body.block
    out: list[tuple[SSAValue, int]] = []
    for value in spans:
        alloca = value.owner
        if (not isinstance(alloca, stream.ResourceAllocaOp) or alloca.parent is not block
                or value.type != stream.ResourceType("transient")
                or alloca.await_timepoint is not None):
            continue
        size = _static_size(alloca)
        if size is None or any(use.operation.parent is not body for use in value.uses):
            continue
        out.append((value, size))
    return out


# The orders `_offsets` tries, each placing transients first-fit: largest first; largest
# size x span first (a small transient live across the region placed before the short large
# ones keeps them from stacking above it: BERT's slab 3.5 -> 3.0 MiB, its live bound); longest
# span first; earliest first. Tried on the zoo, the best of them met every slab's bound where
# largest-first alone left BERT, GPT-2's prompt and step above theirs.
_ORDERS: tuple[Callable[[int, tuple[int, int]], tuple[int, ...]], ...] = (
    lambda size, span: (-size,),
    lambda size, span: (-size * (span[1] - span[0] + 1), -size),
    lambda size, span: (span[0] - span[1], -size),
    lambda size, span: (span[0], -size),
)


def _offsets(items: list[tuple[SSAValue, int]],
             spans: dict[SSAValue, tuple[int, int]]) -> tuple[dict[SSAValue, int], int]:
    """The smallest of the slabs `_first_fit` makes in each of `_ORDERS` (the first on ties)."""
    best: tuple[dict[SSAValue, int], int] | None = None
    for order in _ORDERS:
        placed = _first_fit(sorted(items, key=lambda it: order(it[1], spans[it[0]])), spans)
        if best is None or placed[1] < best[1]:
            best = placed
    assert best is not None
    return best


def _first_fit(items: list[tuple[SSAValue, int]],
               spans: dict[SSAValue, tuple[int, int]]) -> tuple[dict[SSAValue, int], int]:
    """In the order given, each at the lowest aligned offset clear of every placed transient
    whose live range meets its own."""
    placed: list[tuple[int, int]] = []  # offset, end
    # Which placed transients are live at each command: a transient meets those live at any
    # command of its own span, found without scanning every placed one (quadratic in a long
    # region's thousands of transients).
    live_at: dict[int, list[int]] = {}
    offsets: dict[SSAValue, int] = {}
    total = 0
    for value, size in items:
        first, last = spans[value]
        met = {j for t in range(first, last + 1) for j in live_at.get(t, ())}
        clashes = sorted(placed[j] for j in met)
        offset = 0
        for o, e in clashes:
            if offset + size <= o:
                break
            offset = max(offset, -(-e // ALIGNMENT) * ALIGNMENT)
        offsets[value] = offset
        for t in range(first, last + 1):
            live_at.setdefault(t, []).append(len(placed))
        placed.append((offset, offset + size))
        total = max(total, offset + size)
    return offsets, total


def _first_of(allocas: set[Operation], execute: stream.CmdExecuteOp) -> Operation:
    """The first of `allocas` in the block, found walking back from the execute they feed (not
    by numbering the block, which for every execute of a long block would be quadratic)."""
    first: Operation = execute
    remaining = len(allocas)
    op = execute.prev_op
    while remaining:
        assert op is not None
        if op in allocas:
            first = op
            remaining -= 1
        op = op.prev_op
    return first


def _pack(execute: stream.CmdExecuteOp, block: Block) -> None:
    spans = _live_ranges(execute)
    # Keyed by the printed affinity: the device attributes' own equality ignores the device.
    by_affinity: dict[str, list[tuple[SSAValue, int]]] = {}
    for value, size in _candidates(execute, block, spans):
        by_affinity.setdefault(str(value.owner.affinity), []).append((value, size))  # type: ignore[union-attr]
    for items in by_affinity.values():
        affinity = items[0][0].owner.affinity  # type: ignore[union-attr]
        if len(items) < 2:
            continue
        offsets, total = _offsets(items, spans)
        first_alloca = _first_of({v.owner for v, _ in items}, execute)  # type: ignore[misc]
        b = Builder(InsertPoint.before(first_alloca))  # type: ignore[arg-type]
        size = b.insert(arith.ConstantOp(IntegerAttr(max(total, 1), IndexType()))).result
        slab = b.insert(stream.ResourceAllocaOp.build(
            operands=[size, []],
            result_types=[stream.ResourceType("transient"), stream.TimepointType()],
            properties={"affinity": affinity} if affinity is not None else {}))
        at = Builder(InsertPoint.before(execute))
        for value, nbytes in items:
            alloca = value.owner
            assert isinstance(alloca, stream.ResourceAllocaOp)
            view = at.insert(stream.ResourceSubviewOp.build(
                operands=[slab.result,
                          at.insert(arith.ConstantOp(IntegerAttr(offsets[value],
                                                                 IndexType()))).result,
                          at.insert(arith.ConstantOp(IntegerAttr(nbytes, IndexType()))).result],
                result_types=[value.type]))
            value.replace_all_uses_with(view.result)
            alloca.result_timepoint.replace_all_uses_with(slab.result_timepoint)
            size_op = alloca.size.owner
            alloca.detach()
            alloca.erase()
            if isinstance(size_op, stream.TensorSizeOfOp | arith.ConstantOp) \
                    and not size_op.result.uses:
                size_op.detach()
                size_op.erase()
        for use in list(slab.result_timepoint.uses):
            join = use.operation
            if isinstance(join, stream.TimepointJoinOp):  # the slab once, not once per transient
                join.operands = list(dict.fromkeys(join.operands))
