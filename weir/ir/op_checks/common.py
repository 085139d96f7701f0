"""Small readers shared by the op checks: shapes that may be absent, constant indices."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue


def ranked(t: Attribute) -> tuple[int, ...] | None:
    """The shape of a ranked tensor type, or None for any other type (whose op's own
    constraints then report it)."""
    return tuple(t.get_shape()) if isinstance(t, TensorType) else None


def element(t: Attribute) -> Attribute:
    return t.get_element_type() if isinstance(t, TensorType) else t


def is_dynamic(size: int) -> bool:
    return size == DYNAMIC_INDEX


def show(sizes: tuple[int, ...] | list[int]) -> str:
    """Sizes as MLIR writes them, `?` for a dynamic one."""
    return "[" + ", ".join("?" if is_dynamic(s) else str(s) for s in sizes) + "]"


def constant_int(value: SSAValue) -> int | None:
    """The value of an `arith.constant` integer or index, None when `value` is anything else
    (a function argument, a computed value): only constants can be checked before running."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None
