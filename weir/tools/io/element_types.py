"""The element types the tools read and print, named as IREE names them (`f32`, `ui8`, `i1`).

One frozen registry maps a name to its numpy dtype so that every tool (input parsing, printing,
npy files, comparisons) agrees on what `bf16` or `i1` means; nothing else spells dtypes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import ml_dtypes
import numpy as np

from weir.errors import UsageError

ElementKind = Literal["bool", "int", "uint", "float"]


@dataclass(frozen=True)
class ElementType:
    """One element type: `name` as IREE prints it, the numpy dtype that stores it."""

    name: str
    dtype: np.dtype
    kind: ElementKind
    bits: int

    @property
    def is_float(self) -> bool:
        return self.kind == "float"


def _make(name: str, dtype: object, kind: ElementKind, bits: int) -> ElementType:
    return ElementType(name, np.dtype(dtype), kind, bits)  # type: ignore[call-overload]


ELEMENT_TYPES: tuple[ElementType, ...] = (
    _make("i1", np.bool_, "bool", 1),
    _make("i8", np.int8, "int", 8),
    _make("i16", np.int16, "int", 16),
    _make("i32", np.int32, "int", 32),
    _make("i64", np.int64, "int", 64),
    _make("ui8", np.uint8, "uint", 8),
    _make("ui16", np.uint16, "uint", 16),
    _make("ui32", np.uint32, "uint", 32),
    _make("ui64", np.uint64, "uint", 64),
    _make("f16", np.float16, "float", 16),
    _make("bf16", ml_dtypes.bfloat16, "float", 16),
    _make("f32", np.float32, "float", 32),
    _make("f64", np.float64, "float", 64),
)

_BY_NAME: dict[str, ElementType] = {t.name: t for t in ELEMENT_TYPES}
# IREE also spells explicitly signed integers `si8`..`si64` (npy files load as those); weir keeps
# one signed integer type per width, so they read as the signless ones.
_BY_NAME.update({"s" + t.name: t for t in ELEMENT_TYPES if t.kind == "int"})
_BY_DTYPE: dict[np.dtype, ElementType] = {t.dtype: t for t in ELEMENT_TYPES}

# The element type of each scalar calling-convention letter (`i` i32, `I` i64, `f` f32, `F` f64).
SCALAR_CCONV_TYPES: dict[str, ElementType] = {
    "i": _BY_NAME["i32"], "I": _BY_NAME["i64"], "f": _BY_NAME["f32"], "F": _BY_NAME["f64"],
}


def element_type_names() -> str:
    """The accepted names, for error messages."""
    return ", ".join(t.name for t in ELEMENT_TYPES)


def parse_element_type(text: str) -> ElementType:
    """`f32` -> the f32 element type; raises UsageError naming the accepted types otherwise."""
    found = _BY_NAME.get(text)
    if found is None:
        raise UsageError(f"unknown element type '{text}' (expected one of {element_type_names()})")
    return found


def element_type_of(dtype: np.dtype) -> ElementType:
    """The element type of a numpy dtype (byte order ignored); raises UsageError if weir has none."""
    found = _BY_DTYPE.get(dtype.newbyteorder("=") if dtype.byteorder not in "|=" else dtype)
    if found is None:
        raise UsageError(f"arrays of dtype '{dtype}' are not supported "
                         f"(element types: {element_type_names()})")
    return found
