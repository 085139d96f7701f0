"""Sizes a tensor type cannot have. MLIR's dimensions are 64-bit signed integers, and xDSL 0.74
parses any integer as one: `tensor<9223372036854775808xf32>` compiled, and a dimension of 2^64
failed in a later phase with no location. Every size weir computes from a type (element counts,
byte sizes, strides) is a 64-bit signed integer too, so a static tensor must also fit in one."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import FunctionType, IndexType, IntegerType, TensorType
from xdsl.ir import Attribute, Operation

from weir.ir.op_checks.common import is_dynamic

LARGEST = 2**63 - 1


def _element_bytes(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return max(1, -(-t.width.data // 8))
    if isinstance(t, IndexType):
        return 8
    bits = getattr(t, "bitwidth", None)
    return max(1, -(-bits // 8)) if isinstance(bits, int) else 1


def oversized(t: Attribute) -> str | None:
    """Why the tensor type `t` is too large to exist, or None."""
    if not isinstance(t, TensorType):
        return None
    static = [d for d in t.get_shape() if not is_dynamic(d)]
    for d in static:
        if d > LARGEST:
            return f"dimension {d} of {t} is larger than {LARGEST}, the largest a dimension can be"
    count = math.prod(static)
    size = count * _element_bytes(t.get_element_type())
    if size > LARGEST:
        return (f"{t} would hold {size} bytes, more than {LARGEST}, the largest size a tensor "
                "can have")
    return None


def _types_of(op: Operation) -> list[Attribute]:
    """The types `op` introduces: its results, its regions' arguments, a function's signature."""
    types = [r.type for r in op.results]
    types += [a.type for region in op.regions for block in region.blocks for a in block.args]
    function_type = op.properties.get("function_type")
    if isinstance(function_type, FunctionType):
        types += [*function_type.inputs.data, *function_type.outputs.data]
    return types


def check_type_sizes(op: Operation) -> str | None:
    """The first reason a type `op` introduces is too large, or None."""
    for t in _types_of(op):
        if (why := oversized(t)) is not None:
            return why
    return None
