"""MLIR element types by the names the module file uses (`f32`, `i1`, `bf16`, ...)."""

from __future__ import annotations

from weir.ir.diagnostics import error_at
from weir.ir.upstream import (
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
    if isinstance(t, IntegerType) and t.width.data in (1, 8, 16, 32, 64):
        return f"i{t.width.data}"
    raise error_at(where, f"element type {t} is not supported")

