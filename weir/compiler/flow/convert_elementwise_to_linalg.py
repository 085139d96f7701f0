"""Rewrites arith/math ops on tensors as `linalg.generic`, so every piece of tensor math has one
form that dispatch formation can fuse and targets can lower."""

from __future__ import annotations

from weir.compiler.input.supported_ops import ELEMENTWISE_OPS
from weir.compiler.pass_base import Pass
from weir.compiler.shapes import dynamic_dims
from weir.compiler.state import CompilationState
from weir.ir.upstream import (
    AffineMap,
    AffineMapAttr,
    Block,
    Builder,
    EmptyOp,
    InsertPoint,
    linalg,
    linalg_attrs,
    ModuleOp,
    Operation,
    Region,
    TensorType,
)


def _is_tensor_elementwise(op: Operation) -> bool:
    return op.name in ELEMENTWISE_OPS and any(isinstance(r.type, TensorType) for r in op.results)


class ConvertElementwiseToLinalg(Pass):
    flag = "convert-elementwise-to-linalg"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in [op for op in module.walk() if _is_tensor_elementwise(op)]:
            self._convert(op)

    def _convert(self, op: Operation) -> None:
        result_type = op.results[0].type
        assert isinstance(result_type, TensorType)
        rank = len(result_type.get_shape())
        b = Builder(InsertPoint.before(op))
        dims = dynamic_dims(op.operands[0], InsertPoint.before(op))
        init = b.insert(EmptyOp(dims, result_type))
        identity = AffineMapAttr(AffineMap.identity(rank))
        block = Block(arg_types=[
            *(v.type.element_type for v in op.operands),  # type: ignore[attr-defined]
            result_type.element_type,
        ])
        scalar = type(op).create(
            operands=block.args[: len(op.operands)],
            result_types=[result_type.element_type],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        block.add_op(scalar)
        block.add_op(linalg.YieldOp(scalar.results[0]))
        generic = b.insert(linalg.GenericOp(
            list(op.operands), [init.tensor], Region(block),
            [identity] * (len(op.operands) + 1),
            [linalg_attrs.IteratorTypeAttr.parallel()] * rank,
            [result_type],
        ))
        op.results[0].replace_all_uses_with(generic.results[0])
        op.detach()
        op.erase()
