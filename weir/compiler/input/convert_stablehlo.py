"""Writes the StableHLO ops weir reads (weir.dialects.stablehlo) as ops it compiles:

- stablehlo.slice becomes tensor.extract_slice (offsets = start, sizes = the result's, strides);
- stablehlo.reverse becomes a linalg.generic that reads each element from its mirrored position
  with tensor.extract (size - 1 - index along each reversed dimension): no linalg indexing map
  runs backwards."""

from __future__ import annotations

from weir.compiler.input.linalg_builders import generic, projection, size
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects.stablehlo import ReverseOp, SliceOp
from weir.ir.diagnostics import locate_created
from weir.ir.upstream import (
    arith,
    BlockArgument,
    Builder,
    EmptyOp,
    IndexType,
    InsertPoint,
    IntegerAttr,
    linalg,
    ModuleOp,
    SSAValue,
    tensor,
    TensorType,
)


class ConvertStablehlo(Pass):
    flag = "convert-stablehlo"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in [op for op in module.walk() if isinstance(op, SliceOp | ReverseOp)]:
            b = Builder(InsertPoint.before(op))
            new = _slice(b, op) if isinstance(op, SliceOp) else _reverse(b, op)
            locate_created(op)
            op.result.replace_all_uses_with(new)
            op.detach()
            op.erase()


def _slice(b: Builder, op: SliceOp) -> SSAValue:
    t = op.result.type
    assert isinstance(t, TensorType)
    return b.insert(tensor.ExtractSliceOp(op.operand, op.starts(), list(t.get_shape()),
                                          op.steps(), t)).results[0]


def _reverse(b: Builder, op: ReverseOp) -> SSAValue:
    t = op.result.type
    assert isinstance(t, TensorType)
    rank = t.get_num_dims()
    sizes = [size(b, op.operand, d) for d in range(rank)]
    index = IndexType()

    def const(bb: Builder, v: int) -> SSAValue:
        return bb.insert(arith.ConstantOp(IntegerAttr(v, index))).result
    # The last index of each reversed dimension, on the host (a dynamic one from tensor.dim).
    last: dict[int, SSAValue | int] = {}
    for d in op.dims():
        s = sizes[d]
        last[d] = s - 1 if isinstance(s, int) else \
            b.insert(arith.SubiOp(s, const(b, 1))).result
    init = b.insert(EmptyOp([s for s in sizes if isinstance(s, SSAValue)], t)).tensor

    def body(bb: Builder, args: tuple[BlockArgument, ...]) -> None:
        at: list[SSAValue] = []
        for d in range(rank):
            i = bb.insert(linalg.IndexOp(d)).result
            if d in last:
                end = last[d]
                i = bb.insert(arith.SubiOp(const(bb, end) if isinstance(end, int) else end,
                                           i)).result
            at.append(i)
        bb.insert(linalg.YieldOp(bb.insert(tensor.ExtractOp(op.operand, at, t.element_type))
                                 .result))
    return generic(b, [], [init], [projection(rank, range(rank))], (), rank, body).results[0]
