"""How a host scalar becomes a push constant. Push constants are 64-bit slots (`index` on the
host); a dispatch reads slot k back as a scalar of the type it captured (the kernel
description's `push` op: the slot's low bits, as many as the type has). So the host puts the value
in the low bits: integers sign-extended (any extension would do, the kernel truncates), floats as
their bits."""

from __future__ import annotations

from weir.compiler.targets.element_types import dtype_name
from weir.format.element_types import BY_NAME
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    arith,
    Builder,
    IndexType,
    IntegerType,
    Operation,
    SSAValue,
)


def encode_push_constant(value: SSAValue, user: Operation, b: Builder) -> SSAValue:
    """`value` (index, iN, or a float) as the index-typed push constant that carries it."""
    t = value.type
    if isinstance(t, IndexType):
        return value
    if isinstance(t, IntegerType):
        width = t.width.data
    else:
        element = BY_NAME.get(dtype_name(t, user))
        if element is None or not element.is_float:
            raise error_at(user, f"a host value of type {t} cannot be passed to a dispatch")
        width = element.bits
        value = b.insert(arith.BitcastOp(value, IntegerType(width))).result
    if width < 64:
        value = b.insert(arith.ExtSIOp(value, IntegerType(64))).result
    return b.insert(arith.IndexCastOp(value, IndexType())).result
