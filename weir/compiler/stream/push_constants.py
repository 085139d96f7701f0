"""How a host scalar becomes a push constant. Push constants are 64-bit slots (`index` on the
host); a dispatch reads slot k back as a scalar of the type it captured (the kernel
description's `push` op: the slot's low bits, as many as the type has). So the host puts the value
in the low bits: integers sign-extended (any extension would do, the kernel truncates), floats as
their bits."""

from __future__ import annotations

from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    arith,
    BFloat16Type,
    Builder,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Operation,
    SSAValue,
)

_FLOAT_WIDTHS = {Float16Type: 16, BFloat16Type: 16, Float32Type: 32, Float64Type: 64}


def encode_push_constant(value: SSAValue, user: Operation, b: Builder) -> SSAValue:
    """`value` (index, iN, or a float) as the index-typed push constant that carries it."""
    t = value.type
    if isinstance(t, IndexType):
        return value
    width = _FLOAT_WIDTHS.get(type(t))
    if width is not None:
        value = b.insert(arith.BitcastOp(value, IntegerType(width))).result
    elif isinstance(t, IntegerType):
        width = t.width.data
    else:
        raise error_at(user, f"a host value of type {t} cannot be passed to a dispatch")
    if width < 64:
        value = b.insert(arith.ExtSIOp(value, IntegerType(64))).result
    return b.insert(arith.IndexCastOp(value, IndexType())).result
