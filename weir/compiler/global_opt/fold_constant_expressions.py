"""Evaluates at compile time the elementwise generics computed from constants alone (the
evaluator of constant_values.py: identity maps, a small set of float ops, at most
MAX_GENERIC_ELEMENTS elements) and stores their results as constants.

Why: exporters compute derived constants in the program. A batch norm that precedes its
convolution (DenseNet's BN-ReLU-conv layers), and so cannot be folded into it, states its
scale as `1 / sqrt(var + eps)`: generics over the running variance, a constant. Left alone they
join the dispatch that reads them and run for every element that reads the scale, a square
root and a division per element on every call, once per channel at best. Their values are the
same on every call, so they are computed once, here, in the element type the program states
(f32 math rounds as the target's would)."""

from __future__ import annotations

from weir.compiler.global_opt.constant_values import (
    constant_value,
    MAX_GENERIC_ELEMENTS,
    stored_constant,
)
from weir.compiler.global_opt.layout_transposes import replace_op
from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.ir import constants_of
from weir.ir.upstream import (
    arith,
    Builder,
    InsertPoint,
    linalg,
    ModuleOp,
    TensorType,
)


class FoldConstantExpressions(Pass):
    flag = "fold-constant-expressions"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        constants = constants_of(module)
        for op in list(module.walk()):
            if not isinstance(op, linalg.GenericOp) or op.parent is None or len(op.res) != 1:
                continue
            t = op.res[0].type
            if not isinstance(t, TensorType) or not t.has_static_shape() or \
                    t.element_count() > MAX_GENERIC_ELEMENTS or not op.inputs or \
                    not all(isinstance(v.owner, arith.ConstantOp) for v in op.inputs):
                continue
            value = constant_value(op.res[0], constants)
            if value is None:
                continue
            replace_op(op, stored_constant(Builder(InsertPoint.before(op)), constants, value, t,
                                           "folded"))
