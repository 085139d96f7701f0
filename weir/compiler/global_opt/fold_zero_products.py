"""Replaces a matrix product by its accumulator where one factor is a constant zero and the
other a constant with only finite elements.

Why: exporters unroll a recurrent network's first step with the initial state as a constant
zero (PyTorch's LSTM and GRU start from `h0 = zeros`), so the first step of every layer
multiplies zeros by the recurrent weight: a dispatch reading a whole weight matrix (1 MiB for
an LSTM of 256 units) to add nothing. Exact in IEEE arithmetic under the conditions checked:
each product is zero times a finite number, a zero, and adding zeros to an accumulator holding
no negative zero leaves it unchanged (only -0 + +0 would change, to +0). A non-finite weight
(0 * inf is NaN) or an accumulator that is not a known constant fill keeps the product."""

from __future__ import annotations

import numpy as np

from weir.compiler.global_opt.constant_values import constant_value, fill_value
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import linalg_ext
from weir.ir import ConstantStore, constants_of
from weir.ir.upstream import linalg, ModuleOp, Operation, SSAValue

# Every named product `C += A * B` with two inputs and one accumulator.
_PRODUCTS: tuple[type[Operation], ...] = (
    linalg.MatmulOp, linalg_ext.MatmulOp, linalg_ext.BatchMatmulOp,
    linalg_ext.MatmulTransposeAOp, linalg_ext.MatmulTransposeBOp,
    linalg_ext.BatchMatmulTransposeAOp, linalg_ext.BatchMatmulTransposeBOp,
)


class FoldZeroProducts(Pass):
    flag = "fold-zero-products"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        constants = constants_of(module)
        for op in list(module.walk()):
            if isinstance(op, _PRODUCTS) and len(op.operands) == 3 and len(op.results) == 1 \
                    and _adds_nothing(op.operands[0], op.operands[1], constants) \
                    and _holds_no_negative_zero(op.operands[2], constants):
                op.results[0].replace_all_uses_with(op.operands[2])
                op.detach()
                op.erase()


def _adds_nothing(lhs: SSAValue, rhs: SSAValue, constants: ConstantStore) -> bool:
    """One factor all zeros and the other all finite: every product is a zero."""
    left = constant_value(lhs, constants)
    if left is None:
        return False
    right = constant_value(rhs, constants)
    if right is None:
        return False
    return bool((not left.any() and np.isfinite(right).all()) or
                (not right.any() and np.isfinite(left).all()))


def _holds_no_negative_zero(init: SSAValue, constants: ConstantStore) -> bool:
    if isinstance(init.owner, linalg.FillOp):
        found = fill_value(init)
        return found is not None and not (found[1] == 0.0 and np.signbit(found[1]))
    array = constant_value(init, constants)
    return array is not None and not (np.signbit(array) & (array == 0)).any()
