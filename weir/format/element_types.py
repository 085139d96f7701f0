"""Element types by their MLIR names (`f32`, `i1`, `bf16`, `index`), with the numpy dtype that
stores them. The one table the compiler (sizes, constant bytes), the runtime (buffer views,
kernels) and the tools (inputs, printing, npy files) share, so they cannot disagree on a layout:
i1 is one byte (a bool), index is 64-bit. The 4-, 6- and 8-bit floats are ml_dtypes' (one byte
each, like i2/i4 below).

i2 and i4 are one byte per element too (ml_dtypes' int2/int4: the element's bits in the low bits
of its byte, the rest zero). IREE packs them (two i4 to a byte, the first in the low nibble), but
weir's buffers never let a program see a layout except through a bitcast between a sub-byte and
a byte-sized element type, and that bitcast packs and unpacks (input/lower_tensor_bitcasts.py),
so keeping them a byte each costs memory, not meaning, and lets every kernel index them as
bytes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import ml_dtypes
import numpy as np

ElementKind = Literal["bool", "int", "uint", "float"]


@dataclass(frozen=True)
class ElementType:
    name: str
    dtype: np.dtype
    kind: ElementKind
    bits: int

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def byte_size(self) -> int:
        return self.dtype.itemsize


def _make(name: str, dtype: object, kind: ElementKind, bits: int) -> ElementType:
    return ElementType(name, np.dtype(dtype), kind, bits)  # type: ignore[call-overload]


# Types a value can have at the ABI (arguments, results, npy files).
VALUE_TYPES: tuple[ElementType, ...] = (
    _make("i1", np.bool_, "bool", 1),
    _make("i2", ml_dtypes.int2, "int", 2),
    _make("i4", ml_dtypes.int4, "int", 4),
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
    # Small floats (storage types: programs compute in f32 and round to them, as IREE does).
    _make("f8E5M2", ml_dtypes.float8_e5m2, "float", 8),
    _make("f8E4M3", ml_dtypes.float8_e4m3, "float", 8),
    _make("f8E3M4", ml_dtypes.float8_e3m4, "float", 8),
    _make("f8E4M3FN", ml_dtypes.float8_e4m3fn, "float", 8),
    _make("f8E4M3FNUZ", ml_dtypes.float8_e4m3fnuz, "float", 8),
    _make("f8E5M2FNUZ", ml_dtypes.float8_e5m2fnuz, "float", 8),
    _make("f8E4M3B11FNUZ", ml_dtypes.float8_e4m3b11fnuz, "float", 8),
    _make("f6E2M3FN", ml_dtypes.float6_e2m3fn, "float", 6),
    _make("f6E3M2FN", ml_dtypes.float6_e3m2fn, "float", 6),
    _make("f4E2M1FN", ml_dtypes.float4_e2m1fn, "float", 4),
    _make("f8E8M0FNU", ml_dtypes.float8_e8m0fnu, "float", 8),
)
# `index` exists inside programs only; it is 64-bit on every host weir targets.
INDEX = _make("index", np.int64, "int", 64)

BY_NAME: dict[str, ElementType] = {t.name: t for t in (*VALUE_TYPES, INDEX)}
# Reverse lookup; `index` is deliberately absent so int64 arrays map to i64.
BY_DTYPE: dict[np.dtype, ElementType] = {t.dtype: t for t in VALUE_TYPES}
