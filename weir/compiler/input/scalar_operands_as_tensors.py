"""Gives each scalar input of a `linalg.generic` (`ins(%t, %zp : tensor<3x5xi32>, i32)` with the
map `(d0, d1) -> ()`) as a 0-d tensor made by `tensor.from_elements`: the targets read a
generic's inputs from tensors only, and a 0-d tensor under the same empty map is a broadcast
they already compile. IREE's quantized-matmul tests and `linalg.quantized_matmul` (whose zero
points are scalars) need it."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.ir.upstream import Builder, InsertPoint, linalg, ModuleOp, tensor, TensorType


class ScalarOperandsAsTensors(Pass):
    flag = "scalar-operands-as-tensors"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in [op for op in module.walk() if isinstance(op, linalg.GenericOp)]:
            for i, value in enumerate(list(op.inputs)):
                if isinstance(value.type, TensorType):
                    continue
                made = Builder(InsertPoint.before(op)).insert(tensor.FromElementsOp(
                    value, result_type=TensorType(value.type, [])))
                made.location = op.location
                op.operands[i] = made.result
