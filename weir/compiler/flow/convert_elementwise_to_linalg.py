"""Rewrites arith/math ops on tensors as `linalg.generic`, so every piece of tensor math has one
form that dispatch formation can fuse and targets can lower. An op with several results (the
extended additions and multiplications) becomes a generic with one output per result; a scalar
operand (the i1 condition of a select between whole tensors) is used inside the body as it is."""

from __future__ import annotations

from weir.compiler.input.supported_ops import COMPOUND_OPS, ELEMENTWISE_OPS
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
    return (op.name in ELEMENTWISE_OPS or op.name in COMPOUND_OPS) and \
        any(isinstance(r.type, TensorType) for r in op.results)


class ConvertElementwiseToLinalg(Pass):
    flag = "convert-elementwise-to-linalg"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in [op for op in module.walk() if _is_tensor_elementwise(op)]:
            self._convert(op)

    def _convert(self, op: Operation) -> None:
        result_types = [r.type for r in op.results]
        assert all(isinstance(t, TensorType) for t in result_types)
        rank = len(result_types[0].get_shape())  # type: ignore[attr-defined]
        tensors = [v for v in op.operands if isinstance(v.type, TensorType)]
        b = Builder(InsertPoint.before(op))
        dims = dynamic_dims(tensors[0], InsertPoint.before(op))
        inits = [b.insert(EmptyOp(dims, t)).tensor for t in result_types]
        identity = AffineMapAttr(AffineMap.identity(rank))
        block = Block(arg_types=[
            *(v.type.element_type for v in tensors),  # type: ignore[attr-defined]
            *(t.element_type for t in result_types),  # type: ignore[attr-defined]
        ])
        args = iter(block.args)
        scalar = type(op).create(
            operands=[next(args) if isinstance(v.type, TensorType) else v for v in op.operands],
            result_types=[t.element_type for t in result_types],  # type: ignore[attr-defined]
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        block.add_op(scalar)
        block.add_op(linalg.YieldOp(*scalar.results))
        generic = b.insert(linalg.GenericOp(
            tensors, inits, Region(block),
            [identity] * (len(tensors) + len(inits)),
            [linalg_attrs.IteratorTypeAttr.parallel()] * rank,
            result_types,
        ))
        for old, new in zip(op.results, generic.results):
            old.replace_all_uses_with(new)
        op.detach()
        op.erase()
