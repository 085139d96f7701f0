"""Makes each `util.optimization_barrier` result an alias of its operand and erases the barrier.

Why at the end of the flow phase: the barrier's one job is to hide where a value comes from
from the passes that fold constants and fuse producers, and those are all done by then
(dispatch formation stopped at the barrier, so a constant behind one is read by its dispatch
as a binding, never cloned into it as a literal). From the stream phase on the barrier would
only be one more host op for every later phase to carry."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects.util import OptimizationBarrierOp
from weir.ir.upstream import ModuleOp


class DropOptimizationBarriers(Pass):
    flag = "drop-optimization-barriers"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        for op in list(module.walk()):
            if isinstance(op, OptimizationBarrierOp):
                for result, operand in zip(op.outputs, op.inputs, strict=True):
                    result.replace_all_uses_with(operand)
                op.detach()
                op.erase()
