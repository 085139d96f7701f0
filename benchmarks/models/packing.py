"""How well the stream phase packed a program's transients (weir/compiler/stream/
pack_transients.py), read back from the program at the end of the stream phase (the compiler's
`dump_phases_to` file): each execute region's transients live in one slab, each a
`stream.resource.subview` of it at a constant offset and size.

Three sums over the slabs: the slabs' bytes, the transients' own bytes (what one allocation each
would take) and the live bound (for each slab the most bytes its transients hold at any one
command of the region, each transient live from the first command that uses it to the last).
The packing is sound when bound <= slab <= transients: never more than one allocation each, and
no slab can be smaller than what is live at once."""

from __future__ import annotations

from dataclasses import dataclass

from weir.dialects import stream
from weir.ir.parse import parse_module
from weir.ir.upstream import arith, IntegerAttr, Operation, SSAValue


@dataclass(frozen=True)
class Packing:
    slab_bytes: int
    transient_bytes: int
    live_bound_bytes: int
    slabs: int


def _constant(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return int(op.value.value.data)
    return None


def _live_bound(sizes: dict[SSAValue, int]) -> int:
    """The most bytes of `sizes`' transients that any one command of their execute uses or
    holds live between its uses."""
    spans: dict[SSAValue, tuple[int, int]] = {}
    executes = {use.operation.parent_op() for v in sizes for use in v.uses}
    for execute in executes:
        if not isinstance(execute, stream.CmdExecuteOp):
            continue
        for index, cmd in enumerate(execute.body.block.ops):
            for v in cmd.operands:
                if v in sizes:
                    first, _ = spans.get(v, (index, index))
                    spans[v] = (first, index)
    if not spans:
        return 0
    end = max(last for _, last in spans.values()) + 1
    live = [0] * end
    for v, (first, last) in spans.items():
        for t in range(first, last + 1):
            live[t] += sizes[v]
    return max(live)


def packing_of(stream_mlir: str, filename: str = "stream.mlir") -> Packing:
    """The slabs of a program at the end of the stream phase (its printed MLIR)."""
    module = parse_module(stream_mlir, filename)
    slab_bytes = transient_bytes = bound = slabs = 0
    op: Operation
    for op in module.walk():
        if not isinstance(op, stream.ResourceAllocaOp):
            continue
        views = [u.operation for u in op.results[0].uses
                 if isinstance(u.operation, stream.ResourceSubviewOp)]
        size = _constant(op.size)
        if not views or size is None:
            continue
        sizes = {}
        for view in views:
            nbytes = _constant(view.operands[2])
            if nbytes is None:
                raise ValueError(f"a subview of a transient slab has no constant size: {view}")
            sizes[view.results[0]] = nbytes
        slabs += 1
        slab_bytes += size
        transient_bytes += sum(sizes.values())
        bound += _live_bound(sizes)
    return Packing(slab_bytes, transient_bytes, bound, slabs)
