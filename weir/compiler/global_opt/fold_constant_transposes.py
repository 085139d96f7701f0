"""Evaluates `linalg.transpose` of a constant at compile time.

Why: exporters state a linear layer as `x @ transpose(W)` with W a constant (PyTorch's
`nn.Linear`, ONNX's `Gemm` with transB). Left as it is, every call transposes every weight
again, inside the matmul's dispatch, before it can multiply: for a 1024x1024 layer that is a
4 MB copy per call, more than the matmul itself at small batch. The transposed weight is as
constant as the weight, so it is computed once here and stored in the module in the layout the
matmul reads. A constant behind `util.optimization_barrier` is not a constant to this pass (the
transpose then reads the barrier's result), so tests that want the run-time transpose keep it."""

from __future__ import annotations

import numpy as np

from weir.compiler.constant_data import constant_array
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.ir import constants_of
from weir.ir.upstream import (
    arith,
    Builder,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    InsertPoint,
    linalg,
    ModuleOp,
    TensorType,
)

_FOLDED = (DenseIntOrFPElementsAttr, DenseResourceAttr)


class FoldConstantTransposes(Pass):
    flag = "fold-constant-transposes"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        constants = constants_of(module)
        for op in list(module.walk()):
            if not isinstance(op, linalg.TransposeOp) or len(op.res) != 1:
                continue
            source = op.inputs[0].owner
            if not isinstance(source, arith.ConstantOp) or not isinstance(source.value, _FOLDED):
                continue
            result_type = op.res[0].type
            if not isinstance(result_type, TensorType):
                continue
            array = constant_array(source.value, source, constants)
            permuted = np.ascontiguousarray(array.transpose(op.permutation.get_values()))
            name = constants.add(permuted.tobytes(), _hint(source.value))
            folded = Builder(InsertPoint.before(op)).insert(
                arith.ConstantOp(DenseResourceAttr.from_params(name, result_type), result_type))
            op.res[0].replace_all_uses_with(folded.result)
            op.detach()
            op.erase()
            if not source.result.uses:
                source.detach()
                source.erase()


def _hint(value: DenseIntOrFPElementsAttr | DenseResourceAttr) -> str:
    if isinstance(value, DenseResourceAttr):
        return f"{value.resource_handle.data}_transposed"
    return "transposed"
