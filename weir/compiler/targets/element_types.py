"""MLIR element types by the names the module file uses (`f32`, `i1`, `bf16`, ...)."""

from __future__ import annotations

from weir.format.element_types import BY_NAME
from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
    AnyFloat,
    Attribute,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Operation,
)


def dtype_name(t: Attribute, where: Operation) -> str:
    """The name of `t` in weir/format's element-type table, which decides what is supported."""
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float64Type):
        return "f64"
    if isinstance(t, Float16Type):
        return "f16"
    if isinstance(t, BFloat16Type):
        return "bf16"
    if isinstance(t, IndexType):
        return "index"
    if isinstance(t, IntegerType) and f"i{t.width.data}" in BY_NAME:
        return f"i{t.width.data}"
    if isinstance(t, AnyFloat) and t.name in BY_NAME:  # the small floats: f8E4M3FN, f4E2M1FN, ...
        return t.name
    raise error_at(where, f"element type {t} is not supported")
