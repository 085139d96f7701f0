"""`--iree-opt-strip-assertions`: removes the `cf.assert` ops inside linalg op bodies (the code
that becomes dispatches), with the scalar ops that only computed their conditions. Exporters
put them there (torch-mlir checks batch-norm variances and embedding indices element by
element); kept, each is a run-time check that fails its dispatch with the assert's message (on
every target); stripped, the kernels skip the work. Off by default, as in IREE (its default optimisation level keeps
assertions). Host asserts are not touched: they stay run-time checks."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.ir.upstream import ModuleOp, Operation, cf

# Scalar ops with no effect but their results: erased once an erased assert leaves them unused.
_PURE_DIALECTS = ("arith.", "math.")


def in_dispatch_body(op: Operation) -> bool:
    """Whether `op` sits in the body of a linalg op, i.e. runs per element inside a dispatch."""
    parent = op.parent_op()
    while parent is not None:
        if parent.name.startswith("linalg."):
            return True
        parent = parent.parent_op()
    return False


class StripAssertions(Pass):
    flag = "strip-assertions"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        if not state.options.strip_assertions:
            return
        asserts = [op for op in module.walk()
                   if isinstance(op, cf.AssertOp) and in_dispatch_body(op)]
        for op in asserts:
            condition = op.arg.owner
            op.detach()
            op.erase()
            _erase_if_dead(condition)


def _erase_if_dead(op: object) -> None:
    """Erases `op`, then its operands' producers, while each is a pure scalar op left unused."""
    if not isinstance(op, Operation) or not op.name.startswith(_PURE_DIALECTS):
        return
    if any(result.uses for result in op.results):
        return
    producers = [operand.owner for operand in op.operands]
    op.detach()
    op.erase()
    for producer in producers:
        _erase_if_dead(producer)
