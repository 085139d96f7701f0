"""Drops `flow.tensor.tie_shape`: it names the values of a tensor's dynamic sizes for IREE's
passes, and weir finds those values itself (weir/compiler/shapes.py), so the tensor is used as
it is."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects.flow import TensorTieShapeOp
from weir.ir.upstream import ModuleOp


class DropTieShapes(Pass):
    flag = "drop-tie-shapes"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in [op for op in module.walk() if isinstance(op, TensorTieShapeOp)]:
            op.result.replace_all_uses_with(op.operand)
            op.detach()
            op.erase()
