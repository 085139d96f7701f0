"""Turns `util.unfoldable_constant` into an `arith.constant` the compiler cannot fold.

Why a resource: a tensor constant written as `dense<...>` is fair game for later passes (a splat
is cloned into every dispatch that reads it, where the kernel sees a literal). A test that wants
an op to run on data the compiler does not know gets a `dense_resource` instead: its bytes go
to the module's constant store, the value becomes a rodata buffer at run time and reaches the
dispatch as a binding like any input. Scalars become plain constants; weir folds no scalar
arithmetic, so they stay computed where they are used."""

from __future__ import annotations

import numpy as np

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.compiler.targets.element_types import dtype_name
from weir.dialects.util import UnfoldableConstantOp
from weir.format.element_types import BY_NAME
from weir.ir import constants_of
from weir.ir.constants import ConstantStore
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    arith,
    Attribute,
    Builder,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    InsertPoint,
    IntegerAttr,
    ModuleOp,
    TensorType,
)


class LowerUnfoldableConstants(Pass):
    flag = "lower-unfoldable-constants"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        constants = constants_of(module)
        for op in list(module.walk()):
            if isinstance(op, UnfoldableConstantOp):
                value = _runtime_value(op, constants)
                constant = Builder(InsertPoint.before(op)).insert(
                    arith.ConstantOp(value, op.result.type))  # type: ignore[arg-type]
                op.result.replace_all_uses_with(constant.result)
                op.detach()
                op.erase()


def _runtime_value(op: UnfoldableConstantOp, constants: ConstantStore) -> Attribute:
    value = op.value
    if isinstance(value, IntegerAttr | FloatAttr | DenseResourceAttr):
        return value
    if not isinstance(value, DenseIntOrFPElementsAttr):
        raise error_at(op, f"util.unfoldable_constant of {value} is not supported")
    t = value.get_type()
    assert isinstance(t, TensorType)
    dtype = BY_NAME[dtype_name(t.element_type, op)].dtype
    values = value.get_values()
    count = t.element_count()
    if len(values) == 1 and count != 1:
        data = np.full(count, values[0], dtype=dtype)
    else:
        data = np.asarray(values, dtype=dtype)
    name = constants.add(data.tobytes(), "unfoldable")
    return DenseResourceAttr.from_params(name, t)
