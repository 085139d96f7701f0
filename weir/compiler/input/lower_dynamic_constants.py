"""Turns `flow.tensor.dynamic_constant` into a constant of its static type, a `tensor.cast` to
the dynamic type and a `util.optimization_barrier` on the cast.

Why the barrier: a cast of a constant is something a pass may look through (and fold the static
shape back in); behind the barrier, every op that reads the value is compiled for the dynamic
type it was written with, and its sizes are read off the value at run time, which is the point
of such a constant: tests of the dynamic-shape paths of ops with known data."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects.flow import TensorDynamicConstantOp
from weir.dialects.util import OptimizationBarrierOp
from weir.ir.upstream import (
    arith,
    Builder,
    DenseIntOrFPElementsAttr,
    InsertPoint,
    ModuleOp,
    tensor,
)


class LowerDynamicConstants(Pass):
    flag = "lower-dynamic-constants"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.walk()):
            if isinstance(op, TensorDynamicConstantOp):
                value = op.value
                static = value.get_type() if isinstance(value, DenseIntOrFPElementsAttr) \
                    else value.type  # type: ignore[attr-defined]
                b = Builder(InsertPoint.before(op))
                constant = b.insert(arith.ConstantOp(value, static))  # type: ignore[arg-type]
                cast = b.insert(tensor.CastOp(constant.result, op.result.type))
                barrier = b.insert(OptimizationBarrierOp.build(
                    operands=[[cast.results[0]]], result_types=[[op.result.type]]))
                for new in (constant, cast, barrier):
                    new.location = op.location  # errors about them point at the constant
                op.result.replace_all_uses_with(barrier.results[0])
                op.detach()
                op.erase()
