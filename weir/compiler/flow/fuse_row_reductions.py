"""Joins dispatch regions that work row by row over the same rows into one region: a softmax's
maximum (with the exponentials it feeds) and its sum (with the division), or a layernorm's
mean, centred values, variance and normalisation.

form-dispatch-regions gives each reduction a region of its own, with its elementwise consumers
as an epilogue. When the next reduction reads that epilogue's result, the result is a full
tensor written to memory by one dispatch and read back by the next, though each of its rows
depends only on the same row of the first reduction. Joined, the region computes every row from
start to end while the row is in cache (a target computes each reduction per row, in order: the
llvm-cpu target's row_pipeline.py), and the tensor between them is never written.

A region qualifies when all its ops work on the same rows: the leading P dimensions of every
reduction (a generic, or a linalg.reduce of trailing dimensions) are parallel and make its
result (trailing unit dimensions may stay, as keepdim leaves them), every reduction has the same
row sizes, and every value computed from a reduction is read only at the row being computed (its
leading P dimensions indexed by the reading op's leading P loops). Ops that do not depend on a
reduction (loads of the inputs, elementwise math of them, reshapes, broadcasts of weights) may
read anything; a reshape or broadcast of a value computed from a reduction must keep its leading
P dimensions. A producer region joins its consumer only when the consumer is its only user, so
nothing else needs the tensor between them; shapes must be static. A region without reductions
of its own (the elementwise reader of a reduction's result and of values computed before it)
joins on the same terms, taking its producer's rows."""

from __future__ import annotations

from weir.compiler.host_control_flow import host_blocks_innermost_first
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import flow
from weir.ir.upstream import (
    AffineConstantExpr,
    AffineDimExpr,
    Block,
    ConstantOp,
    EmptyOp,
    func,
    linalg,
    linalg_attrs,
    ModuleOp,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)

# (number of row dimensions, their sizes)
Rows = tuple[int, tuple[int, ...]]

# Ops a row region may hold besides generics: what makes operands and reshapes them.
_INDEPENDENT_OPS: tuple[type[Operation], ...] = (
    linalg.FillOp, linalg.BroadcastOp, linalg.TransposeOp, EmptyOp, ConstantOp,
    tensor.ExpandShapeOp, tensor.CollapseShapeOp, tensor.ExtractSliceOp)


def _static_shape(value: SSAValue) -> tuple[int, ...] | None:
    t = value.type
    if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
        return None
    return tuple(t.get_shape())


def _reduction_rows(op: linalg.GenericOp | linalg.ReduceOp) -> Rows | None:
    """The rows of a reduction that computes one result per row: P leading parallel loops, the
    rest reduced, its result indexed by the P loops in order (then constant zeros)."""
    if isinstance(op, linalg.ReduceOp):
        shape = _static_shape(op.results[0])
        rank = len(op.input.type.get_shape())  # type: ignore[attr-defined]
        reduced = sorted(op.dimensions.get_values())  # type: ignore[arg-type]
        p = rank - len(reduced)
        if shape is None or len(op.results) != 1 or p == 0 or reduced != list(range(p, rank)):
            return None
        return p, shape
    kinds = [it.data for it in op.iterator_types]
    p = 0
    while p < len(kinds) and kinds[p] == linalg_attrs.IteratorType.PARALLEL:
        p += 1
    if p == 0 or p == len(kinds) or len(op.results) != 1 or \
            any(kd == linalg_attrs.IteratorType.PARALLEL for kd in kinds[p:]):
        return None
    written = op.indexing_maps.data[-1].data.results
    if len(written) < p or any(not (isinstance(e, AffineDimExpr) and e.position == i)
                               for i, e in enumerate(written[:p])) or \
            any(not (isinstance(e, AffineConstantExpr) and e.value == 0) for e in written[p:]):
        return None
    shape = _static_shape(op.results[0])
    return None if shape is None else (p, shape[:p])


def _reads_row(op: linalg.GenericOp, operand: int, rows: Rows) -> bool:
    """Operand `operand` of `op`, a value of the rows' shape, is read at the row of `op`'s
    leading loops (which are parallel)."""
    p, sizes = rows
    shape = _static_shape(op.operands[operand])
    kinds = [it.data for it in op.iterator_types]
    results = op.indexing_maps.data[operand].data.results
    return shape is not None and shape[:p] == sizes and len(results) >= p and \
        all(kd == linalg_attrs.IteratorType.PARALLEL for kd in kinds[:p]) and \
        all(isinstance(e, AffineDimExpr) and e.position == i for i, e in enumerate(results[:p]))


