"""Which value types weir accepts as input. A type outside this set is a compile error at the op
(or function) that has it: without this check a `memref`, `vector` or `complex` argument compiled
into a module nobody could call, and a tensor of `f80` failed in the hal phase at no location."""

from __future__ import annotations

from weir.format.element_types import BY_NAME
from weir.ir.upstream import (
    AnyFloat,
    Attribute,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    TensorType,
)

SUPPORTED_ELEMENT_TYPES = ", ".join(BY_NAME)


def _is_supported_scalar(t: Attribute) -> bool:
    if isinstance(t, (Float16Type, BFloat16Type, Float32Type, Float64Type, IndexType)):
        return True
    if isinstance(t, AnyFloat):  # the small floats weir/format's table names (f8E4M3FN, ...)
        return t.name in BY_NAME
    return isinstance(t, IntegerType) and f"i{t.width.data}" in BY_NAME


def unsupported_type(t: Attribute) -> str | None:
    """Why `t` cannot be a value's type in weir's input, or None when it can: ranked tensors of
    the element types the runtime has, those scalars, and the types of weir's dialects
    (`!hal.fence`, `!hal.buffer_view`, ...), whose ops check them."""
    if isinstance(t, TensorType):
        element = t.get_element_type()
        if _is_supported_scalar(element):
            return None
        return (f"element type {element} of {t} is not supported (supported: "
                f"{SUPPORTED_ELEMENT_TYPES})")
    if _is_supported_scalar(t):
        return None
    if "." in t.name:  # a dialect's type: `hal.fence`, `hal.buffer_view`, ...
        return None
    what = "element type" if isinstance(t, IntegerType) or "float" in type(t).__name__.lower() \
        else "type"
    return (f"{what} {t} is not supported: weir compiles ranked tensors and scalars of "
            f"{SUPPORTED_ELEMENT_TYPES}")
