"""MLIR element type names <-> numpy dtypes. One table, so the runtime, the reference kernels and
the tools agree on how `i1`, `bf16` or `index` are laid out in memory (i1 is one byte, a bool)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from weir.errors import InputError

ELEMENT_TYPES: dict[str, np.dtype] = {
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    # `index` is 64-bit on every host weir targets.
    "index": np.dtype(np.int64),
}

# Reverse table; `index` is deliberately absent so int64 arrays come back as i64.
_FROM_NUMPY: dict[np.dtype, str] = {dt: name for name, dt in ELEMENT_TYPES.items() if name != "index"}


def numpy_dtype(element_type: str) -> np.dtype:
    try:
        return ELEMENT_TYPES[element_type]
    except KeyError:
        raise InputError(f"unknown element type '{element_type}' (known: "
                         f"{', '.join(sorted(ELEMENT_TYPES))})") from None


def element_type_of(dtype: np.dtype) -> str:
    try:
        return _FROM_NUMPY[np.dtype(dtype)]
    except KeyError:
        raise InputError(f"numpy dtype {np.dtype(dtype)} has no MLIR element type") from None


def element_size(element_type: str) -> int:
    return numpy_dtype(element_type).itemsize
