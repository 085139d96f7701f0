"""Rewrites a `linalg.batch_matmul` whose right operand is one matrix broadcast over the batch as
a single `linalg.matmul` over the batch's rows stacked.

Why: exporters state `x @ W` for a 3-D `x` (a linear layer over every step of a sequence, as
PyTorch's LSTM computes its input projection) as a batch_matmul reading W broadcast to every
batch. Dispatched as written, the broadcast is a batch-times-larger copy of the weights made on
every call, and each batch is a small matmul of its own. The same product is one matmul of the
(B*M) x K rows by the K x N weights, reshaped back: the weights are read once, in place, and the
GEMM gets B times the rows to block over. Only static shapes, a plain batch_matmul (no
indexing_maps of its own), and a broadcast that only adds the batch dimension."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.tensor_shapes import reassociation
from weir.dialects import linalg_ext
from weir.ir.upstream import (
    Builder,
    EmptyOp,
    InsertPoint,
    linalg,
    ModuleOp,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)



class BatchMatmulToMatmul(Pass):
    flag = "batch-matmul-to-matmul"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.walk()):
            if isinstance(op, linalg_ext.BatchMatmulOp) and not op.has_explicit_maps():
                weights = _broadcast_matrix(op.inputs[1])
                if weights is not None and all(_static(v) for v in (*op.inputs, op.outputs[0])):
                    _rewrite(op, weights)


def _static(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and value.type.has_static_shape()


def _broadcast_matrix(value: SSAValue) -> SSAValue | None:
    """The K x N matrix that `value` (B x K x N) repeats for every batch, if it is one."""
    op = value.owner
    source: SSAValue | None = None
    if isinstance(op, linalg.BroadcastOp) and list(op.dimensions.get_values()) == [0]:
        source = op.input
    elif isinstance(op, linalg.GenericOp) and len(op.inputs) == 1 and len(op.outputs) == 1:
        in_map, out_map = (m.data for m in op.indexing_maps)
        body = list(op.body.block.ops)
        yields_input = len(body) == 1 and isinstance(body[0], linalg.YieldOp) and \
            list(body[0].operands) == [op.body.block.args[0]]
        if yields_input and str(in_map) == "(d0, d1, d2) -> (d1, d2)" and \
                str(out_map) == "(d0, d1, d2) -> (d0, d1, d2)":
            source = op.inputs[0]
    if source is None or not isinstance(source.type, TensorType) or source.type.get_shape() \
            != value.type.get_shape()[1:]:  # type: ignore[attr-defined]
        return None
    return source


def _rewrite(op: linalg_ext.BatchMatmulOp, weights: SSAValue) -> None:
    lhs, init = op.inputs[0], op.outputs[0]
    lhs_t, out_t = lhs.type, op.res[0].type
    assert isinstance(lhs_t, TensorType) and isinstance(out_t, TensorType)
    batch, m, k = lhs_t.get_shape()
    n = out_t.get_shape()[2]
    b = Builder(InsertPoint.before(op))
    stacked = (batch * m, k)
    rows = _collapse(b, lhs, TensorType(lhs_t.element_type, stacked))
    acc = _collapse(b, init, TensorType(out_t.element_type, (batch * m, n)))
    product = b.insert(linalg_ext.MatmulOp([rows, weights], [acc]))
    result = b.insert(tensor.ExpandShapeOp(
        product.results[0], [], reassociation([[0, 1], [2]]), [batch, m, n], out_t)).results[0]
    op.res[0].replace_all_uses_with(result)
    made_from = [op.inputs[1].owner, init.owner]
    op.detach()
    op.erase()
    _erase_unused(made_from)


def _erase_unused(ops: list[Operation | object]) -> None:
    """The broadcast and the fill the batch_matmul alone read, and the empty tensors they
    wrote into: left behind, each would become a dispatch of its own."""
    pending = [op for op in ops if isinstance(op, linalg.BroadcastOp | linalg.GenericOp |
                                              linalg.FillOp | EmptyOp)]
    while pending:
        op = pending.pop()
        if op.parent is None or any(r.uses for r in op.results):
            continue
        made_from = [o.owner for o in op.operands if isinstance(o.owner, EmptyOp)]
        op.detach()
        op.erase()
        pending.extend(made_from)


def _collapse(b: Builder, value: SSAValue, to: TensorType) -> SSAValue:
    """`value` (B x R x C) as (B*R) x C; an init made by a fill of an empty tensor is made again
    at the new shape, so nothing is reshaped that need not be."""
    fill = value.owner
    if isinstance(fill, linalg.FillOp) and isinstance(fill.outputs[0].owner, EmptyOp):
        empty = b.insert(EmptyOp([], to)).tensor
        return b.insert(linalg.FillOp((fill.inputs[0],), (empty,), (to,))).results[0]
    return b.insert(tensor.CollapseShapeOp.build(
        operands=[value], result_types=[to],
        properties={"reassociation": reassociation([[0, 1], [2]])})).results[0]
