"""The element types the tools read and print, named as IREE names them (`f32`, `ui8`, `i1`).

The table itself is weir/format's, shared with the compiler and the runtime; this adds the
spellings only tools accept (`si32`) and errors phrased for the command line.
"""

from __future__ import annotations

import numpy as np

from weir.errors import UsageError
from weir.format.element_types import BY_DTYPE, ElementType
from weir.format.element_types import VALUE_TYPES as ELEMENT_TYPES

__all__ = ["ELEMENT_TYPES", "SCALAR_CCONV_TYPES", "ElementType", "element_type_names",
           "element_type_of", "parse_element_type", "result_scalar_type", "scalar_type"]

_BY_NAME: dict[str, ElementType] = {t.name: t for t in ELEMENT_TYPES}
# IREE also spells explicitly signed integers `si8`..`si64` (npy files load as those); weir keeps
# one signed integer type per width, so they read as the signless ones.
_BY_NAME.update({"s" + t.name: t for t in ELEMENT_TYPES if t.kind == "int"})

# The element type of each scalar calling-convention letter (`i` i32, `I` i64, `f` f32, `F` f64).
SCALAR_CCONV_TYPES: dict[str, ElementType] = {
    "i": _BY_NAME["i32"], "I": _BY_NAME["i64"], "f": _BY_NAME["f32"], "F": _BY_NAME["f64"],
}


def scalar_type(kind: str | None) -> ElementType | None:
    """The element type of a scalar argument or result from its calling-convention letter (`i`
    i32, `I` i64, `f` f32, `F` f64) or the exact type its module declares (`i8`, `bf16`; `index`
    reads and prints as i64); None for a reference (`r`) or when unknown."""
    if kind is None:
        return None
    if kind in SCALAR_CCONV_TYPES:
        return SCALAR_CCONV_TYPES[kind]
    return _BY_NAME["i64"] if kind == "index" else _BY_NAME.get(kind)


def result_scalar_type(kind: str | None) -> ElementType | None:
    """A scalar result's type as iree-run-module prints and writes it: `scalar_type`, except
    that i1 is i32 (`result[0]: i32=1`): IREE's VM has no i1 register and returns an i1 in an
    i32 one, as it returns an index in an i64 one."""
    return _BY_NAME["i32"] if kind == "i1" else scalar_type(kind)


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
    found = BY_DTYPE.get(dtype.newbyteorder("=") if dtype.byteorder not in "|=" else dtype)
    if found is None:
        raise UsageError(f"arrays of dtype '{dtype}' are not supported "
                         f"(element types: {element_type_names()})")
    return found
