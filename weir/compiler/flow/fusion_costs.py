"""What fusing an op into a dispatch region costs when the fused op is computed again for
each element of the region's root (form_dispatch_regions.py fuses elementwise producers by
recomputing them where they are read)."""

from __future__ import annotations

from weir.ir.upstream import (
    arith,
    linalg,
    linalg_attrs,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)

# An elementwise generic with at least this many times fewer elements than a region's root, and
# work of its own, is materialised once rather than recomputed for every element of the root
# (`recomputed_per_broadcast`).
BROADCAST_RECOMPUTE = 64


def is_reduction(op: Operation) -> bool:
    return isinstance(op, linalg.ReduceOp) or isinstance(op, linalg.GenericOp) and any(
        it.data != linalg_attrs.IteratorType.PARALLEL for it in op.iterator_types)


def elements(value: SSAValue) -> int | None:
    t = value.type
    return t.element_count() if isinstance(t, TensorType) and t.has_static_shape() else None


def recomputed_per_broadcast(producer: Operation, root: Operation) -> bool:
    """Whether elementwise `producer`, fused into `root`'s region, would be computed again for
    each element of a broadcast BROADCAST_RECOMPUTE times its size, with work of its own: two
    ops or more of its body and the generics it reads counted. Such a producer is left out and
    materialised once at its own size. An exporter's attention mask (compares, selects and a
    gather on 128 and 512 elements) cost 3.1-3.5 ms per layer, recomputed for every one of the
    262144 attention scores of BERT exported through ONNX. An iota (a generic reading nothing)
    and values computed from a reduction (a layernorm's statistics per row, which the row
    pipelines compute with their rows) stay fused: materialised, they cost GPT-2 4-9%."""
    if not isinstance(producer, linalg.GenericOp) or not producer.inputs or not root.results:
        return False
    small, large = elements(producer.results[0]), elements(root.results[0])
    if small is None or large is None or small * BROADCAST_RECOMPUTE > large or \
            _from_reduction(producer):
        return False
    work = sum(1 for op in producer.body.block.ops
               if not isinstance(op, linalg.YieldOp | arith.ConstantOp))
    work += sum(1 for v in producer.operands if isinstance(v.owner, linalg.GenericOp))
    return work >= 2


def _from_reduction(op: Operation, depth: int = 0) -> bool:
    """Whether `op` reads a reduction's result, directly or through elementwise ops and
    reshapes (a few levels deep: statistics are near the reduction that makes them)."""
    for v in op.operands:
        owner = v.owner
        if not isinstance(owner, Operation):
            continue
        if is_reduction(owner):
            return True
        if depth < 8 and isinstance(owner, linalg.GenericOp | linalg.BroadcastOp |
                                    tensor.ExpandShapeOp | tensor.CollapseShapeOp) and \
                _from_reduction(owner, depth + 1):
            return True
    return False