def _keeps_rows(before: SSAValue, after: SSAValue, rows: Rows | None) -> bool:
    """A reshape or broadcast from `before` to `after` keeps each element in its row: both
    static, their leading P sizes the rows' (row-major: the rest of each row moves within it)."""
    first, then = _static_shape(before), _static_shape(after)
    return rows is not None and first is not None and then is not None and \
        first[:rows[0]] == rows[1] and then[:rows[0]] == rows[1]


def region_rows(region: flow.DispatchRegionOp, seeded: frozenset[SSAValue] = frozenset(),
                rows: Rows | None = None) -> Rows | None:
    """The rows every op of `region` works on, when it holds reductions and qualifies; values of
    `seeded` (a producer's results, to see the two regions as one) count as computed from a
    reduction over `rows`."""
    dependent: set[SSAValue] = set(seeded)
    for op in region.body.block.ops:
        if isinstance(op, flow.ReturnOp):
            return rows if rows is not None and all(v in dependent for v in op.operands) \
                else None
        reads = [j for j, x in enumerate(op.operands) if x in dependent]
        if any(x in dependent for inner in op.walk() if inner is not op for x in inner.operands):
            return None  # read from a body (an extract) at an index of its own
        if isinstance(op, linalg.ReduceOp):
            own = _reduction_rows(op)
            if own is None or rows is not None and own != rows:
                return None
            rows = own
            dependent.update(op.results)
            continue
        if reads and isinstance(op, linalg.BroadcastOp):
            added = op.dimensions.get_values()  # type: ignore[union-attr]
            if not _keeps_rows(op.input, op.results[0], rows) or \
                    any(d < rows[0] for d in added):  # type: ignore[index]
                return None
            dependent.update(op.results)
            continue
        if isinstance(op, linalg.GenericOp):
            reduces = any(it.data != linalg_attrs.IteratorType.PARALLEL
                          for it in op.iterator_types)
            own = _reduction_rows(op) if reduces else None
            if reduces and (own is None or rows is not None and own != rows):
                return None
            rows = own or rows
            if reads or own is not None:
                if rows is None or not all(_reads_row(op, j, rows) for j in reads) or \
                        not _reads_row(op, len(op.operands) - 1, rows) and own is None:
                    return None
                dependent.update(op.results)
            continue
        if reads and isinstance(op, (tensor.ExpandShapeOp, tensor.CollapseShapeOp)):
            if not _keeps_rows(op.operands[0], op.results[0], rows):
                return None
            dependent.update(op.results)
            continue
        if reads or not (isinstance(op, _INDEPENDENT_OPS) or not op.regions and all(
                not isinstance(r.type, TensorType) for r in op.results)):
            return None
    return None


def _producer(region: flow.DispatchRegionOp,
              rows: Rows | None) -> tuple[flow.DispatchRegionOp, Rows] | None:
    """A region of the same block whose results only `region` reads, at the row it computes,
    and the rows the two share (`rows`, when `region` has reductions of its own)."""
    block = region.parent_block()
    owners = {x.owner: None for op in region.body.block.ops for x in op.operands}
    for owner in owners:  # each once, in the order region reads them
        if not isinstance(owner, flow.DispatchRegionOp) or owner.parent_block() is not block:
            continue
        theirs = region_rows(owner)
        if theirs is None or rows is not None and theirs != rows:
            continue
        if all(region.is_ancestor(use.operation) for r in owner.results for use in r.uses) and \
                region_rows(region, frozenset(owner.results), theirs) == theirs:
            return owner, theirs
    return None


def _join(producer: flow.DispatchRegionOp, region: flow.DispatchRegionOp) -> None:
    """Moves `producer`'s ops to the start of `region`, whose ops then read them directly."""
    body = region.body.block
    first = body.first_op
    assert first is not None
    ret = producer.body.block.last_op
    assert isinstance(ret, flow.ReturnOp)
    values = list(ret.operands)
    for op in list(producer.body.block.ops):
        if op is ret:
            continue
        op.detach()
        body.insert_op_before(op, first)
    for old, new in zip(producer.results, values, strict=True):
        old.replace_all_uses_with(new)
    producer.detach()
    producer.erase()


class FuseRowReductions(Pass):
    flag = "fuse-row-reductions"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for fn in module.body.block.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                for block in fn.body.blocks:
                    for inner in host_blocks_innermost_first(block):
                        self._fuse(inner)

    def _fuse(self, block: Block) -> None:
        joined: set[Operation] = set()
        for region in reversed([op for op in block.ops
                                if isinstance(op, flow.DispatchRegionOp)]):
            if region in joined:
                continue
            rows = region_rows(region)
            found = _producer(region, rows)
            while found is not None:
                producer, rows = found
                _join(producer, region)
                joined.add(producer)
                found = _producer(region, rows)
